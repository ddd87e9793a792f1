"""What the operators are told of approval fatigue (bot/slack/nudges/teller.py): what
was seen and what to do. Sent to the operators' direct messages only, never a channel,
since each may name the approver concerned."""

from __future__ import annotations

HEAD = {
    "too_fast": "*Approval fatigue:* {approver} decided {count} of their last {total} "
    "requests faster than the card can be read (2 s, plus 0.3 s a line shown).",
    "carries": "*Approval fatigue:* {approver} took {count} of the {total} decisions people "
    "made on {tier} requests in the last 7 days.",
    "auto_rise": "*Approval fatigue:* {count} {tier} requests ended without a person in the "
    "last 7 days (nobody answered in time; the default applied), {total} the week before.",
}
WHAT_TO_DO = {
    "too_fast": "What to do: share the tiers they review with more people (reviewers or an "
    "on-call rotation in the policy), add a second reviewer where a slip would hurt "
    "(`approvals_required`), and run `hitl-bot policy suggest --since 30d` for the calls "
    "people approve so often that the policy could stop asking.",
    "carries": "What to do: share the {tier} tier (more reviewers, or an on-call rotation), "
    "add a reviewer to its escalation chain, and run `hitl-bot policy suggest --since 30d` "
    "for the calls that could stop asking.",
    "auto_rise": "What to do: add a reviewer or an escalation level to the {tier} tier, check "
    "its `review_timeout`, and run `hitl-bot policy suggest --since 30d` for the calls that "
    "could stop asking.",
}
FOOT = (
    "Sent to the policy's operators only, at most once a day for each signal. "
    "`hitl-bot report` has the figures."
)
