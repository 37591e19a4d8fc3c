"""Pure parsers of real node artifacts. Each returns frozen dataclasses of plain data
(``to_jsonable`` turns them into snapshot JSON) and raises ``InputError`` naming the file, field
and line of anything malformed, or ``ConfigRejected`` where the kubelet itself would refuse it."""
