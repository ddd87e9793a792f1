"""Path and query parameters of the `/v1` API; the bodies live in `bot.core.wire`.

The bodies are shared with the SDK (which checks them in direct mode too);
only what needs FastAPI is here.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query

from bot.core.wire import (
    RUN_ID,
    ApprovalIn,
    CancelIn,
    ClaimIn,
    FinishIn,
    Health,
    QuestionIn,
    ResultIn,
    RunIn,
    RunOut,
    SteerIn,
)

# A request or question id: what `bot.core.ids` mints, with room to spare.
ItemPath = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]
RunPath = Annotated[str, Path(min_length=1, max_length=128, pattern=RUN_ID)]
Wait = Annotated[
    float | None,
    Query(
        ge=0,
        allow_inf_nan=False,
        description="Seconds to hold the call open until a decision (long-poll); "
        "the server caps it (60 s by default).",
    ),
]

__all__ = [
    "ApprovalIn",
    "CancelIn",
    "ClaimIn",
    "FinishIn",
    "Health",
    "ItemPath",
    "QuestionIn",
    "ResultIn",
    "RunIn",
    "RunOut",
    "RunPath",
    "SteerIn",
    "Wait",
]
