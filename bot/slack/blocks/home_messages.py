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
