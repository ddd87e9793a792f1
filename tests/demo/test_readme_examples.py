"""The README's "Gate any agent" examples, run as written beside `hitl-bot demo`.

A newcomer starts the demo, copies the `export` lines it prints into another terminal
and runs the README's curl and Python examples: each call's card must reach the page,
and the person the demo names (parent) must be able to approve it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.demo.test_demo_process import (
    DEMO_S,
    ROOT,
    Demo,
    approve_button,
    data_dir,
    env_for,
    on_cluster,
    start_demo,
)
from tests.support.docpages import page
from tests.support.poll import eventually_sync

__all__ = ["data_dir", "on_cluster"]  # fixtures, used by name

pytestmark = pytest.mark.timeout(120)

EXPORT = re.compile(r"^\s*export (HITL_\w+=\S+(?: HITL_\w+=\S+)*)\s*$", re.M)


def _block(text: str, after: str, lang: str) -> str:
    """The first fenced `lang` block after the line that starts with `after`."""
    start = text.index(after)
    found = re.compile(rf"```{lang}\n(.*?)```", re.S).search(text, start)
    assert found, f"no {lang} block after {after!r}"
    return found.group(1)


def _exports(demo: Demo) -> list[dict[str, str]]:
    """The demo's `export` lines, each as the variables it sets."""
    sets = eventually_sync(
        lambda: EXPORT.findall(demo.text()) or None, what="export lines", timeout_s=30
    )
    return [dict(pair.split("=", 1) for pair in line.split()) for line in sets]


def _card(page_client: httpx.Client, tool_arg: str) -> dict[str, Any] | None:
    state = page_client.get("/_emu/state").json()
    review = next(c for c in state["channels"] if c["name"] == "hitl-approvals")
    found = [m for m in review["messages"] if approve_button(m) and tool_arg in json.dumps(m)]
    return found[-1] if found else None


def _approve_as_parent(
    page_client: httpx.Client, tool_arg: str, proc: subprocess.Popen[str] | None = None
) -> dict[str, Any]:
    def card_or_exit() -> dict[str, Any] | None:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the example exited {proc.returncode}: {proc.communicate()}")
        return _card(page_client, tool_arg)

    card = eventually_sync(card_or_exit, what="the example's card", timeout_s=DEMO_S)
    click = {
        "user": "UPARENT",
        "action_id": "hitl_approve",
        "channel": card["channel"],
        "ts": card["ts"],
    }
    assert page_client.post("/_emu/click", json=click).json()["status"] == 200
    return card


@pytest.mark.skipif(shutil.which("curl") is None, reason="the README's example uses curl")
def test_the_readme_examples_run_as_written_beside_the_demo(data_dir: Path, tmp_path: Path) -> None:
    readme = page("README.md")
    demo = start_demo(data_dir, tmp_path, "readme", "--api-port", "0")
    try:
        http_env, direct_env = _exports(demo)
        assert set(http_env) == {"HITL_API_URL", "HITL_API_TOKEN"}
        assert set(direct_env) == {"HITL_DATA_DIR", "HITL_POLICY"}
        base = env_for(data_dir)
        with httpx.Client(base_url=demo.url, timeout=10) as page_client:
            # curl, over HTTP: the request is filed (201) and its card waits for a person
            sh = _block(readme, "**Any language, over HTTP**", "sh")
            done = subprocess.run(
                ["sh", "-c", sh], env=base | http_env, capture_output=True, text=True, timeout=30
            )
            assert done.returncode == 0, done.stderr
            made = json.loads(done.stdout)
            assert (made["tool"], made["args"], made["state"]) == (
                "issue_refund",
                {"order_id": "A2", "amount": 25},
                "pending_review",
            )
            _approve_as_parent(page_client, made["id"])

            # the Python SDK, in both modes: it prints the approved call's result
            py = _block(readme, "**Python**", "python")
            # A run id is its first user's, and the two modes are two identities (the
            # token's, the gate's requester): the second mode runs it under a run id of its own.
            for env, code in ((http_env, py), (direct_env, py.replace('"refunds"', '"refunds-2"'))):
                argv = [sys.executable, "-c", code]
                card, status, out, err = _run_approved(page_client, argv, base | env, '\\"A1\\"')
                assert status == 0, err
                assert out.strip() == "Refunded 40.0 on A1", err
                assert "Refunds agent" in json.dumps(card)  # the run's title heads its card
                resolved = eventually_sync(
                    lambda c=card: _resolved(page_client, c), what="the card approved"
                )
                head = resolved["blocks"][0]["text"]["text"]
                assert "pending" not in head.lower() and "<@UPARENT>" in json.dumps(resolved)
    finally:
        assert demo.stop() == 0


def _run_approved(
    page_client: httpx.Client, argv: list[str], env: dict[str, str], needle: str
) -> tuple[dict[str, Any], int, str, str]:
    """Run an example that waits for a person, approve its card (found by `needle`) as
    parent: the card, and the example's exit code, stdout and stderr."""
    proc = subprocess.Popen(
        argv, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        card = _approve_as_parent(page_client, needle, proc)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    return card, proc.returncode, out, err


def _resolved(page_client: httpx.Client, card: dict[str, Any]) -> dict[str, Any] | None:
    state = page_client.get("/_emu/state").json()
    chan = next(c for c in state["channels"] if c["id"] == card["channel"])
    now = next(m for m in chan["messages"] if m["ts"] == card["ts"])
    return None if approve_button(now) else now


@pytest.mark.skipif(
    shutil.which("curl") is None or shutil.which("jq") is None,
    reason="the API page's example uses curl and jq",
)
def test_the_api_pages_curl_walkthrough_runs_as_written_beside_the_demo(
    data_dir: Path, tmp_path: Path
) -> None:
    sh = _block(page("api.md"), "## A call through the gate, with curl", "sh")
    demo = start_demo(data_dir, tmp_path, "api", "--api-port", "0")
    try:
        http_env, _ = _exports(demo)
        with httpx.Client(base_url=demo.url, timeout=10) as page_client:
            argv, env = ["sh", "-c", sh], env_for(data_dir) | http_env
            _, code, out, err = _run_approved(page_client, argv, env, '\\"amount_cents\\": 4000')
        assert code == 0, err
        assert out.split() == ["approved", "completed"], out
    finally:
        assert demo.stop() == 0


def test_the_api_pages_walkthrough_stops_at_an_error_instead_of_going_on(
    data_dir: Path, tmp_path: Path
) -> None:
    sh = _block(page("api.md"), "## A call through the gate, with curl", "sh")
    demo = start_demo(data_dir, tmp_path, "api-bad", "--api-port", "0")
    try:
        http_env, _ = _exports(demo)
        wrong = http_env | {"HITL_API_TOKEN": "not-the-token"}
        done = subprocess.run(
            ["sh", "-c", sh],
            env=env_for(data_dir) | wrong,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode != 0 and "401" in done.stderr
        assert done.stdout == ""  # nothing went on with an empty request id
    finally:
        assert demo.stop() == 0
