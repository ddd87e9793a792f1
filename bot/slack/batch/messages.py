"""What the digest card and its buttons say (placeholders are filled with escaped text)."""

from __future__ import annotations

HEAD = "*{n} {tool} calls from {requester}* wait for review in this channel"
HEAD_TOTAL = "*{n} {tool} calls from {requester}* wait for review: *{total} {currency}* in all"
FALLBACK = "{n} {tool} calls from {requester} wait for review"
HOW_IT_WORKS = (
    "Each is decided on its own, sealed and audited as if clicked on its card. A call that "
    "changes before you click (edited, escalated, decided) is left out and named."
)
MORE = "…and {n} more waiting, not in this batch: they join it as these are decided."
ROW_HIDDEN_ARGS = "*+{n} more arguments not shown here*"
NO_APPROVE_ALL_HIDDEN = (
    "No *Approve all*: {rows} has more than {n} arguments, more than a row shows. "
    "Approve those on their own cards."
)
NO_LINK = "(card)"
APPROVE_ALL = "Approve all {n}"
REJECT_ALL = "Reject all {n}"
CONFIRM_TITLE = "Approve all {n}?"
CONFIRM_TEXT = (
    "Approve each of the {n} {tool} calls listed, with every argument its row names. "
    "Any that changed since is left out."
)
CONFIRM_CUT = " Cut short here (whole on each card): {items}."
CUT_ITEM = "#{n} {names}"
CUT_ITEM_MANY = "#{n} ({k} arguments)"
CONFIRM_OK = "Approve all"
CONFIRM_DENY = "Cancel"
NO_BATCH_CRITICAL = "No batch decision: a critical call is decided on its own card."
NO_BATCH_QUORUM = "No batch decision: a call here needs {n} approvers, decide each on its card."
NO_BATCH_EDITED = "No batch decision: a call here was edited, decide each on its card."
CLOSED = "Fewer than three {tool} calls from {requester} wait now: decide each on its own card."

REJECT_TITLE = "Reject all"
REJECT_SUBMIT = "Reject all"
REJECT_INTRO = (
    "Reject each of the {n} {tool} calls from {requester} that this digest shows, "
    "with one reason. Any that changed since is left out."
)

STALE_VIEW = (
    "This digest was redrawn since you opened it, so nothing was decided: "
    "look at it again and click there."
)
DONE_APPROVE = "Approved {n} of {total} {tool} calls."
DONE_REJECT = "Rejected {n} of {total} {tool} calls."
LEFT_CHANGED = "Left out, changed since the digest was drawn: {items}."
LEFT_REFUSED = "Left out, not yours to decide (your attempt is audited): {items}."
LEFT_FAILED = "Not decided: {items}."
ITEM = "{link} ({why})"

WHY_DECIDED = "already {state}"
WHY_DECIDED_BY = "{how} by {actor}"
HOW = {"approve": "approved", "reject": "rejected", "edit_and_approve": "edited and approved"}
WHY_ESCALATED = "escalated"
WHY_CHANGED = "changed"
WHY_EDITED = "edited"
WHY_GONE = "gone"
WHY_CRITICAL = "critical"
WHY_QUORUM = "needs {n} approvers"
WHY_HIDDEN = "arguments the digest does not show: approve it on its card"
