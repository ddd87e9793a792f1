"""Modals and the App Home: valid for Slack, bound to the exact call, and lossless.

Each view goes through `slack_sdk.models.views.View(...).to_dict()` (title,
submit, private_metadata and block count), then the same per-block checks as
messages, with the 100-block limit of modals and the App Home.
"""

from __future__ import annotations

import json
import re
from typing import Any

from slack_sdk.models.views import View

from bot.core.models import Question, QuestionState, Run, RunState
from bot.core.policy import parse_policy
from bot.core.states import Event, ReasonCode
from bot.slack.blocks import home, render, views
from bot.slack.blocks.render import ButtonValue
from tests.conftest import QUORUM_POLICY
from tests.slack.test_render import (
    NOW,
    PAYMENT,
    POLICY,
    assert_literal,
    buttons,
    decide,
    make,
    mrkdwn_texts,
    unescape,
    validate_blocks,
    walk,
)


def validate_view(view: dict[str, Any]) -> None:
    View(**view).to_dict()  # raises on a title over 24, over 100 blocks, metadata over 3000
    validate_blocks(view["blocks"], max_blocks=100)
    for text in mrkdwn_texts(view["blocks"]):
        assert_literal(text)
    for element in walk(view["blocks"]):
        if element.get("type") == "plain_text_input":
            assert element.get("max_length", 3000) <= 3000
            assert len(element.get("initial_value", "")) <= element.get("max_length", 3000)


