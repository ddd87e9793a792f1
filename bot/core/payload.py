"""Canonical payload JSON and its hash: what binds a decision to the exact call shown."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from bot.errors import PayloadError

# Arguments bigger than this are refused at the door: a person cannot review
# what they cannot read, and Redis should not hold megabytes per request.
MAX_PAYLOAD_BYTES = 64 * 1024


def canonical_args(args: dict[str, Any]) -> str:
    """Arguments as canonical JSON: sorted keys, no spaces, UTF-8, no NaN."""
    try:
        text = json.dumps(
            args, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError) as exc:
        raise PayloadError(f"tool arguments are not plain JSON: {exc}") from exc
    if len(text.encode()) > MAX_PAYLOAD_BYTES:
        raise PayloadError(
            f"tool arguments are {len(text.encode())} bytes; the limit is {MAX_PAYLOAD_BYTES}"
        )
    return text


def stored_args(args: dict[str, Any]) -> str:
    """Arguments as the store keeps them: checked as `canonical_args` checks them, but
    in the caller's key order, which is the order an approver reads them in. The hash
    never depends on it: `payload_hash` sorts."""
    canonical_args(args)
    return json.dumps(args, separators=(",", ":"), ensure_ascii=False)


def payload_hash(tool: str, args: dict[str, Any]) -> str:
    """sha256 of the canonical call; two calls hash alike only if tool and args are equal."""
    body = json.dumps(tool, ensure_ascii=False) + ":" + canonical_args(args)
    return hashlib.sha256(body.encode()).hexdigest()
