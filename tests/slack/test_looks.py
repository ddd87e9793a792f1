"""What an approver reads on a card and in a run's thread: who may decide,
dates that read as a sentence, the executing and outcome lines, the calls without review."""

from __future__ import annotations

import json
import re

from bot.core.models import Question, QuestionState
from bot.core.states import Event
from bot.demo.policy import demo_policy
from bot.slack.blocks import lines, lists, render, views
from bot.slack.blocks.call import free_item, free_line
from tests.slack.test_render import NOW, decide, make, mrkdwn_texts, validate

DEMO = demo_policy()
DATE = r"<!date\^\d+\^[^|>]*\|[^>]*>"


def _fields(blocks: list[dict[str, object]]) -> dict[str, str]:
    out = {}
    for text in mrkdwn_texts(blocks):
        name, _, value = text.partition("\n")
        if name.startswith("*") and name.endswith("*"):
            out[name.strip("*")] = value
    return out


def test_the_card_names_who_may_decide_when_the_tier_lists_no_approvers() -> None:
    # The demo's medium tier: no `approvers`, its first level is the parent.
    req = make("drop_claw", {"target": "bear"}, requester="UKID", policy=DEMO)
    card = render.approval_message(req, now_ms=NOW)
    validate(card)
    assert _fields(card.blocks)["May decide"] == "<@UPARENT>"
    # Once escalated, the on-call group may decide too.
    up = decide(req, Event.TIMEOUT, "system", at=NOW + 10**6)
    assert _fields(render.approval_message(up, now_ms=NOW).blocks)["May decide"] == (
        "<@UPARENT>, <!subteam^SONCALL>"
    )
    modal = "\n".join(mrkdwn_texts(views.payload_modal(req)["blocks"]))
    assert "*May decide:* <@UPARENT>" in modal


def test_the_policy_view_says_who_approves_each_tier_with_a_real_plural() -> None:
    text = "\n".join(mrkdwn_texts(lists.policy_summary(DEMO).blocks))
    assert "1 approval from <@UPARENT>, and each escalation" in text  # medium
    assert "1 approval from <!subteam^SFINANCE>, and" in text  # high
    assert "2 approvals from <!subteam^SFINANCE>" in text  # critical
    assert "from  " not in text and "approval(s)" not in text


def test_dates_are_never_preceded_by_a_second_at() -> None:
    req = make()
    seen = [
        render.approval_message(decide(req, Event.APPROVE), now_ms=NOW),
        render.approval_message(decide(req, Event.REJECT, reason_code="policy"), now_ms=NOW),
    ]
    q = Question(id="q1", run_id="run42", question="Which one?", asked_at=NOW, expires_at=NOW + 1)
    answered = q.model_copy(
        update={
            "state": QuestionState.ANSWERED,
            "answer": "the bear",
            "answered_by": "UKID",
            "answered_at": NOW,
        }
    )
    seen += [render.question_message(x, ["UKID"], now_ms=NOW) for x in (q, answered)]
    texts = [t for r in seen for t in mrkdwn_texts(r.blocks)]
    texts.append(lines.refusal("already_resolved", by="UBOSS", at=NOW, how="approved"))
    texts.append(lines.refusal("expired", at=NOW, default="auto_rejected"))
    joined = "\n".join(texts)
    assert re.search(DATE, joined)
    # "{date_short_pretty} at {time}" reads "Today at 9:00 AM": a word "at" before it
    # would read "at Today at 9:00 AM".
    assert not re.search(r"\b(at|created) " + DATE, joined), joined
    assert "*Answered by* <@UKID> · <!date^" in joined


def test_executing_shows_no_result_and_completed_shows_it() -> None:
    running = decide(decide(make(), Event.APPROVE), Event.CLAIM, "system")
    done = decide(running, Event.SUCCEED, "system", detail="Grabbed the bear!")
    # The notifier renders an earlier event from the latest request: at "claim" the
    # request may already carry the executor's report.
    then = done.model_copy(update={"state": running.state})
    assert lines.status_line(then, "claim") == "▶️ Executing"
    assert lines.status_line(done, "succeed") == (
        "✔️ Completed. Reported by the executor: Grabbed the bear!"
    )
    card = render.approval_message(done, now_ms=NOW).blocks
    assert "*Reported by the executor:* Grabbed the bear!" in json.dumps(card, ensure_ascii=False)


def test_a_call_without_review_shows_its_arguments_compactly_and_escaped() -> None:
    req = make("move_claw", {"direction": "left", "note": "<!channel> `x`"}, policy=DEMO)
    line = lines.status_line(req, "no_review")
    assert line == (
        "⏩ Ran without review, by policy: "
        '`move_claw(direction="left", note="&lt;!channel&gt; \u02cbx\u02cb")` (low risk)'
    )
    many = free_line([free_item(req)] * 3)
    assert many.startswith("⏩ 3 calls ran without review, by policy:\n• `move_claw(")
    assert many.count("\n• ") == 3
