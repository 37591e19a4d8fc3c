"""Print the snapshot JSON Schema: ``python -m tmnb.snapshot.schema > docs/snapshot.schema.json``."""

import json

from tmnb.snapshot.io import json_schema

if __name__ == "__main__":
    print(json.dumps(json_schema(), indent=2))
