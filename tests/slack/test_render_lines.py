"""Everything else hitl-bot says in Slack: escalations, thread lines, ephemeral
refusals, questions, run headers and the slash commands' lists.

Same rules as the approval message: valid for Slack, within every limit, and
agent or user text shown literally.
"""

from __future__ import annotations

import pytest

from bot.core.models import AuditEntry, Question, QuestionState, RiskTier, Run, RunState
from bot.core.policy import parse_policy
from bot.core.states import Event
from bot.slack.blocks import lines, lists, render
from bot.slack.blocks.render import ButtonValue
from tests.conftest import QUORUM_POLICY
from tests.slack.test_render import (
    NOW,
    POLICY,
    TIMEOUTS,
    after,
    buttons,
    decide,
    make,
    mrkdwn_texts,
    validate,
    validate_blocks,
)

# -- escalation, status lines, refusals -------------------------------------------------------


def test_escalation_message_mentions_the_new_level_with_the_same_buttons() -> None:
    req = make()
    up = decide(req, Event.TIMEOUT, "system", at=NOW + 600_000)
    assert up.level == 1
    msg = render.escalation_message(up, now_ms=NOW + 600_000)
    validate(msg)
    assert msg.blocks[0]["text"]["text"].startswith("⏫ Escalated")
    intro = msg.blocks[1]["text"]["text"]
    assert intro.startswith("<@UONCALL>: nobody decided") and "(level 2 of 3)" in intro
    assert "`r00001`" in intro
    original = buttons(render.approval_message(up, now_ms=NOW).blocks)
    assert {k: v["value"] for k, v in buttons(msg.blocks).items()} == {
        k: v["value"] for k, v in original.items()
    }
    assert lines.status_line(up, "timeout") == "⏫ Escalated to level 2: <@UONCALL>"


def test_status_line_for_every_step_of_a_life() -> None:
    req = make()
    assert lines.status_line(req, "create").startswith("📝 Approval requested for `refund`")
    free = lines.status_line(req, "no_review")
    assert free.startswith("⏩ Ran without review, by policy: `refund(amount=1200, currency=")
    ok = decide(req, Event.APPROVE)
    assert lines.status_line(ok, "approve") == "✅ Approved by <@UBOSS> (1 of 1)"
    running = decide(ok, Event.CLAIM, "system")
    assert lines.status_line(running, "claim") == "▶️ Executing"
    assert lines.status_line(decide(running, Event.SUCCEED, "system"), "succeed") == "✔️ Completed"
    failing = decide(running, Event.FAIL, "system", detail="timeout <!here>", has_compensation=True)
    assert lines.status_line(failing, "fail") == "⚠️ Failed: timeout &lt;!here&gt;; rolling back"
    back = decide(failing, Event.ROLLBACK_OK, "system")
    assert lines.status_line(back, "rollback_ok").startswith("↩️ Rolled back")
    stuck = decide(running, Event.FAIL, "system", detail="bank <b>down</b>")
    assert (
        lines.status_line(stuck, "fail")
        == "🆘 Manual intervention needed: bank &lt;b&gt;down&lt;/b&gt;"
    )
    gone = after(req, *TIMEOUTS)
    assert lines.status_line(gone, "timeout") == "⌛ Rejected by policy (nobody answered in time)"
    late = decide(ok, Event.TIMEOUT, "system", at=NOW + 10**9)
    assert lines.status_line(late, "timeout").startswith("⌛ Approved but never started")
    stopped = decide(req, Event.CANCEL, "U0OPS", text="run stopped")
    assert lines.status_line(stopped, "cancel") == "🚫 Withdrawn by <@U0OPS>: run stopped"
    # A correction withdraws one call, and the run goes on: not "cancelled"
    fixed = decide(req, Event.CANCEL, "UKID", reason_code="superseded")
    assert lines.status_line(fixed, "cancel") == "🚫 Withdrawn: <@UKID> corrected the agent"
    halted = decide(req, Event.CANCEL, "UKID", reason_code="run_stopped")
    assert lines.status_line(halted, "cancel") == "🚫 Withdrawn: <@UKID> stopped the run"


