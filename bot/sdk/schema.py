"""The JSON Schema of a gated function's reviewed arguments, from its signature.

`require_approval` records it for the tool so a person's edit is checked against
the function's own type hints before it is approved. A signature that cannot be
described exactly (`*args`, `**kwargs`, hints pydantic cannot turn into a schema)
gets no schema: the edit check then keeps to the call's own argument names.
"""

from __future__ import annotations

import inspect
import logging
import warnings
from collections.abc import Callable, Iterable
from typing import Any, get_type_hints

from pydantic import ConfigDict, create_model

log = logging.getLogger(__name__)
_K = inspect.Parameter


def derive(name: str, fn: Callable[..., Any], hidden: Iterable[str]) -> dict[str, Any] | None:
    """The schema of `fn`'s arguments less `hidden`; None when it cannot be exact."""
    skip = set(hidden)
    try:
        hints = get_type_hints(fn, include_extras=True)
    except Exception:  # an unresolvable forward reference: every hint becomes Any
        hints = {}
    fields: dict[str, Any] = {}
    for p in inspect.signature(fn).parameters.values():
        if p.name in skip:
            continue
        if p.kind in (_K.VAR_POSITIONAL, _K.VAR_KEYWORD):
            return None  # the names it takes are not fixed
        hint = hints.get(p.name, Any)
        if p.default is None:  # `note: str = None` takes None, whatever the hint says
            hint = hint | None
        fields[p.name] = (hint, ... if p.default is p.empty else p.default)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a default that is not JSON: no exact schema
            model = create_model(f"{name}_arguments", __config__=_CONFIG, **fields)
            schema: dict[str, Any] = model.model_json_schema()
    except Exception as exc:  # pydantic cannot describe a hint: go without a schema
        log.info("no argument schema for %s: %s", name, exc)
        return None
    schema.pop("title", None)
    return schema


# Unknown names refused: the function would raise TypeError on them after approval.
_CONFIG = ConfigDict(extra="forbid")
