"""Whatever bytes reach the hook's stdin, it answers one line of well-formed JSON and exits
0: a deny naming the problem, unless the policy or a person allowed the call. Claude Code
runs the call ungated after any other exit code but 2, or on stdout it cannot read."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import uuid
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.claudecode import answer as cc_answer
from bot.claudecode import hook as cc_hook
from bot.core.args.plainjson import lone_surrogate
from bot.core.wire import RUN_ID
from tests.claudecode.conftest import HOOK, ROOT, call_json, decision, hook_env

SESSION = "5b0c-session"
GOOD = call_json("Bash", {"command": "ls"}, SESSION)
FREE_TOOL = "Read"  # review: none in the direct hook's policy (CC_POLICY)
WAIT_S = "0.2"  # nobody decides in the tests: a reviewed call is withdrawn after this


@pytest.fixture(scope="module")
def env(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The hook straight on a live Valkey, as a user's environment sets it up."""
    return hook_env("direct", redis_url, tmp_path_factory.mktemp("hook"), "")


def _refuse(constant: str) -> Any:
    raise AssertionError(f"{constant} is not JSON")


def well_formed(out: bytes) -> dict[str, Any]:
    """The answer as a strict reader takes it: one line of ASCII JSON, no NaN, no lone
    surrogate escapes, a PreToolUse decision with a reason a person can read."""
    assert out.endswith(b"\n") and out.count(b"\n") == 1, out[:300]
    answer = json.loads(out.decode("ascii"), parse_constant=_refuse)
    assert not lone_surrogate(answer), answer
    decided, why = decision(answer)
    assert decided in ("allow", "deny")
    assert isinstance(why, str) and why.strip() and why.isprintable()
    return dict(answer)


def _deny_reason(out: bytes) -> str:
    answer = well_formed(out)
    decided, why = decision(answer)
    assert decided == "deny", answer
    return why


