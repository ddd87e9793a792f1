"""Checking a person's edited arguments before they are approved.

A tool's JSON Schema (Draft 2020-12 unless the schema names another draft via
`$schema`) is recorded when the tool is registered; an edit that does not fit it
is refused in the Edit modal with the reasons, and nothing changes. With no
schema recorded, an edit may change values only: it must stay a JSON object with
exactly the argument names of the call it edits, since a new name could switch on
behaviour nobody reviewed and a dropped one silently falls back to a default.

A schema comes from an agent, so it is untrusted code run on the event loop: it is
bounded in size, depth and keywords when accepted (`bot.core.args.schemabounds`), and
checked by `bot.core.args.safeschema`'s validators (patterns in RE2, a budget of steps).

Pure functions: no Redis, no Slack. The executor still validates the approved
arguments itself (the worker's pydantic model, the SDK's signature): this check is
there so the person learns in the modal, not the agent after the fact.
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import FormatChecker
from jsonschema import exceptions as js_errors
from jsonschema.protocols import Validator
from jsonschema.validators import Draft202012Validator, validator_for

from bot import messages as msg
from bot.core.args import safeschema
from bot.core.args.fastschema import Check, quick_check
from bot.core.args.plainjson import lone_surrogate, too_deep
from bot.core.args.saferegex import PatternError
from bot.core.args.saferegex import compiled as re2_compiled
from bot.core.args.schemabounds import bounds_problem

MAX_SCHEMA_BYTES = 16 * 1024  # a tool's argument schema; the whole call may be 64 KiB
# A schema nests about twice as deep as the arguments it describes (properties, items);
# jsonschema recurses on it, so the limit is checked before it does.
MAX_SCHEMA_DEPTH = 64
# The check of a schema against its draft's meta-schema, in steps (bot/core/args/safeschema.py):
# a schema at the keyword limit takes about 23,000.
META_STEPS = 50_000
MAX_SHOWN = 4  # problems listed in the modal (its error line holds 150 characters)
ARGS_EXAMPLE = '{"amount": 10}'  # what `msg.ARGS_NOT_OBJECT` shows a JSON object as
# Errors gathered before the first MAX_SHOWN (by place) are picked: enough to order a
# call's problems, and the check of 5,000 wrong items stops at the 64th.
MAX_GATHERED = 64


def _validator(schema: Mapping[str, Any]) -> Validator:
    return safeschema.validator(schema)


def schema_problem(schema: object) -> str | None:
    """Why `schema` cannot be a tool's argument schema; None when it can."""
    if not isinstance(schema, dict):
        return msg.SCHEMA_INVALID.format(error="it must be a JSON object")
    if too_deep(schema, MAX_SCHEMA_DEPTH):
        return msg.SCHEMA_TOO_DEEP.format(limit=MAX_SCHEMA_DEPTH)
    if lone_surrogate(schema):
        return msg.SCHEMA_INVALID.format(error=msg.TEXT_LONE_SURROGATE)
    try:
        text = json.dumps(schema, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        return msg.SCHEMA_INVALID.format(error=exc)
    if (size := len(text.encode())) > MAX_SCHEMA_BYTES:
        return msg.SCHEMA_TOO_LARGE.format(size=size, limit=MAX_SCHEMA_BYTES)
    if schema.get("type", "object") != "object":
        return msg.SCHEMA_NOT_OBJECT_TYPE
    return _meta_problem(text)


@functools.lru_cache(maxsize=1024)
def _meta_problem(text: str) -> str | None:
    """The bounds and the check against the draft's meta-schema, by the schema's sorted
    JSON text: they cost a millisecond, and a gated function sends the same schema with
    every call."""
    schema = json.loads(text)
    if (problem := bounds_problem(schema)) is not None:  # before jsonschema reads a pattern
        return problem
    cls = validator_for(schema, default=Draft202012Validator)
    meta = safeschema.meta_validator(cls, _formats(cls))
    try:
        with safeschema.budget(META_STEPS):
            # the first error, as jsonschema's check_schema reports
            error = next(iter(meta.iter_errors(schema)), None)
    except safeschema.TooCostly:
        return msg.SCHEMA_TOO_COSTLY.format(limit=META_STEPS)
    return None if error is None else msg.SCHEMA_INVALID.format(error=error.message)


def _re2_regex(instance: object) -> bool:
    if isinstance(instance, str):
        re2_compiled(instance)
    return True


def _formats(cls: type[Validator]) -> FormatChecker:
    """The draft's own format checks for the meta-schema, its "regex" (the format of
    every `pattern`) compiled by RE2 rather than Python's `re`."""
    checker = FormatChecker(formats=())
    checker.checkers = {**cls.FORMAT_CHECKER.checkers, "regex": (_re2_regex, (PatternError,))}
    return checker


def problems(
    schema: Mapping[str, Any] | None, args: object, *, current: Mapping[str, Any]
) -> list[str]:
    """Why `args` may not replace `current` (the call's arguments now); empty: it may.

    `schema` None means no schema is known for the tool: then only the values may change.
    """
    if not isinstance(args, dict):
        return [msg.ARGS_NOT_OBJECT.format(example=ARGS_EXAMPLE)]
    if schema is None:
        return _same_names(args, current)
    try:
        validator = _validator(schema)
    except Exception as exc:  # a stored schema no check admitted (written to Redis by hand)
        return [msg.ARGS_SCHEMA_BROKEN.format(error=type(exc).__name__)]
    return fit_problems(validator, args)


@dataclass(frozen=True)
class Compiled:
    """A schema made ready to check many calls: jsonschema's validator, and for a plain
    schema a quick predicate that can only say "fits" (bot/core/args/fastschema.py)."""

    validator: Validator
    quick: Check | None


def compiled(schema: Mapping[str, Any]) -> Compiled:
    """A reusable check for a schema `schema_problem` accepted: building one costs
    more than using it, so a caller checking many calls keeps it."""
    return Compiled(_validator(schema), quick_check(schema))


def fit_problems(schema: Validator | Compiled, args: dict[str, Any]) -> list[str]:
    """Why `args` do not fit the compiled schema (empty: they do)."""
    if isinstance(schema, Compiled):
        if schema.quick is not None and schema.quick(args):
            return []
        validator = schema.validator
    else:
        validator = schema
    try:
        with safeschema.budget():
            errors = sorted(itertools.islice(validator.iter_errors(args), MAX_GATHERED), key=_order)
        return [_describe(e) for e in errors[:MAX_SHOWN]]
    except safeschema.TooCostly:
        return [msg.ARGS_TOO_COSTLY.format(limit=safeschema.MAX_STEPS)]
    except Exception as exc:  # a broken schema or an unresolvable $ref: refuse, never pass
        return [msg.ARGS_SCHEMA_BROKEN.format(error=type(exc).__name__)]


def call_problems(schema: Mapping[str, Any], args: Mapping[str, Any]) -> list[str]:
    """Why the proposed `args` do not fit the schema declared with them (empty: they do)."""
    return problems(schema, dict(args), current=args)


def _same_names(args: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    out = []
    if new := sorted(set(args) - set(current)):
        out.append(msg.ARGS_NEW_KEYS.format(names=", ".join(new)))
    if missing := sorted(set(current) - set(args)):
        out.append(msg.ARGS_MISSING_KEYS.format(names=", ".join(missing)))
    return out


def _order(e: js_errors.ValidationError) -> tuple[str, str]:
    return ".".join(str(p) for p in e.absolute_path), e.message


def _describe(e: js_errors.ValidationError) -> str:
    where = ".".join(str(p) for p in e.absolute_path) or msg.ARGS_ROOT
    return msg.ARGS_SCHEMA_PROBLEM.format(where=where, problem=e.message)
