"""A notebook run: its parameters typed against the parameters cell (``params``) and checked before
the notebook executes (``checks``), its kernel started at once (``kernel``, ``warmup``), papermill
executing it into a run folder with an HTML page and a manifest (``runner``)."""
