"""Modals and the lists the App Home shows, as pure functions; and readers for what a
modal sends back.

A modal that would decide a request carries the request id and the full payload
hash it was opened on (`private_metadata`), so its submission decides that
exact call or is refused as stale.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot import messages as msg
from bot.core.models import ActionRequest, Question, QuestionState
from bot.core.states import ReasonCode
from bot.core.states import State as S
from bot.slack import messages as smsg
from bot.slack.blocks import escape as esc
from bot.slack.blocks import messages as vmsg
from bot.slack.blocks.call import call_blocks, hidden_warning
from bot.slack.blocks.escape import Block, ButtonValue, field, section
from bot.slack.blocks.render import (
    ANSWER_BLOCK,
    ANSWER_TEXT_ACTION,
    ARGS_ACTION,
    ARGS_BLOCK,
    REASON_ACTION,
    REASON_BLOCK,
    REASON_TEXT_ACTION,
    REASON_TEXT_BLOCK,
    VIEW_ANSWER,
    VIEW_EDIT,
    VIEW_PAYLOAD,
    VIEW_REJECT,
    approvals_text,
    deciders_text,
    level_who,
    outcome_text,
    risk_word,
    state_label,
)

__all__ = [
    "ANSWER_BLOCK",
    "ARGS_BLOCK",
    "REASON_BLOCK",
    "REASON_TEXT_BLOCK",
    "answer_modal",
    "edit_modal",
    "parse_answer",
    "parse_edit",
    "parse_reject",
    "payload_modal",
    "reject_modal",
]

View = dict[str, Any]


def _modal(
    callback_id: str,
    title: str,
    blocks: list[Block],
    *,
    submit: str | None = None,
    metadata: str = "",
    close: str = vmsg.MODAL_CANCEL,
) -> View:
    view: View = {
        "type": "modal",
        "callback_id": callback_id,
        "title": esc.plain(title, esc.MODAL_TITLE),
        "close": esc.plain(close, esc.MODAL_TITLE),
        "blocks": esc.cap(blocks, esc.VIEW_BLOCKS, smsg.BLOCKS_CUT),
    }
    if submit:
        view["submit"] = esc.plain(submit, esc.MODAL_TITLE)
    if metadata:
        view["private_metadata"] = metadata[: esc.PRIVATE_METADATA]
    return view


def _text_input(
    block_id: str,
    action_id: str,
    label: str,
    *,
    initial: str | None = None,
    optional: bool = False,
    hint: str | None = None,
) -> Block:
    element: Block = {
        "type": "plain_text_input",
        "action_id": action_id,
        "multiline": True,
        "max_length": esc.INPUT_MAX,
    }
    if initial:
        element["initial_value"] = initial[: esc.INPUT_MAX]
    block: Block = {
        "type": "input",
        "block_id": block_id,
        "label": esc.plain(label, esc.INPUT_LABEL),
        "element": element,
        "optional": optional,
    }
    if hint:
        block["hint"] = esc.plain(hint, esc.INPUT_LABEL)
    return block


def _not_pending(callback_id: str, title: str, req: ActionRequest) -> View | None:
    if req.state == S.PENDING_REVIEW:
        return None
    notice = section(vmsg.NOT_PENDING.format(state=state_label(req)), block_id="hitl_not_pending")
    return _modal(callback_id, title, [notice, *call_blocks(req)], close=vmsg.MODAL_CLOSE)


def reason_inputs() -> list[Block]:
    """A rejection's reason code (required) and words (optional): the reject modal's, and
    the batch digest's "Reject all" (bot/slack/batch/card.py)."""
    reasons = [esc.option(smsg.REASON_LABELS.get(c.value, c.value), c.value) for c in ReasonCode]
    select: Block = {
        "type": "input",
        "block_id": REASON_BLOCK,
        "label": esc.plain(vmsg.REJECT_REASON_LABEL, esc.INPUT_LABEL),
        "element": {
            "type": "static_select",
            "action_id": REASON_ACTION,
            "placeholder": esc.plain(vmsg.REJECT_REASON_PLACEHOLDER, esc.PLACEHOLDER),
            "options": reasons,
        },
    }
    text = _text_input(
        REASON_TEXT_BLOCK,
        REASON_TEXT_ACTION,
        vmsg.REJECT_TEXT_LABEL,
        optional=True,
        hint=vmsg.REJECT_TEXT_HINT,
    )
    return [select, text]


