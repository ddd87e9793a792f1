"""Every sentence the SDK shows a developer, in one place."""

from __future__ import annotations

REJECTED = "{tool} was rejected by {actor} ({reason}){text}; it did not run."
AUTO_REJECTED = "Nobody decided on {tool} in time; the policy rejected it and it did not run."
NEVER_CLAIMED = "{tool} was approved but not claimed in time; it was cancelled and did not run."
CANCELLED = "{tool} was withdrawn by {actor} ({reason}); it did not run."
NO_SWEEPER = (
    "{tool}: the review deadline passed {late:.1f} s ago and nothing escalated it; is a "
    "hitl-bot process (serve or worker) running? The request was withdrawn; it did not run."
)
CALLER_TIMEOUT = (
    "{tool}: no decision within {timeout:g} s; the request was withdrawn; it did not run."
)
ALREADY_RAN = (
    "{tool} (request {id}) is already {state}: it was claimed before, so it will not run again."
)
EDIT_DOES_NOT_FIT = (
    "{tool}: the approved arguments do not fit the function's signature ({error}); "
    "the request was withdrawn and the function did not run."
)
QUESTION_UNANSWERED = "Nobody answered {question!r} ({state})."
QUESTION_RUN_STOPPED = "The run was stopped while its question waited: do nothing more."
API_UNREACHABLE = "Cannot reach the hitl-bot API at {url}: {error}; fix: check HITL_API_URL."
API_ERROR = "The hitl-bot API answered {status}: {detail}"
TOKEN_REJECTED = "The hitl-bot API refused the token ({detail}); fix: set HITL_API_TOKEN."
NEED_TOKEN = (
    "HITL_API_URL is set but HITL_API_TOKEN is not; fix: export HITL_API_TOKEN=<the server's "
    "token>, or unset HITL_API_URL to talk to Redis directly."
)
REPORT_FAILED = "Could not report the result of request %s (%s); its deadline will flag it."
CREATE_UNCONFIRMED = (
    "The free call %s ran, but the store did not confirm its record (%s): if the record "
    "was lost, nothing flags this call; check the store's log."
)
SYNC_IN_GATE_LOOP = "A sync gated function was called from the gate's own event loop thread."
GATE_CLOSED = (
    "The gate was closed while this call waited on it: the wait was cancelled (a request "
    "still in review was withdrawn) and the gated function did not run."
)
SCHEMA_SKIPPED = (
    "The arguments of %s do not fit the schema derived from its type hints; this call is "
    "recorded without one (pass args_schema= to declare the exact schema)."
)
NO_STORE = (
    "No hitl-bot store at {data_dir}: no bot's embedded Valkey runs there, and direct mode "
    "never starts one (nobody would see its cards); fix: start `hitl-bot serve` (or "
    "`hitl-bot demo`) with HITL_DATA_DIR={data_dir}, or set REDIS_URL to the bot's Redis, "
    "or HITL_API_URL and HITL_API_TOKEN to use its API."
)
NO_LIVE_BOT = (
    "No hitl-bot is reading the store at %s (no Slack notifier has read its events in the "
    "last %d s): requests will wait unseen until one runs; fix: start `hitl-bot serve` on "
    "the same REDIS_URL or HITL_DATA_DIR."
)
# A free call created already claimed whose caller went away before running it.
NOT_RUN = "not run: the caller went away before running it; nothing to undo"
# A call a correction withdrew while it waited, whose words another call of the run took.
SUPERSEDED_NO_TEXT = (
    "Cancelled. A person's correction withdrew {tool} while it waited; it did not run. "
    "Ask for their words in the run's thread before you go on."
)
