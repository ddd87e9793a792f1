"""One gate in front of every Web API call this process makes: Slack's rate limits kept,
not fought (issue 42).

Slack limits each method per app and workspace, in tiers, and `chat.postMessage` to about
one message a second per channel, with short bursts allowed. Past a limit it answers 429
with a `Retry-After` (seconds); an app that keeps calling inside that wait is what Slack
throttles harder. slack_sdk's retry handler waits per call only, so before this gate the
other lanes went on posting into a wait Slack had asked for.

So each call first passes `RateGate.enter(method, channel)`:

- a 429 closes the whole method until now + Retry-After: every later call of that method,
  in any channel, waits until then (whichever limit Slack meant, none is called into);
- a pacing bucket per method (its tier) and, for posts, per channel spaces the calls so
  that Slack rarely has to say 429 at all.

The gate lives in the process (serve is one process per workspace, as deployed): several
serve processes against one workspace each keep their own, see docs/production.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

Now = Callable[[], float]  # monotonic seconds
Sleep = Callable[[float], Awaitable[None]]

# Slack's per-channel limit is on posting: these are paced per channel as well as per method.
CHANNEL_METHODS = frozenset({"chat.postMessage", "chat.postEphemeral"})


@dataclass(frozen=True)
class Pace:
    """At most `per_s` calls a second on average, `burst` of them back to back."""

    per_s: float
    burst: int

    def scaled(self, factor: float) -> Pace:
        return Pace(self.per_s * factor, self.burst)


def _tier(per_min: int, burst: int) -> Pace:
    return Pace(per_min / 60, burst)


TIER_2 = _tier(20, 5)
TIER_3 = _tier(50, 10)
TIER_4 = _tier(100, 20)
# Slack's published tiers for the methods this bot calls; a method not listed is paced only
# by the 429s Slack sends. conversations.history/replies are far stricter for apps outside
# the Marketplace, which is why they run only on once.py's recovery path.
TIERS: Mapping[str, Pace] = {
    "chat.postMessage": _tier(300, 20),  # the workspace-wide cap above the per-channel one
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
    "users.lookupByEmail": TIER_3,
    "usergroups.users.list": TIER_2,
    "usergroups.list": TIER_2,
}


@dataclass(frozen=True)
class Limits:
    """What the gate paces to. `scaled(k)`: the same limits k times faster, for a test or
    a bench against an emulator whose clock is scaled the same way."""

    channel_post: Pace | None = Pace(1.0, 3)  # None, and no tiers: only Slack's 429s pace
    tiers: Mapping[str, Pace] = field(default_factory=lambda: dict(TIERS))
    retries: int = 3  # 429s one call waits out before its caller hears of it

    def scaled(self, factor: float) -> Limits:
        tiers = {m: p.scaled(factor) for m, p in self.tiers.items()}
        post = self.channel_post.scaled(factor) if self.channel_post else None
        return replace(self, channel_post=post, tiers=tiers)


SLACK_LIMITS = Limits()
# Another Web API (the emulator, a stand-in): its limits are unknown, so no pacing, but
# every 429 it sends is still waited out for the whole method.
UNPACED = Limits(channel_post=None, tiers={})


def limits_for(api_url: str) -> Limits:
    """Slack's published limits for Slack's own Web API; elsewhere only its 429s."""
    host = urlsplit(api_url).hostname or ""
    return SLACK_LIMITS if host == "slack.com" or host.endswith(".slack.com") else UNPACED


class _Bucket:
    """A pacing bucket kept as the time its next call is due (a generic cell rate):
    a call reserves a slot and learns how long to wait for it."""

    def __init__(self, pace: Pace) -> None:
        self.interval = 1.0 / pace.per_s
        self.slack = (max(pace.burst, 1) - 1) * self.interval
        self.due = 0.0

    def reserve(self, now: float) -> float:
        start = max(self.due, now)
        self.due = start + self.interval
        return max(start - self.slack - now, 0.0)

    def hold_until(self, until: float) -> None:
        # After a wait Slack asked for, one call goes at its end and the rest are paced:
        # a burst of everything queued meanwhile would earn the next 429.
        self.due = max(self.due, until + self.slack)


class RateGate:
    def __init__(
        self,
        limits: Limits = SLACK_LIMITS,
        *,
        now: Now = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.limits = limits
        self.now = now
        self.sleep = sleep
        self._closed: dict[str, float] = {}  # method -> monotonic time Slack lets it again
        self._buckets: dict[tuple[str, str], _Bucket] = {}
        self._aliases: dict[str, str] = {}  # "#name" -> channel id, learnt from answers
        self._turns: dict[str, asyncio.Lock] = {}  # channel -> one post in flight
        self.waits = 0  # calls that waited for a Retry-After to pass

    def _bucket(self, method: str, channel: str = "") -> _Bucket | None:
        key = (method, channel)
        found = self._buckets.get(key)
        if found is None:
            pace = self.limits.channel_post if channel else self.limits.tiers.get(method)
            if pace is None:
                return None
            found = self._buckets[key] = _Bucket(pace)
        return found

    def channel_key(self, channel: str | None) -> str:
        return self._aliases.get(channel or "", channel or "")

    def learn(self, channel: str | None, channel_id: object) -> None:
        """`channel` (as called) is `channel_id` (as Slack answered): one bucket and one
        turn for both, or a channel posted to by name and by id would get two bursts."""
        if not channel or not isinstance(channel_id, str) or channel in (channel_id, ""):
            return
        if self._aliases.get(channel) == channel_id:
            return
        self._aliases[channel] = channel_id
        for method in CHANNEL_METHODS:
            named = self._buckets.pop((method, channel), None)
            known = self._buckets.get((method, channel_id))
            if named is not None and (known is None or named.due > known.due):
                self._buckets[(method, channel_id)] = named
        self._turns.setdefault(channel_id, self._turns.pop(channel, asyncio.Lock()))

    @contextlib.asynccontextmanager
    async def turn(self, method: str, channel: str | None) -> AsyncIterator[None]:
        """Hold while a post to `channel` is in flight: one at a time per channel, in the
        order they came, so none is on its way when a 429 says wait (the others queue)."""
        if method not in CHANNEL_METHODS or not channel:
            yield
            return
        key = self.channel_key(channel)
        lock = self._turns.setdefault(key, asyncio.Lock())
        async with lock:
            yield

    def closed_for(self, method: str) -> float:
        """Seconds until Slack takes `method` again (0: open)."""
        return max(self._closed.get(method, 0.0) - self.now(), 0.0)

    def close(self, method: str, retry_after_s: float) -> None:
        """Slack answered 429 to `method`: nothing calls it before `retry_after_s` pass."""
        until = self.now() + max(retry_after_s, 0.0)
        if until > self._closed.get(method, 0.0):
            self._closed[method] = until
        for (m, _), bucket in self._buckets.items():
            if m == method:
                bucket.hold_until(until)

    async def enter(self, method: str, channel: str | None = None) -> None:
        """Return when a call of `method` (in `channel`, for posts) may go to Slack."""
        buckets = [self._bucket(method)]
        if method in CHANNEL_METHODS and channel:
            buckets.append(self._bucket(method, self.channel_key(channel)))
        while True:
            if (closed := self.closed_for(method)) > 0:
                self.waits += 1
                await self.sleep(closed)
                continue
            now = self.now()
            wait = max((b.reserve(now) for b in buckets if b is not None), default=0.0)
            if wait <= 0:
                return
            await self.sleep(wait)
            if self.closed_for(method) <= 0:
                return  # the slot reserved is ours; else a 429 came meanwhile: wait it out


def retry_after_s(headers: Mapping[str, object] | None) -> float:
    """Slack's `Retry-After` in seconds (1 when it is missing or unreadable)."""
    for key, value in (headers or {}).items():
        if key.lower() == "retry-after":
            raw = value[0] if isinstance(value, list | tuple) and value else value
            try:
                return max(float(str(raw)), 0.0)
            except ValueError:
                break
    return 1.0
