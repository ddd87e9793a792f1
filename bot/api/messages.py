"""Every sentence the HTTP API shows a caller.

Each part keeps its own sentences beside it; `bot.messages` holds those that several
layers share.
"""

from __future__ import annotations

from bot import messages as bot_msg

API_DISABLED = (
    "The HTTP API is off because HITL_API_TOKEN is not set; fix: export HITL_API_TOKEN=... "
    "({how}) and restart the server. The API never runs without a token."
)
TOKEN_MISSING = (
    "Missing bearer token; fix: send the header 'Authorization: Bearer $HITL_API_TOKEN'."
)
TOKEN_WRONG = "Wrong bearer token; fix: send the HITL_API_TOKEN the server was started with."
BODY_TOO_LARGE = "The request body is larger than {limit} bytes; send less."
STORE_DOWN = "Redis/Valkey does not answer ({error}); retry once the store is back."
INTERNAL = "Internal error ({kind}); the server log has the details."
INVALID_BODY = "The request is invalid: {problems}"
RUN_FINISHED = "Run {run_id} is {state}; nothing will read a correction any more."
UNKNOWN_RUN = bot_msg.UNKNOWN_RUN
RUN_ALREADY_OVER = "Run {run_id} is {state} already; nothing changed."
RUN_HAS_A_WORKER = (
    "Run {run_id} is {state} on a worker, which finishes it when its agent does; nothing "
    "changed. Fix: stop it (POST /v1/runs/{run_id}/stop) to end it now."
)
RUN_STILL_WAITS = (
    "Run {run_id} still waits on {ids}; nothing changed. Fix: wait for the decision, or "
    "cancel each (POST /v1/approvals/ID/cancel), then finish the run."
)
WORKERS_CALL = (
    "Request {id} was filed by the worker for your run: the worker claims and reports it. "
    "Fix: stop or steer the run instead."
)
TOO_MANY_WAITING = (
    "{who} already has {n} calls waiting for review, the most one identity may leave "
    "waiting ({setting}): nothing was filed. Fix: wait until some are decided, or ask "
    "the operator to raise {setting}."
)
