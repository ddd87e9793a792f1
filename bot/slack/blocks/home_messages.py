"""What the App Home says to a person: what waits for them, the runs they may steer, and
the operators' approval-fatigue panel (bot/slack/blocks/home.py, fatigue_home.py,
fatigue_panel.py). Kept apart from bot/slack/messages.py, which holds the cards,
threads and modals."""

from __future__ import annotations

# What waits for this person, and the runs they may steer (bot/slack/blocks/home.py)
HOME_PENDING_HEAD = "⏳ Waiting for you: {n}"
HOME_RUNS_HEAD = "🤖 Runs you can steer: {n}"
HOME_RUNS_NONE = "No agent run you may steer or stop is going on."
HOME_RUN_LINE = "*{name}* · {id} · {state}"
HOME_RUN_WAITING = " on {id}"
HOME_RUN_THREAD = "<{link}|Open its thread>"
HOME_RUN_CHANNEL = "In <#{channel}>"
HOME_RUN_NO_THREAD = "No thread yet"
HOME_RUN_HOW = "reply there to steer it; `/hitl stop {id}` stops it"

# The operators' panel (bot/slack/blocks/fatigue_panel.py, fatigue_home.py)
FATIGUE_HEAD = "📊 Approval fatigue, last 7 days"
FATIGUE_NONE = "No decision in the last 7 days."
FATIGUE_FAILED = (
    "📊 The approval-fatigue figures could not be read: an audit trail is damaged. "
    "`hitl-bot audit verify` names it."
)
FATIGUE_TIER = "*{tier}* · {n} by people · approved {approved} · rejected {rejected}"
FATIGUE_TIER_POLICY_ONLY = "*{tier}* · no decision by people"
FATIGUE_TIMES = "Card to decision: median {median}, p90 {p90} · too fast: {fast} of {n}"
FATIGUE_BUSIEST = "Busiest approver: {who} ({share})"
FATIGUE_POLICY = (
    "By policy: {auto_approved} auto-approved, {auto_rejected} auto-rejected, {none} without review"
)
FATIGUE_APPROVER = "{who}: {n} · median {median} · {fast} too fast"
FATIGUE_FOOT = (
    "Too fast: sooner than {base:g} s plus {per_line:g} s for each line the card showed. "
    "Only operators see this. `hitl-bot report --since 7d --html FILE` has every approver "
    "and charts."
)

# The policy suggestions in the operators' panel (bot/slack/blocks/suggestions_panel.py):
# mined once an hour by serve's fatigue check, never on opening the tab.
SUGGEST_HEAD = "💡 Policy suggestions, last 30 days"
SUGGEST_NOT_YET = (
    "Not computed yet (the hourly check runs with serve's approval-fatigue check, every "
    "{every}, and mines the last 30 days; the first result shows here). "
    "`hitl-bot policy suggest --since 30d` mines them now."
)
SUGGEST_OFF = (
    "Not computed yet (the hourly check runs with serve's approval-fatigue check, which is "
    "off: `HITL_FATIGUE_CHECK_S=0`). `hitl-bot policy suggest --since 30d` mines them now."
)
SUGGEST_FAILED = (
    "The stored suggestions could not be read; the next hourly check writes them again. "
    "`hitl-bot policy suggest --since 30d` mines them now."
)
SUGGEST_NONE = (
    "No suggestions: in the {n} requests of the last 30 days, no pattern was decided often "
    "enough and clearly enough to ask people less, or more. "
    "`hitl-bot policy suggest --since 30d --explain` says why for each."
)
SUGGEST_TITLE = {
    "no_review": "{tool} by {requester} ({tier}): run without review inside {bounds}; "
    "outside, {tier} as today",
    "lower_tier": "{tool} by {requester} ({tier}): review at {new} inside {bounds}; "
    "outside, {tier} as today",
    "stricter": "{tool} by {requester} ({tier}): review at {new}{where}",
}
SUGGEST_STRICTER_ABOVE = " from {argument} {value} up"
SUGGEST_STRICTER_ALL = " for every call"
SUGGEST_BOUND_RANGE = "{argument} {low} to {high}"
SUGGEST_BOUND_VALUES = "{argument} one of {values}"
SUGGEST_NO_BOUND = "its calls"
SUGGEST_LOOSE = "Not bounded (read before applying): {arguments}"
SUGGEST_EVIDENCE = (
    "Evidence: {approved} approved, median {median}, {rejected} rejected, {edited} edited, "
    "{timed_out} timed out (of {requests} requests)"
)
SUGGEST_EFFECT = (
    "Effect, as `policy diff` replays it: {moved} request(s) change tier ({tiers}); "
    "{to_auto} decided by a person would have gone without one, {to_person} the other way"
)
SUGGEST_TIER_MOVE = "{old} → {new} {n}"
SUGGEST_HOW = (
    "*To apply:* write every suggestion as a fragment, review it (delete what you do not "
    "accept), then apply it; it is recorded in the policy log and takes effect when serve "
    "restarts. Run where `HITL_POLICY` names serve's policy file:"
)
SUGGEST_FOOT = (
    "Mined {at} from {n} requests: {total} suggestion(s), {shown} shown. Recomputed once an "
    "hour; nothing is applied from Slack. Only operators see this."
)