def reject_modal(req: ActionRequest) -> View:
    if (closed := _not_pending(VIEW_REJECT, vmsg.REJECT_TITLE, req)) is not None:
        return closed
    intro = vmsg.REJECT_INTRO.format(
        tool=esc.code(req.tool), id=esc.code(req.id), hash=f"`{req.payload_hash[:12]}`"
    )
    blocks = [section(intro, block_id="hitl_reject_intro"), *call_blocks(req), *reason_inputs()]
    return _modal(
        VIEW_REJECT,
        vmsg.REJECT_TITLE,
        blocks,
        submit=vmsg.REJECT_SUBMIT,
        metadata=ButtonValue.encode(req.id, req.payload_hash),
    )


def edit_modal(req: ActionRequest, *, error: str | None = None, draft: str | None = None) -> View:
    """The arguments as JSON in a text box; when they cannot fit it, a notice and no submit."""
    if (closed := _not_pending(VIEW_EDIT, vmsg.EDIT_TITLE, req)) is not None:
        return closed
    if not req.allow_edit:
        notice = section(msg.EDIT_NOT_ALLOWED.format(tool=esc.code(req.tool)), block_id="hitl_edit")
        return _modal(
            VIEW_EDIT,
            vmsg.EDIT_TITLE,
            [notice, *call_blocks(req)],
            close=vmsg.MODAL_CLOSE,
        )
    initial, why = draft, None
    if initial is None:
        initial = esc.pretty_json(req.args)
        if len(initial) > esc.INPUT_MAX:
            initial = esc.pretty_json(req.args, indent=None)
        if initial == smsg.ARGS_UNREADABLE:
            why = smsg.ARGS_UNREADABLE
    if len(initial) > esc.INPUT_MAX:
        why = vmsg.EDIT_TOO_LARGE.format(size=len(initial), limit=esc.INPUT_MAX)
    if why is not None:  # a text box that cannot hold the call would lose part of it
        blocks = [section(why, block_id="hitl_edit_cannot"), *call_blocks(req)]
        return _modal(VIEW_EDIT, vmsg.EDIT_TITLE, blocks, close=vmsg.MODAL_CLOSE)
    intro = vmsg.EDIT_INTRO.format(tool=esc.code(req.tool), hash=f"`{req.payload_hash[:12]}`")
    blocks = [section(intro, block_id="hitl_edit_intro")]
    if error:
        blocks.append(
            section(vmsg.EDIT_ERROR.format(error=esc.fit(error, 2000)), block_id="hitl_err")
        )
    blocks.append(
        _text_input(ARGS_BLOCK, ARGS_ACTION, vmsg.EDIT_LABEL, initial=initial, hint=vmsg.EDIT_HINT)
    )
    if req.quorum > 1:
        blocks.append(esc.context(vmsg.EDIT_QUORUM.format(quorum=req.quorum)))
    return _modal(
        VIEW_EDIT,
        vmsg.EDIT_TITLE,
        blocks,
        submit=vmsg.EDIT_SUBMIT,
        metadata=ButtonValue.encode(req.id, req.payload_hash),
    )


