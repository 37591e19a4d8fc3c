"""The exit codes every ``tmnb`` subcommand shares, so a scheduler reads one table."""

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_ALERT, EXIT_TAMPERED, EXIT_PENDING = 0, 1, 2, 3, 4, 5
EXIT_SIGPIPE = 128 + 13  # what a shell reports for a writer killed by SIGPIPE
