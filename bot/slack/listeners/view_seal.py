"""A modal's hidden metadata, signed with serve's key when it opens and checked when it
comes back.

A modal's `private_metadata` names what its submission acts on (a request and the hash
it was opened on, a question). Slack returns it unchanged, but anyone holding the app's
signing secret can send a submission with any metadata in it, and the button check
(`ButtonValue`, a sha256 anyone can compute) cannot tell such a dialog from one this bot
opened. So every modal opens with its metadata sealed: an Ed25519 signature by serve's
key (bot/signing) over the modal's callback id, the person it was opened for and the
metadata. The prologue (bot/slack/listeners/prologue.py) checks the seal of every submission
against the keys serve trusts and hands the listener the metadata alone; a missing or
wrong seal is refused before any listener reads it.
"""

from __future__ import annotations

import base64
import binascii
import logging
from contextvars import ContextVar
from typing import Any

from bot.errors import ConfigError
from bot.signing import PublicKeys, Signer
from bot.slack import messages as smsg
from bot.slack.blocks.escape import PRIVATE_METADATA

log = logging.getLogger(__name__)

_SEP = "."


class ViewSeal:
    """Seals modals with serve's `signer`; opens them by any key serve trusts (`keys`),
    so a modal opened before a key rotation still submits."""

    def __init__(self, signer: Signer, keys: PublicKeys) -> None:
        self._signer = signer
        self._keys = keys

    def seal(self, view: dict[str, Any], user: str) -> dict[str, Any]:
        """`view` with its metadata sealed for `user`; a view without metadata as it is."""
        inner = view.get("private_metadata")
        if not inner:
            return view
        callback_id = str(view.get("callback_id", ""))
        sig = self._signer.sign(_signed(callback_id, user, str(inner)))
        tag = base64.urlsafe_b64encode(sig).decode().rstrip("=")
        sealed = _SEP.join((self._signer.key_id, tag, str(inner)))
        if len(sealed) > PRIVATE_METADATA:  # cut, it could never be opened again
            raise ConfigError(smsg.VIEW_SEAL_TOO_LONG.format(limit=PRIVATE_METADATA))
        return {**view, "private_metadata": sealed}

    def open(self, view: dict[str, Any], user: str) -> str:
        """The metadata `seal` wrapped; "" for none. ValueError when the seal is missing,
        altered, for another modal or person, or by a key serve does not trust."""
        sealed = view.get("private_metadata")
        if not sealed:
            return ""
        if not isinstance(sealed, str) or sealed.count(_SEP) < 2:
            raise ValueError("unsealed metadata")
        key_id, tag, inner = sealed.split(_SEP, 2)
        try:
            sig = base64.urlsafe_b64decode(tag + "=" * (-len(tag) % 4))
        except (binascii.Error, ValueError):
            raise ValueError("a seal that is not base64") from None
        callback_id = str(view.get("callback_id", ""))
        if not self._keys.verify(key_id, _signed(callback_id, user, inner), sig):
            raise ValueError("a seal serve did not make")
        return inner


def _signed(callback_id: str, user: str, inner: str) -> bytes:
    # NUL never occurs in a callback id or a user id, so no two triples sign the same bytes
    return b"\0".join((b"hitl-view", callback_id.encode(), user.encode(), inner.encode()))


# The seal of the app whose listener runs in this task: set by the prologue before any
# listener, so `open_view` seals every modal whichever listener opens it.
CURRENT: ContextVar[ViewSeal | None] = ContextVar("hitl_view_seal", default=None)


def seal_for(view: dict[str, Any], user: str) -> dict[str, Any]:
    seal = CURRENT.get()
    if seal is None:  # outside the prologue: a modal that could never be submitted
        raise ConfigError(smsg.VIEW_SEAL_MISSING)
    return seal.seal(view, user)
