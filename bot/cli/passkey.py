"""`hitl-bot passkey list | revoke`: the passkeys people enrolled for step-up approvals
(docs/security.md "Step-up"), and an operator's revocation of anyone's."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from bot.cli import messages as msg
from bot.cli.audit import run_cli
from bot.core.text import iso
from bot.gate.runtime import Runtime
from bot.store.passkeys import Credential

passkey_app = typer.Typer(
    no_args_is_help=True, help="Passkeys enrolled for step-up approvals.", rich_markup_mode=None
)
out = Console(soft_wrap=True)
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]


@passkey_app.command("list", short_help="Who enrolled which passkeys.")
def passkey_list(
    user: Annotated[str | None, typer.Argument(help="A Slack user id (default: everyone).")] = None,
    as_json: AsJson = False,
) -> None:
    """Every enrolled passkey (or one person's): its id, when it was enrolled and used."""

    async def work(rt: Runtime) -> list[Credential]:
        users = [user] if user else await rt.passkeys.users()
        return [c for u in users for c in await rt.passkeys.of(u)]

    creds = run_cli(work)
    if as_json:
        print(json.dumps([c.model_dump(exclude={"public_key"}) for c in creds], indent=2))
        return
    if not creds:
        out.print(msg.PASSKEY_NONE)
        return
    t = Table("user", "credential", "enrolled", "last used")
    for c in creds:
        used = iso(c.last_used_at) if c.last_used_at else "-"
        t.add_row(c.user, c.id, iso(c.created_at), used)
    out.print(t)


@passkey_app.command("revoke", short_help="Revoke a person's passkey, or all of theirs.")
def passkey_revoke(
    user: Annotated[str, typer.Argument(help="The Slack user id whose passkey it is.")],
    credential: Annotated[
        str | None, typer.Argument(help="The credential id (default: all of theirs).")
    ] = None,
    by: Annotated[str, typer.Option(help="Who revokes it, for the record.")] = "operator",
) -> None:
    """Revoke at once: a confirmation with it is refused from now on (and audited),
    including on a link already handed out."""

    async def work(rt: Runtime) -> list[str]:
        return await rt.passkeys.remove(user, credential, by=by)

    gone = run_cli(work)
    if not gone:
        out.print(msg.PASSKEY_NOTHING_REVOKED.format(user=user), markup=False)
        raise typer.Exit(1)
    for cid in gone:
        out.print(msg.PASSKEY_REVOKED.format(user=user, id=cid), markup=False)
