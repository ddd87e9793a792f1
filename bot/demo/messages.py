"""Every sentence `hitl-bot demo` prints (rich markup; values are escaped before filling)."""

from __future__ import annotations

from typing import Any

STARTING = "Starting the hitl-bot demo ({agent} agent)…"

PORT_TAKEN = (
    "[yellow]Port {port} is not free ({error}); the page is on port {got} instead "
    "(--port picks another).[/yellow]"
)

API_PORT_MOVED = (
    "[yellow]The API's port {port} is busy; it is on port {got} this time (--api-port picks "
    "one): use the export line below, not one printed before.[/yellow]"
)

MODEL_SCRIPTED = "a scripted model (rules, no LLM key needed)"
MODEL_REAL = "{model} at {url}"
STORE_EMBEDDED = "embedded Valkey in {data_dir}"
STORE_SHARED = (
    "embedded Valkey in {data_dir} (already running; the last hitl-bot process to exit stops it)"
)
STORE_URL = "REDIS_URL (your own Redis)"

FOUND = (
    "Found {runs} {runs_word} ({unfinished} unfinished) and {requests} approval "
    "{requests_word} already in the store."
)
UNFINISHED = (
    "The worker resumes the unfinished ones and their requests still time out and escalate, "
    "but their threads went with the emulator: follow them with {cli} pending and show."
)
FOUND_NONE = "The store is empty: this is the first session on this data dir."
FORGOTTEN = (
    "Earlier Slack messages are gone (the emulator keeps its workspace in memory); "
    "the store keeps every run, request and audit entry."
)

READY = """
[bold]hitl-bot demo is running[/bold]: the {agent} agent on {model}.

  Open [bold link={page}]{page}[/bold link]  — a local Slack; "Act as" (top left) picks who you are.
"""

# The emulator page opens where "Try it" starts: this person, this channel, this hint
# line above the messages, and the suggested message already in the composer.
OPENING: dict[str, dict[str, Any]] = {
    "claw": {
        "user": "UKID",
        "channel": "general",
        "draft": "@hitl-bot Get me the bear!",
        "hint": (
            "You are kid in #general. Press Enter to send the message below, then open "
            'its thread. Switch people with "Act as" (top left).'
        ),
    },
    "refunds": {
        "user": "UCAROL",
        "channel": "general",
        "draft": "@hitl-bot Refund order A1004 in full ($4,200), the TV arrived broken",
        "hint": (
            "You are carol in #general. Press Enter to send the message below, then open "
            'its thread. Switch people with "Act as" (top left).'
        ),
        # The page's story buttons: each posts its texts as `user` in `channel`.
        "stories": [
            {
                "label": "Three small refunds (a digest)",
                "user": "UCAROL",
                "channel": "general",
                "texts": [
                    "<@UBOT> Refund order B2001 in full, the mug arrived chipped",
                    "<@UBOT> Refund order B2002 in full, the lamp arrived broken",
                    "<@UBOT> Refund order B2003 in full, the book arrived torn",
                ],
            },
            {
                "label": "Full or half? (a proposal)",
                "user": "UCAROL",
                "channel": "general",
                "texts": [
                    "<@UBOT> Order B2004 arrived scratched: refund it in full or half, "
                    "let a person choose",
                ],
            },
        ],
    },
}

