"""Every sentence `hitl-bot claude-code` shows Claude, the person at the terminal or an
operator, in one place."""

from __future__ import annotations

# What Claude reads (permissionDecisionReason of a deny) when the hook cannot tell what
# to gate: the call does not run.
BAD_INPUT = (
    "hitl-bot did not let this tool call run: the PreToolUse hook's input could not be "
    "read ({problem}). Fix: register `hitl-bot claude-code hook` as a PreToolUse command "
    "hook (`hitl-bot claude-code install`)."
)
NOT_JSON = "not a JSON object: {error}"
NOT_A_NUMBER = "{constant} is not a JSON number"
# A lone surrogate is valid JSON but no text a person can be shown: Claude, not the
# install, has something to fix.
SURROGATE = (
    "hitl-bot did not let this tool call run: its {field} holds a lone UTF-16 surrogate "
    "(an escape from \\ud800 to \\udfff without its pair), which cannot be shown to "
    "anyone for approval. Write it without that character."
)
MISSING = "{field} is missing or not {kind}"
WRONG_EVENT = "hook_event_name is {event}; this hook answers PreToolUse only"
BAD_SESSION = (
    "session_id {session!r} cannot name a hitl-bot run (letters, digits and _ . : -, "
    "at most {most} characters)"
)

# The session's run, as Slack and `hitl-bot runs` name it (at most 128 characters).
RUN_TITLE = "Claude Code in {folder}"
RUN_TITLE_NO_FOLDER = "Claude Code session"
RUN_TITLE_FOLDER_MAX = 100

# A call the gate could not decide: denied, and the person at the terminal is told why.
GATE_FAILED = "{tool} did not run: hitl-bot could not ask for approval. {error}"
CLAIM_FAILED = "{tool} did not run: hitl-bot could not claim the approved call ({error})."
INTERRUPTED = "{tool} did not run: the hook was interrupted before a decision was made."
CRASHED = "{tool} did not run: the hitl-bot hook failed ({error}); see its log on stderr."
# The hook's last answers: when even the deny above cannot be built or written as it is.
HOOK_BROKEN = (
    "This tool call did not run: the hitl-bot hook failed before it could ask for "
    "approval; see its log on stderr (Claude Code's debug view)."
)
ANSWER_UNWRITABLE = (
    "This tool call did not run: the hitl-bot hook could not write its answer as JSON; "
    "see its log on stderr (Claude Code's debug view)."
)

# Why a call was allowed: Claude Code shows this to the user, not to the model.
ALLOWED_FREE = "hitl-bot: {tool} needs no review under the policy (request {id}, audited)."
ALLOWED_BY_DEFAULT = (
    "hitl-bot: nobody decided on {tool} in time, and the policy approves its tier then "
    "(request {id})."
)
ALLOWED = "hitl-bot: {tool} approved by {actor} in Slack (request {id})."
ALLOWED_EDITED = "hitl-bot: {tool} approved by {actor} in Slack, with edited input (request {id})."

# stopReason when a person stopped the session's run (`/hitl stop`, the API): shown to
# the user; Claude stops.
STOPPED_BY = "{actor} stopped this session in hitl-bot (run {run}); it does nothing more."
STOPPED = "A person stopped this session in hitl-bot (run {run}); it does nothing more."

# The audit's report for a call handed to Claude Code: hitl-bot never learns how it went.
AUDIT_HANDED_OVER = "approved and handed to Claude Code (PreToolUse hook), which runs it"

# `hitl-bot claude-code install`
SETTINGS_NOT_JSON = (
    "{path} is not valid JSON ({error}); nothing was changed. Fix the file, or move it "
    "away, and run `hitl-bot claude-code install` again."
)
SETTINGS_BAD_SHAPE = (
    "{path}: {where} is not {kind}, as Claude Code expects; nothing was changed. Fix the "
    "file and run `hitl-bot claude-code install` again."
)
SETTINGS_UNREADABLE = "{path}: cannot read or write it ({error}); nothing was changed."
INSTALLED = "Wrote the PreToolUse hook to {path}:"
REPLACED = "It replaced the {count} hitl-bot hook {entries} already there."
INSTALL_NEXT = (
    "Claude Code runs it before every tool call matching {matcher!r}. The hook reads "
    "HITL_API_URL and HITL_API_TOKEN (or REDIS_URL and HITL_POLICY) from the environment "
    "Claude Code starts in."
)
