"""Plain JSON data: the type of a decoded JSON or YAML document."""

from __future__ import annotations

from typing import Any

#: A decoded JSON or YAML object: a Kubernetes API object, a journal record, a manifest. Its values
#: are ``Any`` on purpose: the document's shape is whatever the file or the API server sent, and it is
#: checked where it is read (``.get`` with a default, ``isinstance``), not promised by a type.
#: (Not ``tmnb.parse.gojson.JsonObject``, the dict subclass that also keeps duplicated keys.)
JsonDict = dict[str, Any]
