"""What the supervision of the embedded Valkey tells a person: logs and `hitl-bot valkey`."""

from __future__ import annotations

RESTARTED = (
    "The embedded Valkey in {data_dir} was down ({error}); restarted it (pid {pid}) "
    "from its append-only file."
)
REJOINED = "The embedded Valkey in {data_dir} was down ({error}); it answers again (pid {pid})."
REPAIR_FAILED = (
    "The embedded Valkey in {data_dir} is down and could not be started again: {error}; "
    "trying again in {interval:g} s."
)
JOIN_FAILED = (
    "The embedded Valkey in {data_dir} does not answer: {error}; "
    "fix: look at {log}, or set REDIS_URL to use another Redis/Valkey server."
)
WATCH_FAILED = "Watching the embedded Valkey in {data_dir} failed; trying again."
LEFT_RUNNING = (
    "Leaving the embedded Valkey in {data_dir} running: other hitl-bot processes use it "
    "(pids {pids})."
)
STOPPED = "Stopped the embedded Valkey in {data_dir}: no other hitl-bot process uses it."
KILLED = (
    "The embedded Valkey (pid {pid}) in {data_dir} did not stop within {timeout:g} s of "
    "SHUTDOWN; killed it (every acknowledged write is already on disk)."
)
LEAVE_FAILED = (
    "Could not check who else uses the embedded Valkey in {data_dir} ({error}); "
    "leaving it running. fix: hitl-bot valkey stop, once no hitl-bot process uses it."
)

# hitl-bot valkey status | stop
CLI_REMOTE = (
    "REDIS_URL is set: hitl-bot uses that server and runs no embedded Valkey; "
    "manage that server with its own tools, or unset REDIS_URL."
)
CLI_NOT_RUNNING = "No embedded Valkey runs for {data_dir}."
CLI_STATUS = (
    "Embedded Valkey for {data_dir}: {state}, pid {pid}, {keys} keys, "
    "append-only {aof} (fsync {fsync})."
)
CLI_NO_USERS = "No hitl-bot process uses it: the next one to start will join it."
CLI_USERS = "Used by {count} hitl-bot process(es); the last one to exit stops it:"
CLI_USER = "  pid {pid}: {command}"
CLI_IN_USE = (
    "Not stopped: {count} hitl-bot process(es) use the embedded Valkey in {data_dir} "
    "(pids {pids}), and would start it again at once. fix: stop them (SIGTERM); "
    "the last one to exit stops it."
)
CLI_STOPPED = "Stopped the embedded Valkey for {data_dir} (pid {pid}); its data stays in {aof}."
CLI_FAILED = "Could not stop the embedded Valkey for {data_dir}: {error}; fix: try again."
SHADOW_UNREADABLE = (
    "HITL_SHADOW_POLICY: {problem}\nA shadow policy that cannot be read would report no "
    "disagreements; fix the file, or unset HITL_SHADOW_POLICY to run without one."
)
