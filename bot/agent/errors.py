"""Errors of the agent side, under the project's one root.

HitlError
└── AgentError                 the agent side failed for good
    ├── ModelError             the model endpoint did not give a usable answer
    │   ├── ModelUnavailable   429/5xx/network, still failing after every retry
    │   ├── ModelRefused       a 4xx other than 429: the request itself is wrong
    │   └── MalformedResponse  a 2xx whose body is not a chat completion
    ├── InvalidArguments       a tool call's arguments do not fit its schema (to the model)
    ├── AgentNotFound          `module:object` does not name an agent
    └── LostClaim              another worker owns this run now; drop it quietly
"""

from __future__ import annotations

from bot.errors import HitlError


class AgentError(HitlError):
    """Root of the agent side's errors."""


class ModelError(AgentError):
    """The model endpoint did not give a usable answer."""


class ModelUnavailable(ModelError):
    """Rate limited, a server error or a network failure, on every try."""


class ModelRefused(ModelError):
    """The endpoint refused the request (a 4xx other than 429); retrying will not help."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


class MalformedResponse(ModelError):
    """A successful status whose body is not a chat completion this client can read."""


class InvalidArguments(AgentError):
    """The model's arguments do not fit the tool's schema; the text goes back to the model."""


class AgentNotFound(AgentError):
    """The configured agent does not resolve to an `Agent`."""


class LostClaim(AgentError):
    """Another worker executes or owns this run; this one must stop touching it."""
