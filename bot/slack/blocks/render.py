"""Block Kit for every message hitl-bot posts: pure functions of the request, no I/O, no clock.

Whatever the agent put in the arguments shows literally (escaped, in code) and
never breaks a Slack limit; every button carries the request id and the full
payload hash the person saw, so a click decides exactly the call on screen.
A request's thread lines and the refusals of a click are in `bot.slack.blocks.lines`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from bot.core.candidates import chosen
from bot.core.models import (
    RUN_FINAL,
    ActionRequest,
    Level,
    Question,
    QuestionState,
    Resolution,
    Run,
)
from bot.core.models import RiskTier as Risk
from bot.core.pagers import pages
from bot.core.states import FINAL, Event, ReasonCode
from bot.core.states import State as S
from bot.slack import messages as smsg
from bot.slack.blocks import escape as esc
from bot.slack.blocks.call import DECISION_KEYS as DECISION_KEYS  # part of this module's API
from bot.slack.blocks.call import call_blocks as call_blocks
from bot.slack.blocks.call import decision_fields
from bot.slack.blocks.escape import Block, field, section
from bot.slack.blocks.escape import ButtonValue as ButtonValue  # part of this module's API
from bot.slack.blocks.options import option_actions
from bot.slack.blocks.proposals import proposal_blocks, reject_row

SHORT_WINDOW_MS = 2 * 60_000  # a deadline closer than this is shown to the second

ACTION_APPROVE = "hitl_approve"
ACTION_REJECT = "hitl_reject"
ACTION_EDIT = "hitl_edit"
ACTION_VIEW = "hitl_view"
ACTION_ANSWER = "hitl_answer"
VIEW_REJECT = "hitl_reject_modal"
VIEW_EDIT = "hitl_edit_modal"
VIEW_ANSWER = "hitl_answer_modal"
VIEW_PAYLOAD = "hitl_payload_modal"
# Modal inputs: Slack keys submitted values (and validation errors) by block id, then action id.
REASON_BLOCK, REASON_ACTION = "hitl_reason_code", "hitl_reason_code_select"
REASON_TEXT_BLOCK, REASON_TEXT_ACTION = "hitl_reason_text", "hitl_reason_text_input"
ARGS_BLOCK, ARGS_ACTION = "hitl_edit_args", "hitl_edit_args_input"
ANSWER_BLOCK, ANSWER_TEXT_ACTION = "hitl_answer_text", "hitl_answer_text_input"

HIGH_RISK = frozenset({Risk.HIGH, Risk.CRITICAL})


@dataclass(frozen=True)
class Rendered:
    text: str  # the notification fallback, escaped
    blocks: list[dict[str, Any]]


def decorate(msg: Rendered, extra: list[Block]) -> Rendered:
    """The card with `extra` (a feature's blocks, bot/slack/seams.py) above its foot line,
    within Slack's block limit: past it the card stays as it was, buttons and all."""
    if not extra:
        return msg
    blocks = [*msg.blocks[:-1], *extra, *msg.blocks[-1:]]
    if len(blocks) > esc.MESSAGE_BLOCKS:
        return msg
    return Rendered(msg.text, blocks)


def blocks_hash(blocks: list[dict[str, Any]]) -> str:
    """sha256 of the blocks as canonical JSON: what the audit records the approver saw."""
    text = json.dumps(blocks, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


# -- pieces shared by messages and modals -------------------------------------------------


def risk_word(req: ActionRequest) -> str:
    return f"{smsg.RISK_EMOJI[req.risk.value]} {req.risk.value.upper()}"


def state_label(req: ActionRequest) -> str:
    res = req.resolution
    if req.state == S.CANCELLED and res is not None and res.event == Event.REJECT:
        return smsg.STATE_LABELS[S.REJECTED.value]
    if req.state == S.CANCELLED and res is not None and res.event == Event.CANCEL:
        return smsg.WITHDRAWN_LABEL  # what the body's "Withdrawn by" says too
    return smsg.STATE_LABELS.get(req.state.value, esc.mrkdwn(req.state.value))


def level_who(lvl: Level, limit: int = 1000) -> str:
    """Who one level of the chain waits for: users and groups mentioned, channels by name."""
    items = [esc.principal(n) for n in (*lvl.users, *lvl.groups, *lvl.channels)]
    if pages(lvl):
        items.append(smsg.LEVEL_PAGER)
    return esc.join_fit(items, limit) or smsg.ANYONE_ELIGIBLE


def waiting_for(req: ActionRequest, limit: int = 1000) -> str:
    return level_who(req.assignees, limit) if req.levels else smsg.ANYONE_ELIGIBLE


# (state, resolution) pairs where "Rejected by X at T" already says the state.
_SAID_BY_RESOLUTION = {
    (S.APPROVED, Event.APPROVE),
    (S.APPROVED, Event.EDIT_AND_APPROVE),
    (S.CANCELLED, Event.REJECT),
    (S.CANCELLED, Event.CANCEL),
}


def outcome_text(req: ActionRequest) -> str | None:
    """What happened, once the request left review: state, who, when, why, the report."""
    if req.state == S.PENDING_REVIEW:
        return None
    res = req.resolution
    said = res is not None and (req.state, res.event) in _SAID_BY_RESOLUTION
    lines = [] if said else [f"*{smsg.F_OUTCOME}* {state_label(req)}"]
    if res is not None:
        lines.append((f"*{smsg.F_OUTCOME}* " if said else "") + resolution_line(res, req))
        if res.reason_code or res.text:
            lines.append(f"*{smsg.F_REASON}* {reason_words(res, 1500)}")
    if req.detail:
        lines.append(f"*{smsg.F_REPORT}* {esc.fit(req.detail, 1000)}")
    return "\n".join(lines)


def resolution_line(res: Resolution, req: ActionRequest | None = None) -> str:
    who, at = esc.user(res.actor), esc.date(res.at)
    pick = chosen(req) if req is not None and res.event == Event.EDIT_AND_APPROVE else None
    if pick is not None:
        return smsg.RESOLUTION_CHOSEN.format(n=pick + 1, who=who, at=at)
    how = smsg.RESOLUTION.get(res.event.value, smsg.RESOLUTION_OTHER)
    return how.format(who=who, at=at, event=res.event.value)


def reason_words(res: Resolution, limit: int) -> str:
    """Why, as a person reads it: their own words for "other" (a thread reply's reason),
    a reason code's label, the bot's reasons in words; an unknown code as it is."""
    code = res.reason_code or ""
    text = esc.fit(res.text, limit) if res.text else ""
    if code in ("", ReasonCode.OTHER.value) and text:
        return text
    label = smsg.REASON_LABELS.get(code) or smsg.SYSTEM_REASONS.get(code)
    word = label if label is not None else esc.inline_code(code, 100)
    return f"{word} — {text}" if text else word


def approvals_text(req: ActionRequest) -> str:
    names = esc.join_fit([esc.user(a.actor) for a in req.approvals], 1500)
    count = smsg.N_OF.format(n=len(req.approvals), total=req.quorum)
    return f"{count}: {names}" if names else count


def action_buttons(req: ActionRequest) -> Block:
    value = ButtonValue.encode(req.id, req.payload_hash)
    check = _confirm(req) if req.risk in HIGH_RISK else None
    row = [
        esc.button(smsg.BTN_APPROVE, ACTION_APPROVE, value, style="primary", confirm=check),
        esc.button(smsg.BTN_REJECT, ACTION_REJECT, value, style="danger"),
    ]
    if req.allow_edit:
        row.append(esc.button(smsg.BTN_EDIT, ACTION_EDIT, value))
    row.append(esc.button(smsg.BTN_VIEW, ACTION_VIEW, value))
    return esc.actions(row, block_id="hitl_actions")


def _confirm(req: ActionRequest) -> Block:
    details = "; ".join(f"{k} {esc.truncate(v, 80)}" for k, v in decision_fields(req.args)[:4])
    tool = esc.truncate(req.tool, 80)
    # With no amount or target to repeat, "tool: -" would read as a missing value.
    if details:
        text = smsg.CONFIRM_TEXT.format(tool=tool, details=details)
    else:
        text = smsg.CONFIRM_TEXT_BARE.format(tool=tool)
    title = smsg.CONFIRM_TITLE.format(risk=req.risk.value.upper())
    return esc.confirm(title, text, smsg.BTN_APPROVE, smsg.BTN_BACK)


# -- the approval message and its escalation -------------------------------------------


def approval_message(req: ActionRequest, *, now_ms: int, run_title: str | None = None) -> Rendered:
    """`run_title`: what an outside agent's run is (a Claude Code session's folder), on
    the cards in the run's thread so a person knows which session they steer there."""
    head = (smsg.HEAD_PENDING if req.state == S.PENDING_REVIEW else smsg.HEAD_STATE).format(
        risk=risk_word(req), state=state_label(req)
    )
    return Rendered(_fallback(req), _request_blocks(req, head, None, now_ms, run_title))


def escalation_message(req: ActionRequest, *, now_ms: int) -> Rendered:
    if req.state != S.PENDING_REVIEW:
        return approval_message(req, now_ms=now_ms)
    intro = smsg.ESCALATION_INTRO.format(
        who=waiting_for(req), level=req.level + 1, total=len(req.levels), id=esc.code(req.id)
    )
    head = smsg.HEAD_ESCALATED.format(risk=risk_word(req))
    text = esc.truncate(f"{smsg.ESCALATION_FALLBACK} {_fallback(req)}", esc.MESSAGE_TEXT)
    return Rendered(text, _request_blocks(req, head, intro, now_ms))


def _request_blocks(
    req: ActionRequest, head: str, intro: str | None, now_ms: int, run_title: str | None = None
) -> list[Block]:
    blocks = [esc.header(head, "hitl_head")]
    if run_title and req.run_id:
        title = esc.mrkdwn(esc.truncate(run_title, 200))
        line = smsg.RUN_TITLE_LINE.format(
            title=title, id=esc.code(req.run_id), raw_id=esc.mrkdwn(req.run_id)
        )
        blocks.append(esc.context(line, block_id="hitl_run"))
    if intro:
        blocks.append(section(intro, block_id="hitl_intro"))
    blocks += proposal_blocks(req) if req.candidates else call_blocks(req)
    blocks.append(section(f"*{smsg.F_DETAILS}*", fields=_meta(req, now_ms), block_id="hitl_meta"))
    if (outcome := outcome_text(req)) is not None:
        blocks.append(section(outcome, block_id="hitl_outcome"))
    if req.state == S.PENDING_REVIEW:
        blocks.append(reject_row(req, ACTION_REJECT) if req.candidates else action_buttons(req))
    foot = smsg.REQUEST_FOOT.format(id=esc.code(req.id), at=esc.date(req.created_at))
    blocks.append(esc.context(foot, block_id="hitl_foot"))
    return esc.cap(blocks, esc.MESSAGE_BLOCKS, smsg.BLOCKS_CUT)


def _meta(req: ActionRequest, now_ms: int) -> list[str]:
    out = [
        field(smsg.F_RUN, esc.code(req.run_id)),
        field(smsg.F_REQUESTER, esc.user(esc.truncate(req.requester, 300))),
        field(smsg.F_HASH, f"`{req.payload_hash[:12]}`"),
    ]
    if req.on_behalf_of:
        out.insert(2, field(smsg.F_ON_BEHALF_OF, esc.user(esc.truncate(req.on_behalf_of, 300))))
    if req.original_hash:
        was = smsg.F_CHOSEN_FROM if req.candidates else smsg.F_EDITED_FROM
        out.append(field(was, f"`{req.original_hash[:12]}`"))
    label = smsg.DEADLINE_LABELS.get(req.state.value)
    if label and req.expires_at is not None and req.state not in FINAL:
        passed = f" {smsg.DEADLINE_PASSED}" if now_ms >= req.expires_at else ""
        # A short window (a 45-second review) read to the minute says nothing: seconds.
        short = 0 < req.expires_at - now_ms < SHORT_WINDOW_MS
        when = esc.date(req.expires_at, esc.TO_THE_SECOND) if short else esc.date(req.expires_at)
        out.append(field(label, when + passed))
    if req.state == S.PENDING_REVIEW:
        level = smsg.N_OF.format(n=req.level + 1, total=max(len(req.levels), 1))
        out.append(field(smsg.F_LEVEL, level))
        out.append(field(smsg.F_WAITING, waiting_for(req)))
    if req.state == S.PENDING_REVIEW or req.approvals:
        out.append(field(smsg.F_APPROVALS, approvals_text(req)))
    if req.state == S.PENDING_REVIEW:
        out.append(field(smsg.F_APPROVERS, deciders_text(req)))
    return out


def deciders_text(req: ActionRequest, limit: int = 1500) -> str:
    """Who may decide now, mentioned: the approvers and every level reached so far."""
    names = req.deciders()
    if "*" in names:
        return smsg.ANYONE_ELIGIBLE
    return esc.join_fit([esc.principal(a) for a in names], limit) or smsg.NOBODY


def _fallback(req: ActionRequest) -> str:
    how = smsg.FALLBACK_PENDING if req.state == S.PENDING_REVIEW else smsg.FALLBACK_STATE
    text = how.format(
        risk=req.risk.value.upper(),
        tool=esc.fit(req.tool, 200),
        id=esc.fit(req.id, 200),
        state=state_label(req),
    )
    return esc.truncate(text, esc.MESSAGE_TEXT)


# -- questions and runs ------------------------------------------------------------------


def question_message(q: Question, mention: list[str], *, now_ms: int) -> Rendered:
    run = smsg.Q_RUN.format(run=esc.code(q.run_id)) if q.run_id else ""
    blocks = [section(smsg.Q_HEAD + run, block_id="hitl_q_head")]
    blocks += esc.text_sections(q.question, 10, "hitl_q")
    if q.state == QuestionState.OPEN:
        who = esc.join_fit([esc.principal(m) for m in mention], 1000)
        due = smsg.Q_DUE.format(at=esc.date(q.expires_at))
        due += f" {smsg.DEADLINE_PASSED}" if now_ms >= q.expires_at else ""
        blocks.append(section(f"{who} {due}".strip(), block_id="hitl_q_due"))
        if q.options:
            blocks += option_actions(q)
        else:
            answer = esc.button(smsg.BTN_ANSWER, ACTION_ANSWER, q.id, style="primary")
            blocks.append(esc.actions([answer], block_id="hitl_q_actions"))
        text = smsg.Q_FALLBACK.format(question=esc.fit(q.question, 1000))
    elif q.state == QuestionState.ANSWERED:
        by = esc.user(q.answered_by or "?")
        at = esc.date(q.answered_at if q.answered_at is not None else q.expires_at)
        blocks.append(section(smsg.Q_ANSWERED.format(who=by, at=at), block_id="hitl_q_by"))
        blocks += esc.text_sections(q.answer or "", 10, "hitl_q_answer")
        text = smsg.Q_FALLBACK_ANSWERED.format(who=by, answer=esc.fit(q.answer or "", 1000))
    else:
        closed = smsg.Q_CLOSED[q.state.value].format(at=esc.date(q.expires_at))
        blocks.append(section(closed, block_id="hitl_q_closed"))
        text = closed
    blocks.append(esc.context(smsg.Q_FOOT.format(id=esc.code(q.id)), block_id="hitl_q_foot"))
    return Rendered(esc.truncate(text, esc.MESSAGE_TEXT), esc.cap(blocks, 50, smsg.BLOCKS_CUT))


def run_header(run: Run) -> Rendered:
    label = smsg.RUN_LABELS.get(run.state.value, esc.mrkdwn(run.state.value))
    facts = [
        field(smsg.F_REQUESTER, esc.user(esc.truncate(run.requester, 300))),
        field(smsg.F_STATE, label),
        field(smsg.F_RUN, esc.code(run.id)),
        field(smsg.F_TURNS, str(run.turns)),
    ]
    if run.waiting_on:
        facts.append(field(smsg.F_WAITING_ON, esc.code(run.waiting_on)))
    prompt = f"*{smsg.F_PROMPT}*\n{esc.fit(run.prompt, 2800)}"
    blocks = [
        esc.header(smsg.RUN_HEAD.format(agent=run.agent), "hitl_run_head"),
        section(prompt, fields=facts, block_id="hitl_run"),
    ]
    outcome = run.error or run.result
    if outcome:
        name = smsg.F_ERROR if run.error else smsg.F_RESULT
        blocks.append(section(f"*{name}*\n{esc.fit(outcome, 2800)}", block_id="hitl_run_end"))
    if run.state not in RUN_FINAL:
        blocks.append(esc.context(smsg.RUN_STEER_HINT, block_id="hitl_run_foot"))
    text = smsg.RUN_FALLBACK.format(state=label, agent=esc.fit(run.agent, 200), id=esc.code(run.id))
    if outcome and run.state in RUN_FINAL:
        text += f": {esc.fit(outcome, 1500)}"
    return Rendered(esc.truncate(text, esc.MESSAGE_TEXT), blocks)
