"""What the Slack side tells a person whose reply, click or look was not taken, and why.

Each is an ephemeral (or a log line / a start warning), so a person who typed something
always learns what became of it.
"""

from __future__ import annotations

# -- thread replies (bot/slack/threads.py, bot/slack/replies.py) ------------------------
MAY_NOT_ANSWER = (
    "Run {run_id} is waiting for an answer to its question, and only the person who "
    "started it, the people who may decide what it waits on, and the policy's operators "
    "may answer or steer it. Your reply was not sent to the agent and decides no card "
    "(use a card's buttons for that); the attempt is in the run's audit."
)
MAY_NOT_ANSWER_SHORT = (
    "Only the person who started this run, its deciders and the operators may answer."
)
REPLY_BEFORE_CARD = (
    "Your reply was posted before the card for {id} was, so it does not decide it "
    "(a late delivery cannot approve what you had not seen). Reply again below the card, "
    "or use its buttons."
)
REPLY_RUN_ENDED = (
    "Run {run_id} has ended ({state}), so your reply was not sent to its agent and decides nothing."
)
REPLY_NOTHING_PENDING = (
    "Nothing in this thread waits for a decision any more, so your reply decides "
    "nothing and goes to no agent."
)
REPLY_NOT_A_DECISION = (
    "This thread holds a card waiting for a decision. A reply decides it only when it is "
    "exactly an approve word (e.g. `approve`) or a reject word with a reason "
    "(`reject: why`); yours was neither, so nothing was changed."
)

# -- Slack Connect (members of other workspaces) ------------------------------------------
FOREIGN_MAY_NOT_DIRECT = (
    "You are a member of another workspace, so you may not answer or steer run {run_id} "
    "unless its policy names your user id. Nothing was sent to the agent; the attempt is "
    "in the run's audit."
)
WHY_FOREIGN = (
    "you are a member of another workspace, and only people of this workspace named by "
    "their user id may decide, answer or steer here"
)

# -- who may see a request (bot/slack/approvals.py, bot/slack/commands.py) ---------------
MAY_NOT_SEE = (
    "Only the people who may decide {id} and the policy's operators may see its full arguments."
)

# -- channel principals (bot/slack/principals.py) ---------------------------------------
CHANNEL_UNKNOWN = (
    "{where}: the channel {name} does not exist in this Slack workspace (or the bot "
    "cannot see it); anyone could create it and so become an approver. Fix: create it "
    "and invite the bot, or name another channel or a user group."
)
CHANNEL_ARCHIVED = (
    "{where}: the channel {name} ({id}) is archived; its former members would still "
    "count as approvers. Fix: name a live channel or a user group."
)
CHANNEL_PUBLIC_APPROVERS = (
    "WARNING {where}: {name} is a public channel, and anyone in the workspace can join "
    "it and so approve {tier} requests. Use a user group (S…) or a private channel as "
    "the approvers of a {tier} tier."
)
CHANNELS_UNCHECKED = (
    "Could not reach Slack to check the policy's channels ({error}); channel names are "
    "resolved at the first decision instead."
)
CHANNELS_CHECKED = "Channels resolved in Slack: {names}."
