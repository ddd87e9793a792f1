"""Regular expressions from callers' schemas, run by RE2: linear time, whatever the text.

A JSON Schema `pattern` written by an agent is untrusted code. Python's `re`
backtracks: `^(a+)+$` against thirty "a"s and a "!" took 47 s and held the event
loop (and every other agent, Slack and the sweeper) the whole time. RE2 answers it
in microseconds because it never backtracks; the price is that it has no
backreferences and no lookaround, so a pattern using them is refused where the
schema is accepted (`pattern_problem`), never quietly run some other way.
"""

from __future__ import annotations

import functools
from typing import Any

import re2

# RE2 compiles a pattern into an automaton capped at this much memory; a pattern that
# needs more is refused. The cap bounds the time too, as RE2 holds the GIL: compiling
# the largest pattern it admits takes about 10 ms here, and matching one against 60 KB
# of text at most about 50 ms (a pattern built for it; an ordinary one, well under 1 ms).
# Ordinary patterns need a few KiB; a counted Unicode class such as [\p{L}]{1,100} is
# the kind refused (write [\p{L}]+ with maxLength instead).
MAX_MEMORY = 256 << 10


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # a refused pattern is answered to its sender, not logged
    options.max_mem = MAX_MEMORY
    return options


class PatternError(ValueError):
    """RE2 cannot compile the pattern (the text says why)."""


@functools.lru_cache(maxsize=256)  # at most 64 MiB of automata
def compiled(pattern: str) -> Any:
    """RE2's compiled `pattern`; PatternError when it has none."""
    try:
        return re2.compile(pattern, options=_options())
    except re2.error as exc:
        why = exc.args[0] if exc.args else exc
        raise PatternError(why.decode() if isinstance(why, bytes) else str(why)) from None
    except (TypeError, ValueError) as exc:  # a lone surrogate, a NUL: not text RE2 takes
        raise PatternError(str(exc)) from None


def pattern_problem(pattern: str) -> str | None:
    """Why RE2 cannot run `pattern`; None when it can."""
    try:
        compiled(pattern)
    except PatternError as exc:
        return str(exc)
    return None


def search(pattern: str, text: str) -> bool:
    """True when `pattern` matches somewhere in `text` (JSON Schema's unanchored match)."""
    return compiled(pattern).search(text) is not None
