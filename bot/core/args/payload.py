"""Canonical payload JSON and its hash: what binds a decision to the exact call shown."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from bot import messages as msg
from bot.core.args.plainjson import inexact_number, lone_surrogate, too_deep
from bot.errors import PayloadError

# Arguments bigger than this are refused at the door: a person cannot review
# what they cannot read, and Redis should not hold megabytes per request.
MAX_PAYLOAD_BYTES = 64 * 1024
# Deeper than this is refused too: no tool call needs it, nobody can review it on a
# card, and far deeper values (about 250) break every response that serialises them.
MAX_ARGS_DEPTH = 32


def args_problem(args: object) -> str | None:
    """Why `args` (or a JSON Schema for them) cannot be stored; None when it can."""
    if too_deep(args, MAX_ARGS_DEPTH):
        return msg.ARGS_TOO_DEEP.format(limit=MAX_ARGS_DEPTH)
    if lone_surrogate(args):
        return msg.TEXT_LONE_SURROGATE
    if (where := inexact_number(args)) is not None:
        return msg.ARGS_INEXACT_NUMBER.format(path=where)
    return None


def canonical_args(args: dict[str, Any]) -> str:
    """Arguments as canonical JSON: sorted keys, no spaces, UTF-8, no NaN, no integer
    beyond what JSON carries exactly."""
    if (problem := args_problem(args)) is not None:
        raise PayloadError(problem)
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
    return hash_of(tool, canonical_args(args))


def hash_of(tool: str, canonical: str) -> str:
    """`payload_hash` from arguments already made canonical by `canonical_args`."""
    body = json.dumps(tool, ensure_ascii=False) + ":" + canonical
    return hashlib.sha256(body.encode()).hexdigest()
