"""Every sentence the agent side writes: tool results the model reads, and errors.

The model acts on these words, so each says what happened and what not to do
next (retry, guess) as plainly as a person would be told.
"""

from __future__ import annotations

from bot.messages import CALL_HARD_STOP, CALL_RUN_STOPPED, CALL_STEERED

STEERED = CALL_STEERED
HARD_STOP = CALL_HARD_STOP
INVALID_ARGS = (
    "Error: the arguments for {tool} are invalid ({problems}). Nothing was run and nobody "
    "was asked. Fix the arguments and call {tool} again."
)
UNKNOWN_TOOL = "Error: there is no tool named {tool}. The tools are: {names}."
APPROVED = "Approved by {actor}. Result: {output}"
EDITED = (
    "Approved by {actor} after a person edited the arguments: it ran with {args}, not with "
    "the arguments you proposed. Result: {output}"
)
REJECTED = (
    "Rejected by {actor} (reason: {reason}){text}. The call did not run. Do not retry it "
    "as it is; change course or ask the person."
)
AUTO_REJECTED = (
    "Nobody answered in time, the default was to reject: the call did not run. "
    "Do not retry it as it is."
)
STOPPED = CALL_RUN_STOPPED
WITHDRAWN = "Cancelled by {actor} before it ran (reason: {reason}){text}. The call did not run."
CLAIM_EXPIRED = (
    "The approval lapsed before the call could start, so it did not run. Propose it again "
    "if it is still needed."
)
BAD_EDIT = (
    "Cancelled (reason: invalid_edit): a person approved {tool} with edited arguments that "
    "it refuses ({problems}), so the call did not run. Ask the person what they meant."
)
BAD_EDIT_CODE = "invalid_edit"
FAILED_ROLLED_BACK = (
    "The call failed ({error}). Its compensating action ran and undid it (rolled back)."
)
FAILED_MANUAL = (
    "The call failed ({error}) and could not be undone automatically; a person has been "
    "asked to check it by hand. Do not retry it."
)
OUTCOME_UNKNOWN = (
    "The worker running this call stopped before it reported, so whether {tool} took effect "
    "is unknown. A person has been asked to check it by hand. Do not retry it."
)
COMPLETED_EARLIER = "The call ran earlier. Result: {output}"
COMPLETED_EARLIER_EDITED = (
    "The call ran earlier, with arguments a person edited to {args}. Result: {output}"
)
ANSWERED = "{actor} answered: {answer}"
NO_ANSWER = (
    "Nobody answered the question in time. Do not guess the answer; say what you needed "
    "to know and stop, or continue only with what you know for sure."
)
QUESTION_CANCELLED = "The question was withdrawn: the run was stopped. Do nothing more."

SUMMARY_INTRO = (
    "This run waited for a person and has now resumed. To keep this short, earlier turns "
    "are summarised instead of repeated; the last tool calls and their results follow as "
    "they were."
)
SUMMARY_STEPS = "What happened before them:"
SUMMARY = SUMMARY_INTRO + "\nTask: {task}\n" + SUMMARY_STEPS + "\n{steps}"
SUMMARY_STEP = "- {call} -> {result}"
SUMMARY_SAID = "- you said: {text}"
SUMMARY_PERSON = "- the person said: {text}"
SUMMARY_NONE = "- nothing yet"

# Run end states, stored on the run as its result or error.
TURN_LIMIT = "The run used all {turns} turns without a final answer."
RUN_STOPPED = "Stopped by a person."
DEAD_WORKER = "The worker running this tool call died mid-call; outcome unknown."

# Errors raised to the operator.
MODEL_UNAVAILABLE = (
    "The model at {url} still answers {what} after {tries} tries; fix: check OPENAI_BASE_URL, "
    "the provider's status and rate limits."
)
MODEL_REFUSED = "The model at {url} refused the request with {status}: {detail}"
MALFORMED = (
    "The model at {url} answered {status} with a body that is not a chat completion "
    "({problem}); fix: check that OPENAI_BASE_URL points at an OpenAI-compatible API. "
    "Body starts: {head!r}"
)
NO_MODEL = (
    "No model is configured; fix: export HITL_MODEL=... (a chat model that OPENAI_BASE_URL "
    "serves) and OPENAI_BASE_URL=..."
)
AGENT_SPEC = (
    "{spec!r} is not an agent; fix: give a short name ({names}) or module:object, "
    "for example bot.demo.agents.claw:agent ({problem})"
)
STOPPED_MID_CALL = (
    "Stopped by a person while the tool was running; it was cancelled part-way, so a "
    "person must check what it did"
)
TOO_MANY_TAKEOVERS = (
    "Gave up: this run was handed to a new worker {times} times, so it may be what "
    "crashes them. Check the worker logs, then start it again."
)
