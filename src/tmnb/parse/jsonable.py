"""Turn parser results into plain JSON data for the snapshot.

Parsers return frozen dataclasses holding ``CPUSet``, ``Decimal`` and int-keyed dicts because those
are the natural types to compute with; the snapshot needs strings, numbers, lists and str-keyed maps.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from tmnb.cpuset import CPUSet

#: A decoded JSON or YAML object: a Kubernetes API object, a journal record, a manifest. Its values
#: are ``Any`` on purpose: the document's shape is whatever the file or the API server sent, and it is
#: checked where it is read (``.get`` with a default, ``isinstance``), not promised by a type.
#: (Not ``tmnb.parse.gojson.JsonObject``, the dict subclass that also keeps duplicated keys.)
JsonDict = dict[str, Any]


def to_jsonable(value: Any) -> Any:
    """Recursively convert: dataclass → dict, CPUSet → cpu-list string, Decimal → int or str,
    tuple/list/frozenset → list, mapping keys → str."""
    if isinstance(value, CPUSet):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return [to_jsonable(v) for v in sorted(value)]
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else str(value)
    return value