def payload_modal(req: ActionRequest) -> View:
    """Everything about the request, the arguments in full across as many blocks as it takes."""
    facts = [
        field(smsg.F_REQUEST_ID, esc.code(req.id)),
        field(smsg.F_STATE, state_label(req)),
        field(smsg.F_RISK, risk_word(req)),
        field(smsg.F_RUN, esc.code(req.run_id)),
        field(smsg.F_REQUESTER, esc.user(esc.truncate(req.requester, 300))),
        field(smsg.F_CREATED, esc.date(req.created_at)),
        field(smsg.F_APPROVALS, approvals_text(req)),
        field(smsg.F_FULL_HASH, f"`{req.payload_hash}`"),
    ]
    if req.original_hash:
        facts.append(field(smsg.F_ORIGINAL_HASH, f"`{req.original_hash}`"))
    if req.expires_at is not None and req.state.value in smsg.DEADLINE_LABELS:
        facts.append(field(smsg.DEADLINE_LABELS[req.state.value], esc.date(req.expires_at)))
    blocks = [
        esc.header(f"{req.risk.value.upper()} · {req.tool}", "hitl_payload_head"),
        *hidden_warning(req),
        section(f"*{esc.code(req.tool, 300)}*", fields=facts, block_id="hitl_payload_facts"),
    ]
    chain = [f"*{smsg.F_CHAIN_FULL}*"]
    for i, lvl in enumerate(req.levels):
        now = f" {smsg.LEVEL_CURRENT}" if i == req.level and req.state == S.PENDING_REVIEW else ""
        chain.append(f"{i + 1}. {level_who(lvl, 600)} ({esc.duration(lvl.timeout_ms)}){now}")
    chain.append(f"*{smsg.F_APPROVERS}:* {deciders_text(req)}")
    parts = esc.pack(chain)[:3]
    blocks += [section(p, block_id=f"hitl_payload_chain_{i}") for i, p in enumerate(parts)]
    if (outcome := outcome_text(req)) is not None:
        blocks.append(section(outcome, block_id="hitl_payload_outcome"))
    blocks.append(section(f"*{smsg.F_ARGUMENTS}*", block_id="hitl_payload_args"))
    # a proposal not yet chosen runs nothing: what a person reads is its candidates
    shown: Any = list(req.candidates) if req.candidates and not req.original_hash else req.args
    body = esc.code_text(esc.pretty_json(shown))
    pieces = esc.chunks(body, esc.SECTION_TEXT - esc.CODE_OVERHEAD)
    room = esc.VIEW_BLOCKS - len(blocks)
    cut = len(pieces) > room
    pieces = pieces[: room - 1] if cut else pieces
    for i, piece in enumerate(pieces):
        blocks.append(section(esc.code_block(piece), block_id=f"hitl_payload_args_{i}"))
    if cut:
        blocks.append(esc.context(smsg.ARGS_CUT_MODAL.format(id=esc.mrkdwn(req.id))))
    return _modal(VIEW_PAYLOAD, vmsg.PAYLOAD_TITLE, blocks, close=vmsg.MODAL_CLOSE)


def answer_modal(q: Question) -> View:
    blocks = [section(smsg.Q_HEAD, block_id="hitl_answer_head")]
    blocks += esc.text_sections(q.question, 10, "hitl_answer_q")
    if q.state != QuestionState.OPEN:
        closed = msg.QUESTION_CLOSED.format(state=q.state.value)
        blocks.append(section(closed, block_id="hitl_answer_closed"))
        return _modal(VIEW_ANSWER, vmsg.ANSWER_TITLE, blocks, close=vmsg.MODAL_CLOSE)
    blocks.append(_text_input(ANSWER_BLOCK, ANSWER_TEXT_ACTION, vmsg.ANSWER_LABEL))
    return _modal(VIEW_ANSWER, vmsg.ANSWER_TITLE, blocks, submit=vmsg.ANSWER_SUBMIT, metadata=q.id)


# -- what a submitted modal carries -------------------------------------------------------


def _element(values: Mapping[str, Any], block_id: str, action_id: str) -> Mapping[str, Any]:
    block = values.get(block_id) if isinstance(values, Mapping) else None
    element = block.get(action_id) if isinstance(block, Mapping) else None
    return element if isinstance(element, Mapping) else {}


def parse_reject(values: Mapping[str, Any]) -> tuple[str, str | None]:
    """(reason code, optional text); the code is "" when none of ours was chosen."""
    chosen = _element(values, REASON_BLOCK, REASON_ACTION).get("selected_option")
    code = chosen.get("value") if isinstance(chosen, Mapping) else None
    text = _element(values, REASON_TEXT_BLOCK, REASON_TEXT_ACTION).get("value")
    text = text.strip() if isinstance(text, str) else ""
    # only one of our codes, as a string: a list or an object is no code (and no key)
    if not isinstance(code, str) or code not in {c.value for c in ReasonCode}:
        code = ""
    return code, (text or None)


def parse_edit(values: Mapping[str, Any]) -> str:
    """The edited arguments as the person typed them (JSON is parsed by the caller)."""
    raw = _element(values, ARGS_BLOCK, ARGS_ACTION).get("value")
    return raw if isinstance(raw, str) else ""


def parse_answer(values: Mapping[str, Any]) -> str:
    raw = _element(values, ANSWER_BLOCK, ANSWER_TEXT_ACTION).get("value")
    return raw if isinstance(raw, str) else ""
