"""API failures as the API server reports them: an HTTP code and a v1 Status body."""

from __future__ import annotations

from typing import Any

from tmnb.errors import TmnbError


class ApiError(TmnbError):
    """A request the sandbox API refuses; ``status()`` is the body a real API server sends (key order too)."""

    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        }
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body


def not_found(resource: str, name: str, group: str = "") -> ApiError:
    kind = f"{resource}.{group}" if group else resource
    return ApiError(404, "NotFound", f'{kind} "{name}" not found', {"name": name, "kind": resource})
