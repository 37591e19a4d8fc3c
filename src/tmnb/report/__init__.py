"""The page toolkit every report builds with: tables as a person reads them (``tables``), the answer
block a report opens with (``verdict``), values handed from a notebook's kernel to the run
(``glue``), the HTML page (``html``), where reports and a change's state live (``places``), and
typed IPython display and nbformat calls (``display``, ``ipynb``). It stands on the ground floor:
it imports no analysis, no source and no run machinery, so every room above can use it."""
