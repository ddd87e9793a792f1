"""One process's wiring: settings, the policy, and the stores over one connection."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from bot.clock import Clock, wall_ms
from bot.config import Settings
from bot.core.policy import Policy, load_policy
from bot.db import messages as msg
from bot.db.connection import Client, connect
from bot.db.hub import close_hub
from bot.db.valkey.embedded import EmbeddedServer
from bot.db.valkey.embedded_watch import EmbeddedWatch
from bot.errors import ConfigError
from bot.gate.claims import ClaimCheck
from bot.signing import Signer, public_keys, require_public_keys, trusted_keys
from bot.store.archive import Archive
from bot.store.archive import read as read_archive
from bot.store.retire import Retention
from bot.store.run.run_signals import close_signals
from bot.store.stores import StoreSet


class Runtime(StoreSet):
    """The stores (`StoreSet`), and what this process runs them with."""

    def __init__(
        self,
        *,
        settings: Settings,
        redis: Client,
        server: EmbeddedServer | None,
        policy: Policy,
        clock: Clock = wall_ms,
        signer: Signer | None = None,
        shadow: Policy | None = None,
    ) -> None:
        super().__init__(redis, clock=clock, signer=signer)
        self.requests.shadow = shadow  # HITL_SHADOW_POLICY: judged, never enforced
        self.settings = settings
        self.server = server
        self.policy = policy
        self.signer = signer  # serve's key, which its `requests` store seals with
        # What this process's claims check approvals against (bot/gate/claims.py)
        self.claims = ClaimCheck(
            trusted_keys(settings, signer), policy, lambda: public_keys(settings), reread=True
        )

    def retention(self, signer: Signer) -> Retention:
        """Retention (bot/store/retire.py) sealing its segments with `signer` and checking
        the histories it archives against the keys executors trust."""
        trusted = self.claims.keys or signer.public()
        return Retention(
            self.requests.redis, signer, self.settings.archive_dir(), trusted.verify, self.clock
        )

    def archive(self, newest: str | None) -> Archive:
        """The archive as `audit` and `report` read it (bot/store/archive.py)."""
        where = self.settings.archive_dir()
        if newest is None and not where.is_dir():
            return Archive()  # retention never ran here: no key is needed to read nothing
        trusted = require_public_keys(self.claims.keys)
        return read_archive(self.settings.archive_dir(), trusted.verify, newest)


def load_shadow(settings: Settings) -> Policy | None:
    """The shadow policy (HITL_SHADOW_POLICY), or None. One that fails to load stops
    start-up: running without it would report "no disagreements" for a file never read."""
    if settings.hitl_shadow_policy is None:
        return None
    try:
        return load_policy(settings.hitl_shadow_policy, setting="HITL_SHADOW_POLICY")
    except ConfigError as exc:
        raise ConfigError(msg.SHADOW_UNREADABLE.format(problem=exc)) from None


@contextlib.asynccontextmanager
async def open_runtime(
    settings: Settings | None = None,
    *,
    clock: Clock = wall_ms,
    policy: Policy | None = None,
    signer: Signer | None = None,
) -> AsyncIterator[Runtime]:
    """Connect (starting the embedded Valkey if REDIS_URL is unset) and build the stores.

    `signer`: serve's key (serve alone passes it): the request store seals decisions.

    The policy is loaded before connecting, so a bad file stops start-up before
    anything else happens.
    """
    settings = settings or Settings.load()
    policy = policy or load_policy(settings.hitl_policy)
    shadow = load_shadow(settings)
    # The embedded server is joined before connecting: registered as a user (so it
    # outlives whoever started it while this process runs) and watched (so it is
    # started again if it dies). connect() then attaches to it.
    watch = None
    if settings.redis_url is None:
        watch = await EmbeddedWatch.open(settings.hitl_data_dir)
    try:
        redis, server = await connect(settings)
    except BaseException:
        if watch is not None:
            await watch.close()
        raise
    try:
        yield Runtime(
            settings=settings,
            redis=redis,
            server=watch.server if watch is not None else server,
            policy=policy,
            clock=clock,
            signer=signer,
            shadow=shadow,
        )
    finally:
        await close_hub(redis)
        await close_signals(redis)
        await redis.aclose()
        if watch is not None:
            await watch.close()  # stops the server only if no other hitl-bot process uses it