TRY_CLAW = """[bold]Try it[/bold]
  1. The page opens as [bold]kid[/bold] in [bold]#general[/bold] with the message ready:
     press Enter to post  @hitl-bot Get me the bear!
  2. Open the message's thread: move_claw runs without asking anyone (low risk, no review);
     its moves are listed on one line, with their arguments.
  3. The agent asks "Is this the one?": reply [bold]yes[/bold] in the thread.
  4. drop_claw spends the last coin, so it waits for a grown-up: its card is in
     #hitl-approvals, where the policy reviews it, and the thread links to it. Kid asked,
     so kid's own click is refused. Act as [bold]parent[/bold] and click [bold]Approve[/bold]
     or [bold]Reject[/bold], or reply [bold]approve[/bold] or [bold]reject: why[/bold] in the
     card's thread.
  Steer: reply [bold]No, wait! The penguin![/bold] in the thread. It answers an open
  question, or withdraws the call waiting for approval, and the agent reads it instead.
  Or wait: after {review} s drop_claw escalates to #hitl-oncall ([bold]bob[/bold]), and
  {review} s later the policy default rejects it.
  Standing approval: parent's [bold]Approve and allow similar for …[/bold] on the card lets
  the next drop on the same prize pass at once. Parent's App Home (Apps, left) shows the
  operators' panel (approval fatigue).
  A batch digest and a choice among proposals: [bold]hitl-bot demo --agent refunds[/bold].
"""

TRY_REFUNDS = """[bold]Try it[/bold]
  1. The page opens as [bold]carol[/bold] in [bold]#general[/bold] with the message ready;
     press Enter to post:
       @hitl-bot Refund order A1004 in full ($4,200), the TV arrived broken
  2. Open the message's thread: lookup_order runs without asking; the refund of 4,200 is
     above 1,000, so it is high risk and only @finance (alice, carol) may approve it: its
     card is in #hitl-approvals, where the policy reviews it, and the thread links to it.
  3. Carol is in @finance but asked for it, so her own Approve is refused. Act as
     [bold]alice[/bold] and click [bold]Approve[/bold] (it asks you to confirm) or
     [bold]Reject[/bold] (a reason is required).
  Steer: reply [bold]No, wait: make it $1,100[/bold] in the thread: the waiting refund is
  withdrawn, and the agent reads your correction and proposes the new amount. Every new
  run can refund A1004 again, so the story can be told as often as you like.
  Or wait: after {review} s it escalates to #hitl-oncall (@oncall: bob), and {review} s later
  the policy default rejects it.
[bold]More stories[/bold] (the page's "Stories" buttons; refunds under 1,000 are medium risk,
  decided by [bold]parent[/bold] in #hitl-approvals)
  Three small refunds: three cards and, with the third, a digest card: [bold]Approve all 3[/bold].
  Standing approval: [bold]Approve and allow similar for …[/bold] on B2001's card; tell the
  story again and B2001's new refund passes at once under that grant (the other orders wait).
  Full or half?: one card offers both refunds, each with [bold]Choose[/bold]; the chosen one runs.
  Carol's and parent's App Home (Apps, left) show the operators' panel (approval fatigue).
"""

OPERATOR = """[bold]Meanwhile, in another terminal[/bold]{env}
  {cli} pending · {cli} runs · {cli} show <request or run id> · {cli} audit verify
  The bot itself ({parts}): {bot}
  Policy: {policy}   Log: {log}
  Your own agent beside the demo (the README's "Gate any agent" examples), over HTTP:
    export HITL_API_URL={bot} HITL_API_TOKEN={token}
  or on the demo's store (the SDK's direct mode), judged by the demo's policy:
    export HITL_DATA_DIR={data_dir} HITL_POLICY={policy}
  Its tools: issue_refund (order_id, amount; above 1000 is high risk), drop_claw, or any
  other name (medium risk).

Ctrl-C stops everything; runs and audit stay in the store for the next start.
"""

BOT_PARTS_HTTP = "Slack endpoint, /v1 API, /metrics"
BOT_PARTS_SOCKET = "/v1 API, /metrics"

ENV_HINT = "  (export HITL_DATA_DIR={data_dir} first)"

STOPPING = "Stopping (the worker hands its runs over)… Ctrl-C again to force."
FORCED = "Forced to stop."
STOPPED = "Stopped. {runs} {runs_word} and {requests} approval {requests_word} are kept in {where}."


def plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


SOCKET_MODE = (
    "Slack events reach the bot over Socket Mode (a WebSocket it opened to the local Slack), "
    "as with SLACK_APP_TOKEN in production; the bot has no HTTP Slack endpoint."
)
