"""What every script is made of, rendered from Python so the Lua and the rest of the
store share one definition: the transition table, states, events, reason codes, the
stored-field lists, key names and stream lengths.

The audit chain uses `redis.sha1hex` because it is the hash Lua has inside the
atomic step; the chain proves order and integrity against edits that do not
recompute it, and `payload_hash` (sha256, computed in Python) binds decisions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from enum import StrEnum
from importlib.resources import files

from bot.core.models import SYSTEM, QuestionState, RiskTier
from bot.core.proof.chain import ALWAYS
from bot.core.proof.seal import FORGED
from bot.core.states import FINAL, HUMAN_EVENTS, TRANSITIONS, Event, ReasonCode, State, SystemReason
from bot.store import keys
from bot.store.codec import GONE, OPTIONAL, REF_LEN, TERMS
from bot.store.replies import Reply
from bot.store.stream.events import MAXLEN

# An item's wake stream (bot/store/waiting.py): a waiter makes it, the scripts add an
# entry per version to it and keep the newest few (a waiter reads only past its own
# version); one nobody waits on or moves for this long expires.
WAKE_MAXLEN = 16
WAKE_TTL_S = 86_400
WAITING_TTL_S = 30 * 86_400  # a run's set of waiting requests lives as long as its record
# A question's record lives as long as a run's (RUN_TTL_S) once it is answered, expired
# or withdrawn; while open, that long past its deadline (QuestionStore.ask).
QUESTION_TTL_S = 30 * 86_400

# How the scripts' errors about a request's review terms start; callers match it.
TERMS_ERROR = "hitl: review terms"


def _str(v: object) -> str:
    return "'" + str(v).replace("\\", "\\\\").replace("'", "\\'") + "'"


def lua_set(names: Iterable[object]) -> str:
    return "{" + ", ".join(f"[{_str(n)}]=true" for n in names) + "}"


def lua_list(names: Iterable[object]) -> str:
    return "{" + ", ".join(_str(n) for n in names) + "}"


def lua_map(m: Mapping[str, object]) -> str:
    return "{" + ", ".join(f"[{_str(k)}]={_str(v)}" for k, v in m.items()) + "}"


# `S.name`, `E.name`, `SR.name`, `QS.name` and `R.name` in a script's text are its state,
# event, system reason, question state and reply names: each is replaced by its quoted value as the
# script is read, so a name the enum lacks fails at import, not as a nil at run time,
# and the server spends nothing on looking them up.
ENUMS: dict[str, type[StrEnum]] = {
    "S": State,
    "E": Event,
    "SR": SystemReason,
    "QS": QuestionState,
    "R": Reply,
}
_NAME = re.compile(r"\b(" + "|".join(ENUMS) + r")\.([a-z_]+)\b")


def _named(m: re.Match[str]) -> str:
    enum, name = ENUMS[m[1]], m[2]
    try:
        return _str(enum(name).value)
    except ValueError:
        raise ValueError(f"{m[0]}: {enum.__name__} has no member {name!r}") from None


def render(text: str) -> str:
    """A script's text with its enum names replaced by their values."""
    return _NAME.sub(_named, text)


def read(name: str) -> str:
    return render(files(__package__).joinpath(name).read_text())


def lua_string_set(names: Iterable[str]) -> str:
    """A set as one string, each name between newlines: a string constant is built once,
    as the script is loaded, where a table constructor runs at every call."""
    return _str("\n" + "".join(f"{n}\n" for n in names)).replace("\n", "\\n")


def _unrolled(name: str, params: str, lines: Iterable[str], ret: str = "") -> str:
    """A function of one statement per field: no table of the names to build or walk."""
    body = "".join(f"  {line}\n" for line in lines)
    return f"local function {name}({params})\n{body}{ret}end\n"


def _field(table: str, k: str) -> str:
    return f"{table}[{_str(k)}]"


def _blank_to_nil(table: str, ks: Iterable[str]) -> str:
    return " ".join(f"if {_field(table, k)} == '' then {_field(table, k)} = nil end" for k in ks)