def test_an_auto_approval_says_the_policy_approved_it_in_words() -> None:
    tier = {"review_timeout": "10m", "reviewers": {"users": ["UBOSS"]}, "approvers": ["UBOSS"]}
    tiers = {t: tier for t in ("medium", "high", "critical")}
    tiers["low"] = tier | {"on_exhausted": "auto_approved"}
    policy = parse_policy({"tiers": tiers, "tools": {"post_note": {"tier": "low"}}})
    low = make("post_note", {"text": "hi"}, policy=policy)
    assert low.risk.value == "low"
    gone = after(low, (Event.TIMEOUT, {"actor": "system", "at": NOW + 10**8}))
    assert gone.state.value == "auto_approved"
    assert lines.status_line(gone, "timeout") == "✅ Approved by policy (nobody answered in time)"


def test_a_high_risk_confirm_with_no_amount_shows_no_empty_value() -> None:
    req = make("refund_cents", {"order": "A1004"}, risk=RiskTier.HIGH)
    confirm = buttons(render.approval_message(req, now_ms=NOW).blocks)[render.ACTION_APPROVE]
    text = confirm["confirm"]["text"]["text"]
    assert text == (
        "refund_cents, with the arguments on the card. It runs exactly as shown once approved."
    )
    paid = make("refund", {"amount": 4200, "currency": "USD"}, risk=RiskTier.HIGH)
    confirm = buttons(render.approval_message(paid, now_ms=NOW).blocks)[render.ACTION_APPROVE]
    assert confirm["confirm"]["text"]["text"].startswith("refund: amount 4,200 USD.")


def test_refusals_say_what_happened_in_slack_terms() -> None:
    text = lines.refusal("already_resolved", by="UBOSS", at=NOW, how="approved")
    assert text == (
        ":information_source: Already approved by <@UBOSS> "
        "(<!date^1800000000^{date_short_pretty} at {time}|2027-01-15T08:00:00Z>); nothing changed."
    )
    expired = lines.refusal("expired", at=NOW, default="auto_rejected")
    assert "expired (<!date^1800000000^" in expired and "auto_rejected" in expired
    for kind in ("expired", "not_eligible", "stale_payload", "invalid"):
        said = lines.refusal(kind, detail="U1 <!channel> may not")
        assert "&lt;!channel&gt;" in said and "<!channel>" not in said
        assert lines.refusal(kind)  # a sensible default with no details
    stale = lines.refusal("stale_payload", seen="a" * 64, current="b" * 64)
    assert "`aaaaaaaaaaaa`" in stale and "`bbbbbbbbbbbb`" in stale
    with pytest.raises(ValueError, match="unknown refusal"):
        lines.refusal("nope")


# -- questions, runs, slash commands -------------------------------------------------------------


def test_question_offers_an_answer_button_until_answered() -> None:
    q = Question(
        id="q7",
        run_id="run42",
        question="Refund <!channel> or not?",
        asked_at=NOW,
        expires_at=NOW + 3_600_000,
    )
    msg = render.question_message(q, ["U0REQUESTER", "S0TEAM"], now_ms=NOW)
    validate(msg)
    text = "\n".join(mrkdwn_texts(msg.blocks))
    assert "Refund &lt;!channel&gt; or not?" in text
    assert "<@U0REQUESTER>, <!subteam^S0TEAM> Deadline: <!date^1800003600^" in text
    assert buttons(msg.blocks)["hitl_answer"]["value"] == "q7"
    answered = q.model_copy(
        update={
            "state": QuestionState.ANSWERED,
            "answer": "yes <b>",
            "answered_by": "UBOSS",
            "answered_at": NOW + 5,
        }
    )
    done = render.question_message(answered, ["U0REQUESTER"], now_ms=NOW)
    validate(done)
    assert not buttons(done.blocks)
    text = "\n".join(mrkdwn_texts(done.blocks))
    assert "*Answered by* <@UBOSS>" in text and "yes &lt;b&gt;" in text
    expired = render.question_message(
        q.model_copy(update={"state": QuestionState.EXPIRED}), [], now_ms=NOW
    )
    assert not buttons(expired.blocks) and "Nobody answered" in expired.text


