"""The Python client of the gate: `Gate`, `require_approval`, and the outcomes they raise.

from bot.sdk import Gate, Rejected, require_approval

gate = Gate.from_env()

@require_approval(gate, risk="high")
async def transfer(account: str, amount: int) -> str: ...
"""

from bot.sdk.decorator import require_approval
from bot.sdk.errors import (
    ApiError,
    ApiUnavailable,
    Cancelled,
    Rejected,
    RunStopped,
    Steered,
    TimedOut,
    Unanswered,
)
from bot.sdk.gate import Gate

__all__ = [
    "ApiError",
    "ApiUnavailable",
    "Cancelled",
    "Gate",
    "Rejected",
    "RunStopped",
    "Steered",
    "TimedOut",
    "Unanswered",
    "require_approval",
]
