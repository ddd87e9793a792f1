"""The scripts as the conventions want them: each loads on a real server, names its
KEYS and ARGV in its first lines only, and spells no state, event or stream length
that Python renders for it."""

from __future__ import annotations

import re
from importlib.resources import files

import pytest
from redis.asyncio import Redis

from bot.core.states import Event, State
from bot.store import scripts
from bot.store.scripts.common import render
from bot.store.stream.events import MAXLEN

LUA = {name: files(scripts.__name__).joinpath(f"{name}.lua").read_text() for name in scripts.ALL}


@pytest.mark.parametrize("name", sorted(scripts.ALL))
async def test_every_script_loads_on_the_server(redis: Redis, name: str) -> None:
    assert await redis.script_load(scripts.ALL[name])


@pytest.mark.parametrize("name", sorted(LUA))
def test_a_script_names_its_keys_and_argv_in_its_head_only(name: str) -> None:
    head, _, body = LUA[name].partition("\n\n")
    assert "ARGV[" in head
    assert not re.search(r"\b(KEYS|ARGV)\[", body), "KEYS or ARGV used past the named locals"


@pytest.mark.parametrize("name", sorted(LUA))
def test_a_script_spells_no_state_event_or_stream_length(name: str) -> None:
    words = {s.value for s in State}
    if name != "question":  # a question's own events share two names with a request's
        words |= {e.value for e in Event}
    quoted = set(re.findall(r"'([a-z_]+)'", LUA[name]))
    assert not quoted & words, "use S.<state> and E.<event>: they are rendered from Python"
    assert str(MAXLEN) not in scripts.ALL[name].replace(
        f"EVENTS_MAXLEN, WAKE_MAXLEN = {MAXLEN}", ""
    )


def test_a_typo_in_a_rendered_name_fails_as_the_script_is_read() -> None:
    assert render("if s == S.pending_review then") == "if s == 'pending_review' then"
    with pytest.raises(ValueError, match="State has no member 'pending_reveiw'"):
        render("if s == S.pending_reveiw then")


def test_every_transition_event_has_its_script() -> None:
    chained = {Event.CREATE, Event.CLOSE, Event.REASSIGN, Event.COMPENSATE, Event.GIVE_UP}
    for event in Event:
        name = scripts.script_for(event)
        assert (name is None) == (event in chained), event
        assert name is None or name in scripts.TRANSITION_SCRIPTS
