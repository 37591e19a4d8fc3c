"""Pure parsers of real node artifacts. Each returns frozen dataclasses of plain data (the sources
turn them into snapshot objects) and raises ``InputError`` naming the file, field and line of
anything malformed, or ``ConfigRejected`` where the kubelet itself would refuse it."""