def _hook(stdin: bytes, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[bytes]:
    """One hook process, as Claude Code starts it."""
    return subprocess.run(
        [sys.executable, *HOOK, "--timeout", WAIT_S, *argv],
        input=stdin,
        env=env,
        cwd=ROOT,
        capture_output=True,
        timeout=60,
    )


def _denied(done: subprocess.CompletedProcess[bytes]) -> str:
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    assert b"Traceback" not in done.stderr
    return _deny_reason(done.stdout)


def _in_process(stdin: bytes, env: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with mock.patch.dict(os.environ, env, clear=True):
        cc_hook.run(timeout_s=float(WAIT_S), requester=None, stdin=io.BytesIO(stdin), stdout=out)
    return out.getvalue()


def _session() -> str:
    # a session of its own: without serve, nobody posts the first card a run's later
    # cards would thread under, and the gate waits for it
    return f"s-{uuid.uuid4().hex}"


def _json(call: dict[str, Any]) -> bytes:
    return json.dumps(call).encode()


# A lone surrogate is valid JSON (`"\ud800"`) but no text UTF-8, Redis or Slack carries.
@pytest.mark.parametrize(
    ("stdin", "named"),
    [
        (_json(GOOD | {"tool_name": "Bash\ud800"}), "its tool_name holds a lone UTF-16"),
        (_json(GOOD | {"tool_input": {"command": "ls \udfff"}}), "its tool_input holds a lone"),
        (_json(GOOD | {"tool_input": {"\ud800": "ls"}}), "its tool_input holds a lone"),
        (b'{"tool_name": "Bash\xff", "tool_input": {}}', "can't decode byte 0xff"),
        (b"\xff\xfe", "not a JSON object"),
        (b"", "not a JSON object"),
        (b"   \n", "not a JSON object"),
        (b"[" + _json(GOOD) + b"]", "got list"),
        (b"null", "got NoneType"),
        (_json(GOOD)[:-5], "not a JSON object"),
        (_json(GOOD).replace(b'"ls"', b"NaN"), "NaN is not a JSON number"),
        (_json(GOOD).replace(b'"ls"', b"-Infinity"), "-Infinity is not a JSON number"),
        (b"[" * 200_000, "nested too deep"),
        (_json(GOOD | {"hook_event_name": ["x" * 10_000]}), "PreToolUse only"),
    ],
)
def test_input_nobody_can_gate_is_denied_with_exit_0(
    stdin: bytes, named: str, env: dict[str, str]
) -> None:
    why = _denied(_hook(stdin, env))

    assert named in why
    assert len(why) < 1000  # the reason quotes a bounded piece of the input, never all of it


# Each field Claude Code sends, with a value of each wrong JSON type.
WRONG = [None, 0, 1.5, True, "", [], {}, ["Read"], {"a": 1}]
NEEDED = {"session_id": str, "tool_name": str, "tool_input": dict}
IGNORED = ["cwd", "tool_use_id", "permission_mode", "transcript_path"]


@pytest.mark.parametrize("field", [*NEEDED, "hook_event_name", *IGNORED])
@pytest.mark.parametrize("value", WRONG, ids=repr)
def test_a_wrong_type_is_denied_in_a_field_the_hook_needs_and_ignored_elsewhere(
    field: str, value: Any, env: dict[str, str]
) -> None:
    call = call_json(FREE_TOOL, {"file_path": "README.md"}, _session()) | {field: value}

    answer = well_formed(_in_process(_json(call), env))

    decided, why = decision(answer)
    if field in NEEDED and (not isinstance(value, NEEDED[field]) or value == ""):
        assert decided == "deny" and f"{field} is missing or not" in why
        assert answer["systemMessage"] == why  # the person at the terminal reads it too
    elif field == "hook_event_name" and value is not None:
        assert decided == "deny" and "PreToolUse only" in why
    else:  # a field the hook does not read, or an input it gates as it is
        assert decided == "allow" and "needs no review" in why
        assert answer["hookSpecificOutput"]["updatedInput"] == call["tool_input"]


def test_several_megabytes_are_denied_quickly_without_echoing_them(env: dict[str, str]) -> None:
    huge = _json(GOOD | {"tool_name": "Write", "tool_input": {"content": "x" * 6_000_000}})
    junk = bytes(range(256)) * 24_000  # 6 MB that is not UTF-8

    for stdin in (huge, junk):
        done = _hook(stdin, env)
        why = _denied(done)
        assert len(done.stdout) < 5_000, why[:300]


def test_a_broken_pipe_on_stdout_still_exits_0(env: dict[str, str]) -> None:
    """Claude Code gone before the answer: no traceback, no exit 1 or 120."""
    proc = subprocess.Popen(
        [sys.executable, *HOOK],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    proc.stdout.close()  # the reader is gone: writing the answer raises EPIPE
    _, err = proc.communicate(b"not JSON", timeout=60)

    assert proc.returncode == 0, err.decode(errors="replace")[-3000:]
    assert b"Traceback" not in err and b"BrokenPipe" not in err


def test_a_hook_that_cannot_load_its_code_still_denies(env: dict[str, str]) -> None:
    """A broken install (here: the gate's module will not import) denies, exit 0."""
    breaks = (
        "import sys; sys.modules['bot.claudecode.hook'] = None; "
        "sys.argv = ['hitl-bot', 'claude-code', 'hook']; "
        "from bot.cli.entry import main; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", breaks],
        input=_json(GOOD),
        env=env,
        cwd=ROOT,
        capture_output=True,
        timeout=60,
    )

    assert "hook failed before it could ask" in _denied(done)


def test_an_environment_that_is_not_utf8_is_named_readably(env: dict[str, str]) -> None:
    """A REDIS_URL with a byte that is not UTF-8 reaches the reason as U+FFFD, not as a
    lone surrogate no strict reader takes."""
    bad = env | {"REDIS_URL": os.fsdecode(b"redis://127.0.0.1:1/\xff")}

    why = _denied(_hook(_json(GOOD), bad))

    assert "could not ask for approval" in why and "\ufffd" in why


def test_an_answer_that_cannot_go_out_as_it_is_is_denied() -> None:
    """Defence in depth: an allow whose input cannot be written is never changed into a
    different call, it is denied; a deny keeps its reason, mended."""
    allow = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "approved",
            "updatedInput": {"command": "ls \ud800", "n": float("nan")},
        }
    }
    deny = {**allow, "hookSpecificOutput": {**allow["hookSpecificOutput"]}}
    deny["hookSpecificOutput"] |= {"permissionDecision": "deny", "updatedInput": {}}
    deny["hookSpecificOutput"]["permissionDecisionReason"] = "Bash\ud800 did not run"

    assert "could not write its answer" in _deny_reason(cc_answer.encode(allow))
    assert _deny_reason(cc_answer.encode(deny)) == "Bash\ufffd did not run"
    assert "failed before it could ask" in _deny_reason(cc_answer.encode(None))


