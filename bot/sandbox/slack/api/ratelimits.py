"""Slack's rate limits, as Slack documents them, for the emulator's Web API (off by default).

    emu.ratelimits.turn_on()            # Slack's own figures
    emu.ratelimits.turn_on(scale=20)    # the same limits twenty times faster (a test's clock)

Each method has its tier (Tier 2 ~20 a minute, Tier 3 ~50, Tier 4 ~100, bursts allowed),
per app and workspace; `chat.postMessage` is special: about one message a second per
channel, short bursts allowed. A call past its limit answers HTTP 429, `{"ok": false,
"error": "ratelimited"}` and `Retry-After`: the seconds until the limit lets a call again,
rounded up as Slack does. Scaled, the wait is Slack's divided by the scale, so the header
carries a decimal ("0.05"), which real Slack never sends.

Every call is logged with its (monotonic) time, and every 429 with the wait it announced,
so a test can count the calls a client made inside a wait Slack asked for: `inside()`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from bot.sandbox.slack.workspace import Workspace

Now = Callable[[], float]

TIER_2, TIER_3, TIER_4 = 20, 50, 100  # calls a minute
TIERS: Mapping[str, int] = {
    "chat.update": TIER_3,
    "chat.delete": TIER_3,
    "chat.postEphemeral": TIER_4,
    "chat.getPermalink": TIER_4,
    "reactions.add": TIER_3,
    "views.open": TIER_4,
    "views.update": TIER_4,
    "views.publish": TIER_4,
    "conversations.info": TIER_3,
    "conversations.members": TIER_4,
    "conversations.list": TIER_2,
    "conversations.history": TIER_3,
    "conversations.replies": TIER_3,
    "users.info": TIER_4,
    "usergroups.list": TIER_2,
    "usergroups.users.list": TIER_2,
}
POST_PER_S = 1.0  # chat.postMessage, per channel
POST_BURST = 5


@dataclass(frozen=True)
class Window:
    """A wait Slack asked for: no call of `method` (in `channel`, when set) before `end`."""

    method: str
    channel: str | None
    start: float
    end: float

    def covers(self, call: Seen) -> bool:
        same = call.method == self.method and self.channel in (None, call.channel)
        return same and self.start < call.at < self.end


@dataclass(frozen=True)
class Seen:
    method: str
    channel: str | None
    at: float
    limited: bool


class _Bucket:
    def __init__(self, per_s: float, burst: int, now: float) -> None:
        self.per_s = per_s
        self.burst = float(burst)
        self.tokens = float(burst)
        self.at = now

    def take(self, now: float) -> float:
        """0 if a call may go now (and it takes its token), else the seconds to wait."""
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.per_s)
        self.at = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.per_s


class RateLimits:
    def __init__(self, channel_of: Callable[[str], str], now: Now = time.monotonic) -> None:
        self.channel_of = channel_of  # "#name" or id -> the channel's id
        self.now = now
        self.on = False
        self.scale = 1.0
        self.seen: list[Seen] = []
        self.windows: list[Window] = []
        self._buckets: dict[tuple[str, str | None], _Bucket] = {}

    def turn_on(self, *, scale: float = 1.0) -> None:
        """Enforce the limits from now on, `scale` times faster than Slack's."""
        self.on, self.scale = True, scale
        self._buckets.clear()

    def clear(self) -> None:
        self.on = False
        self.seen.clear()
        self.windows.clear()
        self._buckets.clear()

    def _bucket(self, method: str, channel: str | None, now: float) -> _Bucket | None:
        key = (method, channel)
        if key not in self._buckets:
            if channel is not None:
                per_s, burst = POST_PER_S, POST_BURST
            elif method in TIERS:
                per_s, burst = TIERS[method] / 60, TIERS[method]
            else:
                return None  # no tier known: unlimited here
            self._buckets[key] = _Bucket(per_s * self.scale, burst, now)
        return self._buckets[key]

    def check(self, method: str, args: Mapping[str, object]) -> float | None:
        """Log the call; the Retry-After to answer with if it is past a limit, else None."""
        if not self.on:
            return None
        now = self.now()
        channel = None
        if method == "chat.postMessage" and isinstance(args.get("channel"), str):
            channel = self.channel_of(str(args["channel"]))
        bucket = self._bucket(method, channel, now)
        wait = bucket.take(now) if bucket is not None else 0.0
        self.seen.append(Seen(method, channel, now, limited=wait > 0))
        if wait <= 0:
            return None
        retry_after = math.ceil(wait * self.scale) / self.scale  # whole Slack seconds
        self.windows.append(Window(method, channel, now, now + retry_after))
        return retry_after

    def inside(self) -> list[Seen]:
        """Calls made inside a wait announced earlier for their method (and channel)."""
        return [c for c in self.seen if any(w.covers(c) for w in self.windows)]

    def limited(self) -> int:
        """How many calls were answered 429."""
        return sum(1 for c in self.seen if c.limited)


def retry_after_header(seconds: float) -> str:
    """Whole seconds as Slack writes them; a scaled wait keeps its decimals."""
    if seconds == int(seconds):
        return str(int(seconds))
    return f"{seconds:.3f}".rstrip("0")


def channel_id_in(workspace: Workspace, ref: str) -> str:
    """The id of the channel `ref` names ("#name", bare name or id); else `ref` itself."""
    if ref in workspace.channels:
        return ref
    name = ref.removeprefix("#")
    return next((c.id for c in workspace.channels.values() if c.name == name), ref)