def inputs(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {b["block_id"]: b for b in view["blocks"] if b["type"] == "input"}


def shown_arguments(view: dict[str, Any]) -> str:
    """The arguments as a reader of the modal sees them: the code blocks, joined."""
    pieces = [
        b["text"]["text"]
        for b in view["blocks"]
        if b.get("block_id", "").startswith("hitl_payload_args_")
    ]
    joined = "".join(p.removeprefix("```").removesuffix("```") for p in pieces)
    return unescape(joined.replace("\u200b", ""))


# -- reject ---------------------------------------------------------------------------------


def test_reject_modal_asks_a_reason_code_and_is_bound_to_the_call() -> None:
    req = make()
    view = views.reject_modal(req)
    validate_view(view)
    assert view["callback_id"] == render.VIEW_REJECT == "hitl_reject_modal"
    assert ButtonValue.decode(view["private_metadata"]) == (req.id, req.payload_hash)
    assert view["submit"]["text"] == "Send rejection"
    fields = inputs(view)
    select = fields[views.REASON_BLOCK]
    assert "optional" not in select or select["optional"] is False  # a code is required
    codes = [o["value"] for o in select["element"]["options"]]
    assert codes == [c.value for c in ReasonCode]
    assert select["element"]["options"][0]["text"]["text"] == "Wrong target"
    text = fields[views.REASON_TEXT_BLOCK]
    assert text["optional"] is True and text["element"]["multiline"] is True
    assert "optional" not in text["label"]["text"]  # Slack adds "(optional)" to the label
    shown = "\n".join(mrkdwn_texts(view["blocks"]))
    assert "`refund`" in shown and "1,200 EUR" in shown  # what is being rejected


def test_parse_reject_reads_what_slack_sends() -> None:
    values: dict[str, Any] = {
        views.REASON_BLOCK: {
            render.REASON_ACTION: {
                "type": "static_select",
                "selected_option": {
                    "text": {"type": "plain_text", "text": "Wrong target"},
                    "value": "wrong_target",
                },
            }
        },
        views.REASON_TEXT_BLOCK: {
            render.REASON_TEXT_ACTION: {"type": "plain_text_input", "value": "  use acct-10  "}
        },
    }
    assert views.parse_reject(values) == ("wrong_target", "use acct-10")
    values[views.REASON_TEXT_BLOCK][render.REASON_TEXT_ACTION]["value"] = None
    assert views.parse_reject(values) == ("wrong_target", None)
    nothing = {views.REASON_BLOCK: {render.REASON_ACTION: {"selected_option": None}}}
    assert views.parse_reject(nothing) == ("", None)
    forged = {views.REASON_BLOCK: {render.REASON_ACTION: {"selected_option": {"value": "lol"}}}}
    assert views.parse_reject(forged) == ("", None)
    assert views.parse_reject({}) == ("", None)


def test_decision_modals_have_no_submit_once_the_request_left_review() -> None:
    done = decide(make(), Event.APPROVE)
    for view in (views.reject_modal(done), views.edit_modal(done)):
        validate_view(view)
        assert "submit" not in view and not inputs(view)
        assert "no longer waiting for review (✅ Approved)" in view["blocks"][0]["text"]["text"]


# -- edit -----------------------------------------------------------------------------------


def test_edit_modal_starts_from_the_exact_arguments() -> None:
    req = make()
    view = views.edit_modal(req)
    validate_view(view)
    assert view["callback_id"] == "hitl_edit_modal" and view["submit"]["text"] == "Approve edited"
    assert ButtonValue.decode(view["private_metadata"]) == (req.id, req.payload_hash)
    box = inputs(view)[views.ARGS_BLOCK]["element"]
    assert box["multiline"] is True and box["max_length"] == 3000
    assert json.loads(box["initial_value"]) == PAYMENT
    assert box["initial_value"] == json.dumps(PAYMENT, indent=2)
    values = {views.ARGS_BLOCK: {render.ARGS_ACTION: {"value": box["initial_value"]}}}
    assert views.parse_edit(values) == box["initial_value"]
    assert views.parse_edit({}) == ""


def test_edit_modal_keeps_the_draft_and_shows_the_error_escaped() -> None:
    view = views.edit_modal(make(), error="amount: must be <= 1000 & > 0", draft='{"amount": 5000')
    validate_view(view)
    text = "\n".join(mrkdwn_texts(view["blocks"]))
    assert ":warning: amount: must be &lt;= 1000 &amp; &gt; 0" in text
    assert inputs(view)[views.ARGS_BLOCK]["element"]["initial_value"] == '{"amount": 5000'


def test_edit_modal_uses_compact_json_when_pretty_does_not_fit() -> None:
    args = {f"key{i}": [i, i + 1, i + 2] for i in range(90)}  # pretty > 3000, compact < 3000
    assert len(json.dumps(args, indent=2)) > 3000
    view = views.edit_modal(make(args=args))
    validate_view(view)
    assert json.loads(inputs(view)[views.ARGS_BLOCK]["element"]["initial_value"]) == args


def test_edit_modal_refuses_to_edit_what_the_box_cannot_hold() -> None:
    args = {"to": "acct-9", "body": "x" * 5000}
    view = views.edit_modal(make(args=args))
    validate_view(view)
    assert "submit" not in view and not inputs(view), "editing would silently lose data"
    assert "Slack's text box holds 3000" in view["blocks"][0]["text"]["text"]
    forbidden = make().model_copy(update={"allow_edit": False})
    view = views.edit_modal(forbidden)
    validate_view(view)
    assert (
        "submit" not in view
        and "does not allow editing `refund`" in view["blocks"][0]["text"]["text"]
    )


def test_edit_modal_warns_that_earlier_approvals_lapse() -> None:
    once = decide(make("deploy", {"service": "api"}), Event.APPROVE, "U0ALICE")
    text = "\n".join(mrkdwn_texts(views.edit_modal(once)["blocks"]))
    assert "needs 2 approvals" in text


# -- the full payload -------------------------------------------------------------------------


def test_payload_modal_reaches_every_character_of_a_20kb_argument() -> None:
    body = "".join(f"line {i}: <b>pay & go</b> 北京 🚀\n" for i in range(700))
    assert len(body) > 20_000
    args = {"to": "acct-9", "body": body, "cmd": "echo ```done```"}
    req = make(args=args)
    message = render.approval_message(req, now_ms=NOW)
    assert "✂ Cut to fit in Slack: `body`" in "\n".join(mrkdwn_texts(message.blocks))
    view = views.payload_modal(req)
    validate_view(view)
    assert view["callback_id"] == "hitl_payload_modal" and "submit" not in view
    assert shown_arguments(view) == json.dumps(args, indent=2, ensure_ascii=False)


def test_payload_modal_shows_hashes_state_levels_and_approvers() -> None:
    req = make()
    edited = decide(req, Event.EDIT_AND_APPROVE, new_args={**PAYMENT, "amount": 99})
    view = views.payload_modal(edited)
    validate_view(view)
    text = "\n".join(mrkdwn_texts(view["blocks"]))
    assert f"`{edited.payload_hash}`" in text and f"`{req.payload_hash}`" in text
    assert "✅ Approved" in text and "<@UBOSS>" in text
    assert "1. #approvals (10 min)\n2. <@UONCALL> (10 min)\n3. <@ULEAD> (5 min)" in text
    assert "*May decide:* <@UBOSS>, <!subteam^SFINANCE>" in text
    pending = "\n".join(mrkdwn_texts(views.payload_modal(req)["blocks"]))
    assert "1. #approvals (10 min) ← now" in pending


def test_payload_modal_stays_within_100_blocks_for_the_largest_payload() -> None:
    angles = {"angle": "<" * 60_000}  # escaped: 240,000 characters, still fits in full
    view = views.payload_modal(make(args=angles))
    validate_view(view)
    assert shown_arguments(view) == json.dumps(angles, indent=2)
    amps = {"amp": "&" * 63_000}  # escaped: 315,000 characters, more than 100 blocks hold
    view = views.payload_modal(make(args=amps))
    validate_view(view)
    assert len(view["blocks"]) == 100
    assert "hitl-bot show r00001" in view["blocks"][-1]["elements"][0]["text"]
    shown = shown_arguments(view)
    assert len(shown) > 55_000 and json.dumps(amps, indent=2).startswith(shown)


# -- questions and home -----------------------------------------------------------------------


def test_answer_modal_quotes_the_question_and_reads_the_answer() -> None:
    q = Question(id="q7", question="Which <!channel> account?", asked_at=NOW, expires_at=NOW + 1)
    view = views.answer_modal(q)
    validate_view(view)
    assert view["callback_id"] == "hitl_answer_modal" and view["private_metadata"] == "q7"
    assert "Which &lt;!channel&gt; account?" in "\n".join(mrkdwn_texts(view["blocks"]))
    assert views.ANSWER_BLOCK in inputs(view)
    values = {views.ANSWER_BLOCK: {render.ANSWER_TEXT_ACTION: {"value": "acct-10"}}}
    assert views.parse_answer(values) == "acct-10"
    assert views.parse_answer({}) == ""
    closed = views.answer_modal(q.model_copy(update={"state": QuestionState.ANSWERED}))
    validate_view(closed)
    assert "submit" not in closed and not inputs(closed)


def test_home_view_lists_my_pending_requests_then_the_policy() -> None:
    req = make()
    view = home.home_view([req], POLICY, now_ms=NOW)
    validate_view(view)
    assert view["type"] == "home" and "submit" not in view
    text = "\n".join(mrkdwn_texts(view["blocks"]))
    assert view["blocks"][0]["text"]["text"] == "⏳ Waiting for you: 1"
    assert "`refund`" in text and "review within 10 min" in text
    assert "No agent run you may steer" in text
    assert ButtonValue.decode(buttons(view["blocks"])["hitl_view"]["value"])[0] == req.id
    big = parse_policy({**QUORUM_POLICY, "tools": {f"t{i}": {"tier": "low"} for i in range(3000)}})
    runs = [(_run(f"run-{i:04}"), None) for i in range(300)]
    crowded = home.home_view([req] * 500, big, now_ms=NOW, runs=runs)
    validate_view(crowded)
    assert len(crowded["blocks"]) <= 100
    assert len(re.findall(r"and \d+ more", "\n".join(mrkdwn_texts(crowded["blocks"])))) >= 2


def _run(run_id: str, **changes: Any) -> Run:
    fields: dict[str, Any] = {"agent": "claw", "prompt": "find the bear", "requester": "UKID"}
    return Run(id=run_id, created_at=NOW, updated_at=NOW, **(fields | changes))


def test_a_run_in_the_app_home_shows_its_name_state_and_thread_literally() -> None:
    outside = _run(
        "cc-1",
        prompt="Claude Code in <!here> shop",
        outside=True,
        state=RunState.RUNNING,
        channel="CHITLAPPROVALS",
        thread_ts="1.2",
    )
    worker = _run("run-2", state=RunState.WAITING, waiting_on="req-9")
    view = home.home_view(
        [],
        POLICY,
        now_ms=NOW,
        runs=[(outside, "https://x.slack.com/archives/C/p12"), (worker, None)],
    )
    validate_view(view)
    text = "\n".join(mrkdwn_texts(view["blocks"]))
    assert "🤖 Runs you can steer: 2" in json.dumps(view["blocks"], ensure_ascii=False)
    assert "*Claude Code in &lt;!here&gt; shop* · `cc-1` · 🏃 Running" in text
    assert "<https://x.slack.com/archives/C/p12|Open its thread>" in text
    assert "*claw* · `run-2` · ✋ Waiting for a person on `req-9`" in text  # a worker's: its agent
    assert "`/hitl stop run-2`" in text
    # a link that is not one (no scheme, or markup in it) is not made a link
    odd = home.run_line(outside, "javascript:alert(1)|x")
    assert "javascript" not in odd and "<#CHITLAPPROVALS>" in odd
