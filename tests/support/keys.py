"""The signing keys of the test suite: serve's (set as HITL_SIGNING_KEY for every process
the tests start, so executors trust it the normal way) and another, which none trusts."""

from __future__ import annotations

import base64

from bot.signing import Signer

SERVE_SEED = base64.b64encode(bytes(range(1, 33))).decode()
OTHER_SEED = base64.b64encode(bytes(range(101, 133))).decode()


def serve_signer() -> Signer:
    """What `serve` holds: a store built with it plays serve (Slack's decisions)."""
    return Signer.from_seed(SERVE_SEED)


def other_signer() -> Signer:
    return Signer.from_seed(OTHER_SEED)
