"""The report stage: a notebook's parameters typed and checked before a kernel starts (``params``),
the run itself with its evidence folder and manifest (``runner``), values handed back from inside
the kernel (``glue``) and the HTML report (``html``)."""
