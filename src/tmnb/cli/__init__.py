"""The ``tmnb`` command line: ``main`` (the parser and the exit codes), one module per subcommand
family (``reports``: run, snapshot, demo; ``whatif``; ``sandbox``; ``rollout``; ``evidence``), the
demo (``demo``) and the run machinery every report goes through (``run``)."""