def test_run_header_shows_prompt_requester_and_state() -> None:
    run = Run(
        id="run42",
        agent="billing",
        prompt="Refund <@U1> twice & more",
        requester="U0REQUESTER",
        created_at=NOW,
        updated_at=NOW,
        state=RunState.RUNNING,
    )
    head = render.run_header(run)
    validate(head)
    text = "\n".join(mrkdwn_texts(head.blocks))
    assert "Refund &lt;@U1&gt; twice &amp; more" in text and "<@U0REQUESTER>" in text
    assert "🏃 Running" in text and "Reply in this thread" in text
    done = render.run_header(
        run.model_copy(update={"state": RunState.FINISHED, "result": "Refunded 2 <ok>"})
    )
    validate(done)
    assert done.text.startswith("🏁 Finished · billing run `run42`") and done.text.endswith(
        "Refunded 2 &lt;ok&gt;"
    )


def test_policy_summary_lists_tiers_chain_defaults_and_approvers() -> None:
    summary = lists.policy_summary(POLICY)
    validate(summary)
    text = "\n".join(mrkdwn_texts(summary.blocks))
    assert "*:large_orange_circle: HIGH* · review within 10 min" in text
    assert "1. #approvals (10 min) → 2. <@UONCALL> (10 min) → 3. <@ULEAD> (5 min)" in text
    assert "*When nobody answers:* auto_rejected" in text
    assert "2 approvals from anyone" in text  # critical
    assert "from <@UBOSS>, <!subteam^SFINANCE>" in text  # high
    assert "`refund` → medium; `amount &gt; 1000` → high" in text
    assert "`move_claw` → low, no review" in text
    many = parse_policy(
        {
            **QUORUM_POLICY,
            "tools": {f"tool_{i:03d}_" + "x" * 60: {"tier": "low"} for i in range(1500)},
        }
    )
    validate(lists.policy_summary(many))


def test_pending_list_counts_down_and_caps_at_fifty_blocks() -> None:
    empty = lists.pending_list([], now_ms=NOW)
    validate(empty)
    assert "Nothing is waiting" in empty.text
    req = make()
    listed = lists.pending_list([req], now_ms=NOW + 120_000)
    validate(listed)
    text = "\n".join(mrkdwn_texts(listed.blocks))
    assert "`refund`" in text and "(in 8 min)" in text
    assert ButtonValue.decode(buttons(listed.blocks)["hitl_view"]["value"]) == (
        req.id,
        req.payload_hash,
    )
    overdue = "\n".join(mrkdwn_texts(lists.pending_list([req], now_ms=NOW + 720_000).blocks))
    assert "(overdue by 2 min)" in overdue
    lots = lists.pending_list([req] * 300, now_ms=NOW)
    validate_blocks(lots.blocks)
    assert len(lots.blocks) == 50 and "and 252 more" in lots.blocks[-1]["elements"][0]["text"]


def test_audit_text_escapes_and_caps() -> None:
    entries = [
        AuditEntry(
            seq=i,
            at=NOW + i,
            actor="U0BOSS" if i % 2 else "system",
            kind="transition",
            event="reject",
            from_state="pending_review",
            to_state="cancelled",
            reason_code="other",
            text="<!channel> " * 40,
            payload_hash="f" * 64,
            version=i,
            prev="",
        )
        for i in range(1, 1001)
    ]
    audit = lists.audit_text(entries)
    validate(audit)
    text = "\n".join(mrkdwn_texts(audit.blocks))
    assert "`1` <!date^1800000000^{date_short} {time_secs}|" in text
    assert "*reject* pending_review → cancelled · system · `other` — &lt;!channel&gt;" in text
    assert "hitl-bot audit export" in audit.blocks[-1]["elements"][0]["text"]
    assert "No audit entries" in "\n".join(mrkdwn_texts(lists.audit_text([]).blocks))
