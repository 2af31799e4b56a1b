"""Domain errors raised by services and selectors; the API maps each to a 4xx (DESIGN §5)."""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    status = 400
    code = "invalid"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.message = message
        self.details = details or {}


class NotFound(DomainError):
    status = 404
    code = "not_found"


class ConversationErased(NotFound):
    """The conversation was erased while this request or task was working on it (a 404: the
    erase wins against concurrent writers, see ``services.conversations.conversation_delete``)."""


class Conflict(DomainError):
    status = 409
    code = "conflict"


class TooLarge(DomainError):
    """A request body over what its endpoint accepts (413)."""

    status = 413
    code = "too_large"


class InvalidInput(DomainError):
    status = 400
    code = "invalid"
