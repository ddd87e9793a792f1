"""The operator's CLI as a person reads it: help without type noise, whole
table cells when piped, durations as a policy writes them, and runs you can look at."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.core.durations import format_duration, parse_duration
from bot.core.models import RunState
from bot.core.policy import Policy
from bot.demo.policy import DEMO_POLICY
from bot.store import keys
from bot.store.posted.cards import LINK
from bot.store.requests import RequestStore
from bot.store.run.questions import QuestionStore
from bot.store.run.runs import RunStore
from tests.cli.test_cli import cli


async def test_help_names_flags_without_a_type() -> None:
    for args in (("--help",), ("pending", "--help"), ("show", "--help")):
        code, out, _ = await cli(*args)
        assert code == 0 and "<bool>" not in out, out
    _, out, _ = await cli("pending", "--help")
    assert "--json" in out and "Print JSON instead of a table." in out


@pytest.mark.parametrize("columns", ["80", "50"])
async def test_no_command_list_cuts_a_summary(columns: str) -> None:
    """Click cuts a summary it derives from a docstring to fit, with '...' (once mid-word:
    'for a run-...'): every command and group says its own whole, wrapped if need be."""
    for group in ((), ("audit",), ("keys",), ("policy",), ("valkey",), ("mcp",), ("claude-code",)):
        code, out, _ = await cli(*group, "--help", env={"COLUMNS": columns})
        assert code == 0
        listed = out.split("Commands:", 1)[1].splitlines()
        assert listed and not [line for line in listed if line.rstrip().endswith("...")], out


async def test_a_piped_table_keeps_every_id_whole(
    store: RequestStore, policy: Policy, redis_url: str
) -> None:
    made = await store.create(
        policy, tool="a_tool_with_a_rather_long_name_" * 2, args={}, requester="U1"
    )
    code, out, _ = await cli("pending", redis_url=redis_url)
    assert code == 0
    assert made.request.id in out and made.request.tool in out
    assert "…" not in out


def test_durations_print_as_a_policy_writes_them() -> None:
    shown = {ms: format_duration(ms) for ms in (250, 45_000, 90 * 60_000, 4 * 3_600_000)}
    assert shown == {250: "250ms", 45_000: "45s", 5_400_000: "90m", 14_400_000: "4h"}
    assert all(parse_duration(text) == ms for ms, text in shown.items())


async def test_policy_check_says_4h_not_240m(tmp_path: Path) -> None:
    import yaml

    file = tmp_path / "p.yaml"
    low = {**DEMO_POLICY["tiers"]["low"], "review_timeout": "4h"}
    file.write_text(yaml.safe_dump({**DEMO_POLICY, "tiers": {**DEMO_POLICY["tiers"], "low": low}}))
    code, out, _ = await cli("policy", "check", str(file))
    assert code == 0, out
    assert "4h" in out and "240m" not in out and "45s" in out
    assert "UPARENT" in out  # who approves the medium tier, not "-"


async def test_runs_lists_runs_and_show_shows_one(
    store: RequestStore, policy: Policy, redis: Redis, redis_url: str
) -> None:
    runs = RunStore(redis)
    run = await runs.start(
        agent="claw", prompt="Get me the bear!", requester="UKID", channel="C1", thread_ts="1.2"
    )
    other = await runs.start(agent="refunds", prompt="refund A1004", requester="UCAROL")
    await runs.update(run.id, state=RunState.WAITING, turns=3)
    made = await store.create(
        policy, tool="refund", args={"amount": 5}, requester="U1", run_id=run.id
    )
    await runs.update(run.id, waiting_on=made.request.id)
    await redis.hset(keys.run(run.id), LINK, "https://example.slack.com/archives/C1/p12")
    entry = {"at": 0, "kind": "user_steering", "actor": "UKID", "text": "the penguin!"}
    await redis.rpush(keys.run_audit(run.id), json.dumps(entry))
    questions = QuestionStore(redis)
    asked = await questions.ask("Is this the one?", timeout_ms=60_000, run_id=run.id)
    await questions.answer(asked.id, actor="UKID", answer="yes, the bear")
    await questions.ask("Which colour?", timeout_ms=60_000, run_id=run.id)
    await questions.ask("Not this run's", timeout_ms=60_000, run_id=other.id)

    code, out, _ = await cli("runs", redis_url=redis_url)
    assert code == 0
    assert run.id in out and other.id in out and "waiting" in out
    code, out, _ = await cli("show", run.id, redis_url=redis_url)
    assert code == 0, out
    assert f"{run.id}  claw agent  state=waiting  turns=3" in out
    # recorded as the channel's permalink of its first message; shown as the thread's
    assert "thread: https://example.slack.com/archives/C1/p12?thread_ts=1.2&cid=C1" in out
    assert "1 approval request:" in out and made.request.id in out
    assert "UKID (steer): the penguin!" in out
    assert "questions: 2" in out and "asked: Is this the one?" in out
    assert "UKID answered: yes, the bear" in out and "asked: Which colour?" in out
    assert "no answer (open)" in out and "Not this run's" not in out
    code, out, _ = await cli("show", run.id, "--json", redis_url=redis_url)
    body = json.loads(out)
    assert body["requests"][0]["id"] == made.request.id and body["turns"] == 3
    code, _, err = await cli("show", "run-nope", redis_url=redis_url)
    assert code == 2 and "No run with id run-nope" in err


async def test_pending_shows_each_calls_run_arguments_and_who_by_kind(
    store: RequestStore, redis_url: str
) -> None:
    from bot.core.policy import parse_policy

    policy = parse_policy(DEMO_POLICY)  # medium: user UPARENT; high: group SFINANCE
    await store.create(
        policy,
        tool="issue_refund",
        args={"order_id": "A1004", "amount": 4200},
        requester="refunds-agent",
        run_id="run-story-1",
    )
    code, out, _ = await cli("pending", redis_url=redis_url)
    assert code == 0, out
    assert "run-story-1" in out and '"amount": 4200' in out and "A1004" in out
    assert "group SFINANCE" in out
