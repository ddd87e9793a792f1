"""`hitl-bot keys show | rotate`: the key decisions are signed with, and changing it."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.console import Console

from bot.cli import messages as msg
from bot.config import Settings
from bot.errors import ConfigError, HitlError
from bot.signing import KEY_FILE, PREVIOUS_FILE, load_signer, require_public_keys, trusted_keys
from bot.signing.rotate import Rotation, rotate

keys_app = typer.Typer(
    no_args_is_help=True, help="The key decisions are signed with.", rich_markup_mode=None
)
out = Console(soft_wrap=True)
err = Console(stderr=True)
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _fail(exc: HitlError) -> typer.Exit:
    err.print(f"[red]error:[/red] {exc}", markup=True, highlight=False)
    return typer.Exit(2)


@keys_app.command("show", short_help="The public keys decisions are signed with.")
def keys_show(
    pem: Annotated[bool, typer.Option("--pem", help="PEM instead of base64.")] = False,
    as_json: AsJson = False,
) -> None:
    """Every public key decisions are verified with, as `GET /v1/keys` gives them, the one
    serve signs with first; set HITL_SIGNING_PUBLIC_KEY to them where an executor runs.
    Where no public key is set, these are serve's own (HITL_SIGNING_KEY, or
    HITL_DATA_DIR/signing.key) and those `keys rotate` kept (signing.previous)."""
    settings = Settings.load()
    try:
        try:  # serve's own key where it is here; else the public key an executor has
            own = None if settings.hitl_signing_public_key else load_signer(settings, create=False)
        except ConfigError:
            own = None
        trusted = require_public_keys(trusted_keys(settings, own))
    except HitlError as exc:
        raise _fail(exc) from None
    listing = trusted.listing()
    if as_json:
        signing = own.key_id if own is not None else None
        out.print_json(json.dumps({"signing": signing, "keys": listing}))
        return
    for k in listing:
        sys.stdout.write(f"{k['id']} ed25519 {k['public_key']}\n" if not pem else k["pem"])


@keys_app.command("rotate", short_help="A new signing key; the old one still verifies.")
def keys_rotate(as_json: AsJson = False) -> None:
    """Make a new signing key and keep the old public key trusted for verifying.

    In the data dir: signing.key is replaced, the old public key is added to
    signing.previous, and executors sharing the dir accept both. With HITL_SIGNING_KEY
    nothing is written: the new seed and HITL_SIGNING_PUBLIC_KEY are printed to set.
    Either way it prints the order to roll the key out across several serves."""
    try:
        done = rotate(Settings.load())
    except HitlError as exc:
        raise _fail(exc) from None
    if as_json:
        out.print_json(json.dumps(_as_dict(done)))
        return
    for line in _told(done):
        out.print(line, markup=False, highlight=False)


def _as_dict(done: Rotation) -> dict[str, object]:
    return {
        "key_id": done.new.key_id,
        "public_key": done.new.public_b64(),
        "previous": done.old_ids,
        "HITL_SIGNING_PUBLIC_KEY": done.public_setting(),
        "HITL_SIGNING_KEY": done.seed,  # null where the data dir holds it
        "written": str(done.data_dir) if done.data_dir is not None else None,
    }


def _told(done: Rotation) -> list[str]:
    old = ", ".join(done.old_ids)
    if done.data_dir is None:
        return [
            msg.ROTATED_ENV.format(new=done.new.key_id),
            f"HITL_SIGNING_KEY={done.seed}",
            f"HITL_SIGNING_PUBLIC_KEY={done.public_setting()}",
            *(line.format(old=old) for line in msg.ROLL_ENV),
        ]
    previous = done.data_dir / PREVIOUS_FILE
    return [
        msg.ROTATED_FILE.format(
            new=done.new.key_id, path=done.data_dir / KEY_FILE, previous=previous, old=old
        ),
        *(
            line.format(public=done.public_setting(), old=old, previous=previous)
            for line in msg.ROLL_FILE
        ),
    ]
