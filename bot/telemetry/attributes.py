"""The names a request's span carries (docs/tracing.md holds them to this table).

Under `hitl.`, following the open GenAI proposals for a human approval
(semantic-conventions #3679, semantic-conventions-genai #95) where they name one;
`gen_ai.tool.name` is the GenAI conventions' own attribute for the tool.
"""

from __future__ import annotations

SPAN_NAME = "hitl.approval"  # then the tool's name: "hitl.approval refund"
REQUEST_ID = "hitl.request.id"
TOOL = "hitl.tool.name"
GENAI_TOOL = "gen_ai.tool.name"
RISK_TIER = "hitl.risk.tier"
APPROVAL_STATUS = "hitl.approval.status"  # approved | rejected | auto_approved | auto_rejected | …
FINAL_STATE = "hitl.request.state"
APPROVER_ID = "hitl.approver.id"
PAYLOAD_HASH = "hitl.payload.hash"
ESCALATION_LEVEL = "hitl.escalation.level"
REASON_CODE = "hitl.reason_code"
RUN_ID = "hitl.run.id"
REQUESTER = "hitl.requester"

# one span event per audit entry
TRANSITION = "hitl.transition"
REFUSED = "hitl.refused"  # a decision or report the machine refused (audited too)
EV_EVENT = "hitl.event"
EV_ACTOR = "hitl.actor"
EV_FROM = "hitl.from_state"
EV_TO = "hitl.to_state"
EV_REASON = REASON_CODE

TABLE = (
    REQUEST_ID,
    TOOL,
    GENAI_TOOL,
    RISK_TIER,
    APPROVAL_STATUS,
    FINAL_STATE,
    APPROVER_ID,
    PAYLOAD_HASH,
    ESCALATION_LEVEL,
    REASON_CODE,
    RUN_ID,
    REQUESTER,
)
EVENT_TABLE = (EV_EVENT, EV_ACTOR, EV_FROM, EV_TO, EV_REASON)
