"""`hitl-bot show ID`: one request and its verified history, or a run.

A request retention moved out of the live store (bot/store/retire.py) is shown from
the archive, its chain checked against the head its segment sealed: an operator who
looks up an id from a months-old log gets the request, not "no request".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from bot import messages as msg
from bot.cli import messages as cli_msg
from bot.cli import runs as cli_runs
from bot.cli.audit import archived
from bot.cli.audit import run_cli as _run
from bot.core.ids import is_run_id
from bot.core.models import ActionRequest
from bot.core.proof.chain import expand
from bot.core.proof.seal import unsealed
from bot.errors import NotFound
from bot.gate.runtime import Runtime
from bot.messages import when
from bot.store import archive_audit

out = Console()
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
WIDE = 10_000  # piped, a table is as wide as its cells: ids are never cut


@dataclass
class Shown:
    req: ActionRequest
    lines: list[str]
    chain: str
    signed: str
    undrawn: dict[str, str]
    archived_at: int | None = None  # when retention moved it out (ms), if it did


def print_table(t: Table) -> None:
    # Rich assumes 80 columns when stdout is not a terminal and cuts cells to fit.
    (out if out.is_terminal else Console(width=WIDE)).print(t)


def say_undrawn(undrawn: dict[str, str]) -> None:
    for rid, why in undrawn.items():  # never wrapped: an id and an error, whole
        out.print(
            cli_msg.CARD_NOT_DRAWN.format(id=rid, why=why),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def with_card(req: ActionRequest, undrawn: dict[str, str]) -> dict[str, object]:
    """The request as JSON; `card_error` when its card could not be drawn."""
    why = undrawn.get(req.id)
    return req.model_dump(mode="json") | ({"card_error": why} if why else {})


def show(
    request_id: Annotated[
        str, typer.Argument(metavar="ID", help="A request id, or a run id (run-…).")
    ],
    as_json: JsonOpt = False,
) -> None:
    """One request and its full, verified history (the archive's, once retention moved
    it out); or, for a run-… id, the run."""
    if is_run_id(request_id):
        _show_run(request_id, as_json)
        return
    names: dict[str, str] = {}

    async def work(rt: Runtime) -> Shown:
        try:
            shown = await _live(rt, request_id)
        except NotFound:
            shown = await _retired(rt, request_id)
        # who asked and who acted, by the names Slack shows, where serve looked them up
        actors = [str(expand(json.loads(x)).get("actor", "")) for x in shown.lines]
        names.update(await rt.slack.names([shown.req.requester, *actors]))
        return shown

    s = _run(work)
    req = s.req
    if as_json:
        body = with_card(req, s.undrawn) | {
            "audit": [expand(json.loads(x)) for x in s.lines],
            "chain": s.chain,
            "signatures": s.signed,
            "archived_at": s.archived_at,
        }
        print(json.dumps(body, indent=2))
        return
    out.print(f"[bold]{req.tool}[/bold] {req.id}  state={req.state.value}  risk={req.risk.value}")
    out.print(json.dumps(req.args, indent=2, ensure_ascii=False), markup=False, highlight=False)
    out.print(
        f"payload {req.payload_hash[:12]}  requested by {cli_msg.named(req.requester, names)}  "
        f"expires {when(req.expires_at)}  audit chain {s.chain}  signatures {s.signed}",
        markup=False,
    )
    if req.detail:
        out.print(f"outcome: {req.detail}", markup=False, highlight=False)
    if s.archived_at is not None:
        text = cli_msg.SHOWN_ARCHIVED.format(at=when(s.archived_at))
        out.print(text, markup=False, highlight=False, soft_wrap=True)
    say_undrawn(s.undrawn)
    t = Table("#", "time (UTC)", "actor", "event", "from", "to", "reason")
    for line in s.lines:
        e = expand(json.loads(line))
        event = e["event"] if e["kind"] == "transition" else f"REFUSED {e['event']}"
        t.add_row(
            str(e["seq"]),
            when(e["at"])[5:19],
            cli_msg.named(e["actor"], names),
            event,
            e.get("from", ""),
            e.get("to", ""),
            e.get("reason_code", "") or "",
        )
    print_table(t)


async def _live(rt: Runtime, rid: str) -> Shown:
    req = await rt.requests.get(rid)
    broken = await rt.verify_request(rid)
    lines = await rt.audit_lines(rid)
    chain = "intact" if broken is None else f"BROKEN at entry {broken.seq}"
    undrawn = await rt.card_problems([rid])
    return Shown(req, lines, chain, _signatures(rt, rid, lines), undrawn)


async def _retired(rt: Runtime, rid: str) -> Shown:
    kept = await archived(rt)
    found = kept.request(rid)
    if found is None:
        unknown = msg.UNKNOWN_REQUEST.format(id=rid)
        if kept.problems:  # it may be in a segment that could not be read: say so
            unknown += " " + cli_msg.SHOW_ARCHIVE_DAMAGED.format(n=len(kept.problems))
        raise NotFound(unknown)
    rec, seg = found
    lines = [str(x) for x in rec["audit"]]
    req = await rt.requests.from_fields({str(k): str(v) for k, v in rec["fields"].items()})
    cut = archive_audit.chain_break(lines, archive_audit.sealed_heads(kept).get(rid, ("", 0)))
    chain = "intact" if cut is None else f"BROKEN at entry {cut[0]}"
    return Shown(req, lines, chain, _signatures(rt, rid, lines), {}, seg.at)


def _signatures(rt: Runtime, rid: str, lines: list[str]) -> str:
    """Whether each decision in the history carries serve's seal: a name in the audit is
    only a claim until it does (bot/core/proof/seal.py)."""
    trusted = rt.claims.keys
    if trusted is None:
        return "not checked (no public key: HITL_SIGNING_PUBLIC_KEY)"
    bad = unsealed(rid, lines, trusted.verify)
    if not bad:
        return "valid"
    return "FORGED at " + ", ".join(f"entry {seq} ({why})" for seq, why in bad)


def _show_run(run_id: str, as_json: bool) -> None:
    view = _run(lambda rt: cli_runs.run_view(rt, run_id))
    if as_json:
        print(json.dumps(view.as_json(), indent=2, ensure_ascii=False))
        return
    for line in cli_runs.run_lines(view):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
