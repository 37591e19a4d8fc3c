"""The published snapshot JSON Schema (docs/snapshot.schema.json) read by jsonschema: a check of a
snapshot file that does not go through the pydantic model that wrote it."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

SCHEMA_FILE = Path(__file__).resolve().parents[1] / "docs" / "snapshot.schema.json"


@cache
def published_schema() -> Draft202012Validator:
    published = json.loads(SCHEMA_FILE.read_text())
    Draft202012Validator.check_schema(published)
    return Draft202012Validator(published, format_checker=Draft202012Validator.FORMAT_CHECKER)


def schema_errors(document: Any) -> list[str]:
    """Every place the document breaks the published schema, as ``$.json.path: message``."""
    return [f"{error.json_path}: {error.message}" for error in published_schema().iter_errors(document)]
