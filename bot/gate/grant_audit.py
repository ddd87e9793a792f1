"""`audit verify`'s check of approvals made under standing approvals.

An approval under a grant is sealed by serve like any person's, so the seal alone says
only that serve approved it. Whether serve should have is the grant's to show: every
entry whose reason code names a grant is checked against that grant's record, which
must be signed by a trusted key, have its `granted` audit entry, name the entry's actor
as granter, have been live when the call passed, cover the call's tool, and have been
made on a source request its granter approved; and no grant may have passed more
calls than its uses.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from typing import Any

from bot.core.grants import grant_of, grant_problem
from bot.core.proof.seal import Verify
from bot.errors import NotFound
from bot.store.audit import Finding, histories, lines
from bot.store.grants import GrantStore, Held
from bot.store.requests import RequestStore


class _Grants:
    """Each grant read and checked once per verify, however many calls it passed."""

    def __init__(
        self, grants: GrantStore, verify: Verify, archived: dict[str, list[str]] | None = None
    ) -> None:
        self.grants = grants
        self.verify = verify
        self.archived = archived or {}  # a source request retention moved to the archive
        self.found: dict[str, tuple[Held | None, str | None]] = {}

    async def check(self, gid: str) -> tuple[Held | None, str | None]:
        if gid in self.found:
            return self.found[gid]
        try:
            held: Held | None = await self.grants.get(gid)
        except (NotFound, ValueError):
            held = None
        if held is None:
            out: tuple[Held | None, str | None] = (None, f"grant {gid} is not in the store")
        else:
            out = (held, await self._problem(held))
        self.found[gid] = out
        return out

    async def _problem(self, held: Held) -> str | None:
        g = held.grant
        source = self.archived.get(g.source)
        if source is not None and not await lines(self.grants.redis, g.source):
            problem = grant_problem(g, source, self.verify)
        else:
            problem = await self.grants.check(held, self.verify)
        if problem is not None:
            return problem
        made = [e for e in await self.grants.audit(g.id) if e.get("kind") == "granted"]
        if not any(e.get("source") == g.source and e.get("actor") == g.granted_by for e in made):
            return f"grant {g.id} has no `granted` audit entry by {g.granted_by}"
        return None


def _entry_problem(held: Held, entry: dict[str, object], tool: str | None) -> str | None:
    g = held.grant
    if entry.get("actor") != g.granted_by:
        return f"grant {g.id} was made by {g.granted_by}, not by {entry.get('actor')}"
    at = int(str(entry.get("at") or 0))
    if not g.created_at <= at < g.expires_at:
        return f"grant {g.id} was not live at {at}"
    if tool is not None and tool != g.tool:
        return f"grant {g.id} covers {g.tool}, not {tool}"
    return None


async def grant_findings(
    store: RequestStore,
    grants: GrantStore,
    verify: Verify,
    since_ms: int = 0,
    archived: Sequence[dict[str, Any]] = (),
) -> AsyncIterator[Finding]:
    """Every approval under a grant that its grant does not account for, in the live
    store and in what retention archived (`archived`: bot/store/archive.py's records)."""
    sources = {str(r["id"]): [str(x) for x in r["audit"]] for r in archived}
    checked = _Grants(grants, verify, sources)
    passed: Counter[str] = Counter()
    last: dict[str, Finding] = {}
    async for rid, tool, history in histories(store, since_ms, "tool", archived):
        for line in history:
            try:
                e = json.loads(line)
            except json.JSONDecodeError:
                continue  # the chain check names it
            if not isinstance(e, dict) or e.get("kind") != "transition":
                continue
            gid = grant_of(str(e.get("reason_code") or ""))
            if gid is None:
                continue
            seq = int(e.get("seq") or 0)
            held, problem = await checked.check(gid)
            if held is not None and problem is None:
                problem = _entry_problem(held, e, tool)
            if problem is not None:
                yield Finding(rid, seq, f"{e.get('event')} under a grant: {problem}")
                continue
            passed[gid] += 1
            last[gid] = Finding(rid, seq, "")
    for gid, n in sorted(passed.items()):
        held, _ = checked.found[gid]
        if held is not None and n > held.grant.uses:
            f = last[gid]
            why = f"grant {gid} passed {n} calls, more than its {held.grant.uses} uses"
            yield Finding(f.request_id, f.seq, why)
