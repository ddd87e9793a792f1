"""`hitl-bot doctor`'s lines that need no Slack: the policy (as `policy check` loads it),
the signing key and its file mode, retention and its archive, the store (reachable,
persistence, replicas and HITL_REPLICA_ACKS), the workers' agents and the default agent."""

from __future__ import annotations

import os

from bot.cli import messages as msg
from bot.cli.doctor_lines import Line, fail, passed, warn
from bot.config import Settings
from bot.core.policy import Policy, load_policy
from bot.db.durability import FIX
from bot.errors import ConfigError, HitlError
from bot.gate.runtime import Runtime, open_runtime
from bot.signing.keys import KEY_FILE, load_signer


def policy_line(settings: Settings) -> tuple[Line, Policy | None]:
    source = str(settings.hitl_policy) if settings.hitl_policy else "(built-in default)"
    try:
        policy = load_policy(settings.hitl_policy)
    except HitlError as exc:
        text = msg.DOCTOR_POLICY_BAD.format(source=source, error=exc)
        return fail("policy", text, msg.DOCTOR_POLICY_FIX), None
    text = msg.DOCTOR_POLICY_OK.format(
        source=source, tiers=len(policy.tiers), tools=len(policy.tools)
    )
    return passed("policy", text), policy


def key_line(settings: Settings) -> Line:
    """serve's key as serve would load it, without making one (doctor changes nothing)."""
    try:
        signer = load_signer(settings, create=False)
    except ConfigError as exc:
        path = settings.hitl_data_dir / KEY_FILE
        if settings.hitl_signing_key is None and not path.exists():
            return warn("signing key", msg.DOCTOR_KEY_NONE.format(error=exc))
        return fail("signing key", msg.DOCTOR_KEY_BAD.format(error=exc))
    if settings.hitl_signing_key is not None:
        return passed("signing key", msg.DOCTOR_KEY_ENV.format(key_id=signer.key_id))
    path = settings.hitl_data_dir / KEY_FILE
    return passed("signing key", msg.DOCTOR_KEY_FILE.format(path=path, key_id=signer.key_id))


def retention_line(settings: Settings) -> Line:
    """Retention as serve would run it: on, and able to write its archive (looked at, not
    written: doctor changes nothing)."""
    if settings.retention_ms() is None:
        return warn("retention", msg.DOCTOR_RETENTION_OFF, msg.DOCTOR_RETENTION_OFF_FIX)
    where = settings.archive_dir()
    probe = where if where.exists() else next((p for p in where.parents if p.exists()), where)
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        text = msg.DOCTOR_RETENTION_UNWRITABLE.format(path=where)
        return warn("retention", text, msg.DOCTOR_RETENTION_UNWRITABLE_FIX)
    segments = len(list(where.glob("segment-*.jsonl"))) if where.is_dir() else 0
    text = msg.DOCTOR_RETENTION_OK.format(
        period=settings.hitl_retention, path=where, segments=segments
    )
    return passed("retention", text)


async def _persistence_lines(rt: Runtime) -> list[Line]:
    if rt.server is not None:  # the embedded Valkey: configured by hitl-bot itself
        return [passed("persistence", msg.DOCTOR_PERSIST_OK)]
    found, error = await rt.unsafe_settings()
    if error is not None:
        text = msg.DOCTOR_PERSIST_UNREAD.format(error=error)
        return [warn("persistence", text, msg.DOCTOR_PERSIST_UNREAD_FIX)]
    lines = [
        fail("persistence", msg.DOCTOR_PERSIST_BAD.format(name=n, value=v), FIX[n])
        for n, v in found.items()
    ]
    return lines or [passed("persistence", msg.DOCTOR_PERSIST_OK)]


async def _replica_line(rt: Runtime, n: int) -> Line:
    r = await rt.fewest_replicas()
    if r is None:
        return warn("replicas", msg.DOCTOR_REPLICAS_UNREAD)
    if n > r:
        text = msg.DOCTOR_REPLICAS_SHORT.format(n=n, r=r)
        return fail("replicas", text, msg.DOCTOR_REPLICAS_SHORT_FIX.format(n=n))
    if n == 0 and r:
        return warn("replicas", msg.DOCTOR_REPLICAS_OFF.format(r=r), msg.DOCTOR_REPLICAS_OFF_FIX)
    if n == 0:
        return passed("replicas", msg.DOCTOR_REPLICAS_NONE)
    return passed("replicas", msg.DOCTOR_REPLICAS_OK.format(n=n, r=r))


def _default_agent_line(settings: Settings, offered: list[str]) -> Line:
    agent = settings.hitl_default_agent
    shown = ", ".join(offered) or msg.DOCTOR_NONE
    if agent is not None:
        if agent in offered:
            return passed("default agent", msg.DOCTOR_DEFAULT_OK.format(agent=agent))
        text = msg.DOCTOR_DEFAULT_MISSING.format(agent=agent, offered=shown)
        return fail("default agent", text, msg.DOCTOR_DEFAULT_MISSING_FIX.format(agent=agent))
    if len(offered) == 1:
        return passed("default agent", msg.DOCTOR_DEFAULT_ONE.format(agent=offered[0]))
    text = msg.DOCTOR_DEFAULT_UNSET.format(n=len(offered))
    return warn("default agent", text, msg.DOCTOR_DEFAULT_UNSET_FIX)


async def store_lines(settings: Settings, policy: Policy | None) -> list[Line]:
    """Everything read from the store; one FAIL line when it cannot be opened."""
    try:
        async with open_runtime(settings, policy=policy or load_policy(None)) as rt:
            where = (
                msg.DOCTOR_STORE_EMBEDDED.format(path=settings.hitl_data_dir)
                if rt.server is not None
                else "REDIS_URL"
            )
            lines = [passed("store", msg.DOCTOR_STORE_OK.format(where=where))]
            lines += await _persistence_lines(rt)
            lines.append(await _replica_line(rt, settings.hitl_replica_acks))
            offered = await rt.agents.offered()
    except HitlError as exc:
        skipped = [warn(c, msg.DOCTOR_STORE_SKIPPED) for c in ("workers", "default agent")]
        return [fail("store", msg.DOCTOR_STORE_BAD.format(error=exc)), *skipped]
    if offered:
        lines.append(passed("workers", msg.DOCTOR_WORKERS_OK.format(agents=", ".join(offered))))
    else:
        lines.append(warn("workers", msg.DOCTOR_WORKERS_NONE, msg.DOCTOR_WORKERS_FIX))
    lines.append(_default_agent_line(settings, offered))
    return lines