# The property: arbitrary bytes, and calls of the right shape holding anything at all.
SURROGATE = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
TEXT = st.text(st.characters() | SURROGATE, max_size=12)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
# Calls of the right shape, each field right or anything at all. The tool is the free
# one or any value: a reviewed call would wait the whole --timeout for nobody.
CALLS = st.fixed_dictionaries(
    {
        "session_id": st.uuids().map(lambda u: f"s-{u}") | VALUES,
        "tool_name": st.just(FREE_TOOL) | VALUES,
        "tool_input": st.dictionaries(TEXT, VALUES, max_size=3) | VALUES,
    },
    optional={
        "hook_event_name": st.just("PreToolUse") | VALUES,
        "cwd": st.just("/home/dev/shop-api") | VALUES,
        "tool_use_id": VALUES,
        "permission_mode": VALUES,
    },
)


@st.composite
def stdin_bytes(draw: st.DrawFn) -> bytes:
    """Arbitrary bytes, any JSON, or an object or a call as JSON (not UTF-8 when lone
    surrogates are written raw), maybe cut short."""
    kind = draw(st.sampled_from(["bytes", "value", "object", "call", "call", "cut"]))
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    if kind == "value":
        return json.dumps(draw(VALUES)).encode()
    shaped = draw(st.dictionaries(TEXT, VALUES, max_size=4) if kind == "object" else CALLS)
    text = json.dumps(shaped, ensure_ascii=draw(st.booleans()))
    raw = text.encode("utf-8", "surrogatepass")
    return raw[: draw(st.integers(0, len(raw)))] if kind == "cut" else raw


def _allowed_as_given(stdin: bytes, answer: dict[str, Any]) -> bool:
    """An allow: for a call the policy lets through unreviewed (no person is asked
    here), with exactly the input Claude Code sent."""
    call = json.loads(stdin)
    return (
        call["tool_name"] == FREE_TOOL
        and re.fullmatch(RUN_ID, call["session_id"]) is not None
        and answer["hookSpecificOutput"]["updatedInput"] == call["tool_input"]
    )


@settings(
    max_examples=300,
    derandomize=True,  # CI and a laptop explore the same inputs
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(stdin=stdin_bytes())
def test_any_stdin_gets_a_well_formed_answer_and_a_deny_unless_allowed(
    stdin: bytes, env: dict[str, str]
) -> None:
    answer = well_formed(_in_process(stdin, env))

    if decision(answer)[0] == "allow":
        assert _allowed_as_given(stdin, answer), (stdin, answer)


@settings(max_examples=6, derandomize=True, deadline=None, database=None)
@given(stdin=stdin_bytes())
def test_any_stdin_as_claude_code_runs_the_hook(stdin: bytes, env: dict[str, str]) -> None:
    done = _hook(stdin, env)

    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    answer = well_formed(done.stdout)
    if decision(answer)[0] == "allow":
        assert _allowed_as_given(stdin, answer), (stdin, answer)


def test_a_plain_free_call_is_allowed_as_given(env: dict[str, str]) -> None:
    """The allows the properties check for are real: the policy's free tool goes through."""
    call = call_json(FREE_TOOL, {"file_path": "/home/dev/shop-api/README.md"}, _session())
    answer = well_formed(_in_process(_json(call), env))

    assert decision(answer)[0] == "allow"
    assert _allowed_as_given(_json(call), answer)
