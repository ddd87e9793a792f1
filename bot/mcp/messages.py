"""Every sentence `hitl-bot mcp` shows a model or an operator, in one place."""

from __future__ import annotations

GATE_FAILED = "{tool}: the approval gate could not be asked ({error}); the call did not run."
CLAIM_FAILED = "{tool}: the approved call could not be claimed ({error}); it did not run."
UPSTREAM_CRASHED = "{tool}: upstream {upstream!r} failed while running the call: {error}"
UNKNOWN_TOOL = "No tool named {tool!r}; list the tools again (tools/list)."
ASK_UNANSWERED = "Nobody answered in time: {error}"

# The report the audit keeps for each forwarded call: it names the upstream.
AUDIT_OK = "upstream {upstream}: {tool} ran"
AUDIT_TOOL_ERROR = "upstream {upstream}: {tool} returned a tool error: {text}"
AUDIT_CRASH = "upstream {upstream}: {tool} crashed: {error}"
AUDIT_HANDED_OVER = "approved over MCP and handed to the client ({via}), which runs it"

CONFIG_UNREADABLE = "{path}: cannot read the proxy config ({error}); fix: check --config."
CONFIG_INVALID = "{path}: {problems}"
NO_UPSTREAM = (
    "Give the upstream servers: --config FILE (YAML with 'upstreams:'), or one command "
    "after '--' (hitl-bot mcp proxy -- npx some-mcp-server)."
)
BOTH_UPSTREAMS = "Give either --config or a command after '--', not both."
LISTENING = "hitl-bot mcp {what}: streamable HTTP on {url}"
UPSTREAM_LIST_FAILED = "upstream %s: listing its tools failed: %s"
NEED_MCP_TOKEN = (
    "Refusing to serve MCP on {host} without a token: anyone who reaches the port could use "
    "this gate. Fix: export HITL_MCP_TOKEN=<a long random secret> (clients send it as "
    "'Authorization: Bearer ...'), or listen on 127.0.0.1."
)
VAR_UNSET = (
    "The proxy config uses ${{{var}}}, which is not set; fix: export {var} before starting "
    "the proxy."
)
# The run's name in Slack, the App Home and `hitl-bot runs` (at most 128 characters).
RUN_TITLE_SERVE = "MCP client (hitl-bot mcp serve)"
RUN_TITLE_PROXY = "MCP gateway to {names}"
BAD_RUN_ID = (
    "Run id {run_id!r} is not valid: use at most 128 letters, digits and . _ : - "
    "(--run-id or HITL_RUN_ID)."
)
NEED_EXTRA = "hitl-bot mcp needs the MCP SDK; fix: pip install 'hitl-bot[mcp]'."
# `hitl-bot mcp proxy --print-policy`: YAML comments beside each tool's tier.
INFERRED_HEADER = (
    "# Each upstream tool's tier: the policy's where it names one, else what the tool's MCP\n"
    "# annotations suggest (hints from the server: they may raise the default tier,\n"
    "# {default}, never lower it). Copy an entry into the policy to set it yourself."
)
INFERRED_FROM_POLICY = "the policy names it"
INFERRED_FROM_HINTS = "from annotations: {hints} (default tier {default})"
# An upstream server's elicitation (elicitation/create), asked in Slack as a question.
ELICIT_HEAD = "{message} (the MCP server {upstream} asks)"
ELICIT_FIELD = "• {name} ({kind}{required}){about}"
ELICIT_REQUIRED = ", required"
ELICIT_ONE = "Reply with the value, or `decline` to refuse."
ELICIT_MANY = "Reply with one line per field, `name: value`, or `decline` to refuse."
ELICIT_AGAIN = "Not taken ({problem}). {how}"
ELICIT_BAD_NUMBER = "{name} must be a number, not {value!r}"
ELICIT_BAD_INTEGER = "{name} must be a whole number, not {value!r}"
ELICIT_BAD_BOOLEAN = "{name} must be yes or no, not {value!r}"
ELICIT_BAD_CHOICE = "{name} must be one of {choices}, not {value!r}"
ELICIT_MISSING = "{name} is required"
ELICIT_UNKNOWN = "{name} is not a field of this form"
ELICIT_DECLINE = "decline"
