"""The tier an upstream tool's MCP annotations suggest, where the policy names none.

Annotations (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`)
are the upstream server's word about its own tool: hints, not guarantees. A server
that is wrong, or lying, must not buy its tool less oversight, so a hint only ever
raises the tier above the policy's `default_tier`, never lowers it, and never
exempts a call from review by itself. It goes with the call as its `risk`, which the
gate honours upward only. Where the policy names the tool's tier, the hint is not
sent at all: the policy speaks there.

Hints the server leaves out take the MCP spec's defaults (not read-only,
destructive, not idempotent, open world). A tool with no hint at all says nothing,
and the policy's `default_tier` (the operator's answer for a tool it knows nothing
about) applies as before.

    read-only (and not said destructive) -> the default tier (never lowered by a hint)
    not read-only, not destructive     -> the default tier
    destructive, closed world          -> at least medium
    destructive, open world            -> high
    idempotent                         -> no effect (it is about retries, not harm)
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.models import RiskTier
from bot.core.policy import TIER_ORDER

# Each hint as the MCP spec reads it when the server leaves it out.
SPEC_DEFAULTS = {"read_only": False, "destructive": True, "idempotent": False, "open_world": True}


@dataclass(frozen=True)
class Hints:
    """A tool's four annotations as the server gave them (None: left out)."""

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    @property
    def given(self) -> bool:
        return any(v is not None for v in vars(self).values())

    def effective(self, name: str) -> bool:
        value: bool | None = getattr(self, name)
        return SPEC_DEFAULTS[name] if value is None else value

    def words(self) -> str:
        """What the hints say, for `--print-policy` (spec defaults filled in)."""
        if not self.given:
            return "no annotations"
        said = [
            "read-only" if self.effective("read_only") else "writes",
            "destructive" if self.effective("destructive") else "not destructive",
            "idempotent" if self.effective("idempotent") else "not idempotent",
            "open world" if self.effective("open_world") else "closed world",
        ]
        return ", ".join(said)


def _at_least(tier: RiskTier, floor: RiskTier) -> RiskTier:
    return max(tier, floor, key=TIER_ORDER.index)


def hinted_tier(hints: Hints, default: RiskTier) -> RiskTier:
    """The tier the hints give a tool the policy names no tier for: never below `default`."""
    if not hints.given:
        return default
    # A tool said to be both read-only and destructive is taken at its worse word.
    if hints.effective("read_only") and hints.destructive is not True:
        return default
    if not hints.effective("destructive"):
        return default
    if hints.effective("open_world"):
        return _at_least(default, RiskTier.HIGH)
    return _at_least(default, RiskTier.MEDIUM)
