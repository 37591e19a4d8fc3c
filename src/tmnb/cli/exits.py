"""The exit codes every ``tmnb`` subcommand shares, so a scheduler reads one table."""

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_ALERT, EXIT_TAMPERED, EXIT_PENDING = 0, 1, 2, 3, 4, 5
EXIT_INTERRUPTED = 130  # what a shell reports for a command stopped with Ctrl-C (SIGINT)
EXIT_SIGPIPE = 128 + 13  # what a shell reports for a writer killed by SIGPIPE

#: What each code means, as ``tmnb --help`` lists them.
MEANINGS = {
    EXIT_OK: "done, nothing to act on",
    EXIT_FAILED: "a run failed (a notebook cell raised, a collection broke)",
    EXIT_USAGE: "a usage error, reported in one line before anything runs",
    EXIT_ALERT: "the report raises an alert: blockers found, pods predicted to be refused, a node rolled back",
    EXIT_TAMPERED: "an evidence bundle is not what was packed (missing, extra or modified files)",
    EXIT_PENDING: "a rollout stopped cleanly at a gate not approved yet (execute mode)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
    EXIT_SIGPIPE: "the reader of the output went away (tmnb ... | head)",
}