# `fill`: an optional field that is not stored reads as ''.
_FILL = _unrolled(
    "fill",
    "h",
    (f"if {_field('h', k)} == nil then {_field('h', k)} = '' end" for k in OPTIONAL),
    "  return h\n",
)
# `put_terms`: the review terms into h from their decoded copy; GONE's where it lacks one.
_PUT_TERMS = _unrolled(
    "put_terms",
    "h, terms",
    (f"{_field('h', k)} = {_field('terms', k)} or {_str(GONE[k])}" for k in TERMS),
)
# `strip`: the empty values a reader of the audit puts back (ALWAYS), left out: those of
# every entry, then those of an entry of the group's kind or event.
_STRIP = _unrolled(
    "strip",
    "e",
    [
        _blank_to_nil("e", ALWAYS.get("*", ())),
        *(
            f"if e.kind == {_str(g)} or e.event == {_str(g)} then {_blank_to_nil('e', ks)} end"
            for g, ks in ALWAYS.items()
            if g != "*"
        ),
    ],
)
_KEYS = ", ".join(f"{name} = KEYS[{i}]" for i, name in enumerate(keys.REQUEST_KEYS, 1))
_ALLOWED = (f"{a.value}|{e.value}|{b.value}" for a, e, b in TRANSITIONS)
# Built at every call, so kept small or made on demand (a function building the table):
# a script pays only for the constants it reads (bench/store_throughput.py).
CONSTANTS = (
    f"local ALLOWED = {lua_string_set(_ALLOWED)}\n"
    + f"local FINAL = {lua_string_set(s.value for s in FINAL)}\n"
    + f"local HUMAN = {lua_string_set(e.value for e in HUMAN_EVENTS)}\n"
    + "local function is(set, name)  -- is `name` one of a string set's?\n"
    + "  return type(name) == 'string' and not string.find(name, '\\n', 1, true)"
    + " and string.find(set, '\\n' .. name .. '\\n', 1, true) ~= nil\nend\n"
    + f"local function REASONS() return {lua_set(r.value for r in ReasonCode)} end\n"
    + f"local function TERMS() return {lua_set(TERMS)} end\n"
    + f"local REF_LEN = {REF_LEN}\n"
    + f"local function request_keys() return {{{_KEYS}}} end\n"
    + _FILL
    + _PUT_TERMS
    + _STRIP
    + f"local DUE_REQUEST, DUE_QUESTION = {_str(keys.DUE_REQUEST)}, {_str(keys.DUE_QUESTION)}\n"
    + f"local EVENTS_MAXLEN, WAKE_MAXLEN = {MAXLEN}, {WAKE_MAXLEN}\n"
    + f"local WAKE_TTL_S, WAITING_TTL_S = {WAKE_TTL_S}, {WAITING_TTL_S}\n"
    + f"local QUESTION_TTL_S = {QUESTION_TTL_S}\n"
    + f"local SYSTEM, LOW_RISK = {_str(SYSTEM)}, {_str(RiskTier.LOW.value)}\n"
    + f"local TERMS_ERROR, FORGED = {_str(TERMS_ERROR)}, {_str(FORGED)}\n"
)

# Every script: the constants, then the helpers that read, write and audit an item.
COMMON = CONSTANTS + read("common.lua")
# Every request transition (and CREATE, which may claim): those and the transition's.
TRANSITION_COMMON = COMMON + read("transition.lua")


# A top-level definition of the shared text: a one-line or a multi-line function (its
# `end` at the start of a line), or a one-line local.
_DEFINITION = re.compile(
    r"^local function (\w+)\([^\n]*\bend\n"
    r"|^local function (\w+)\(.*?^end\n"
    r"|^local ([\w, ]+) = [^\n]*\n",
    re.M | re.S,
)


_STRING = re.compile(r"'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\"")
_COMMENT = re.compile(r"--[^\n]*")


def _names(text: str) -> set[str]:
    """The words of Lua text outside its strings and comments: what it may use."""
    return set(re.findall(r"\w+", _COMMENT.sub("", _STRING.sub("''", text))))


def script(shared: str, own: str) -> str:
    """A script: the shared definitions it uses, then its own text. Every definition is
    built at every call (a function is a closure made anew, a table filled anew), so
    those no part of the script names are left out (bench/store_throughput.py)."""
    parts: list[tuple[frozenset[str], str]] = []
    at = 0
    for m in _DEFINITION.finditer(shared):
        parts.append((frozenset(), shared[at : m.start()]))
        names = m[1] or m[2] or m[3]
        parts.append((frozenset(n.strip() for n in names.split(",")), m[0]))
        at = m.end()
    parts.append((frozenset(), shared[at:]))
    # What each part names, its own definition's names left out (a recursive helper).
    uses = [_names(text) - names for names, text in parts]
    kept = [True] * len(parts)
    wanted = _names(own)
    while True:  # a definition only a dropped one named goes too
        used = wanted.union(*(u for u, k in zip(uses, kept, strict=True) if k))
        dropped = False
        for i, (names, _) in enumerate(parts):
            if names and kept[i] and not names & used:
                kept[i], dropped = False, True
        if not dropped:
            return "".join(text for (_, text), k in zip(parts, kept, strict=True) if k) + own
