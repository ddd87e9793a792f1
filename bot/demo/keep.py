"""What the demo keeps in its data folder so a restart serves the same address: the API
token and the API port. The `export HITL_API_URL=... HITL_API_TOKEN=...` lines it
printed last time must still work after Ctrl-C and a new start.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import time
from pathlib import Path

TOKEN_NAME = "demo-api-token"
PORT_NAME = "demo-api-port"
API_PORT = 3000  # serve's default HITL_PORT: the README's examples use it
# A demo stopped a moment ago may still be letting go of its port: wait this long for it.
PORT_WAIT_S = 3.0
PORT_RETRY_S = 0.1


def api_token(data_dir: Path) -> str:
    """The token kept in `data_dir` (readable by its owner only), made on the first start."""
    path = data_dir / TOKEN_NAME
    with contextlib.suppress(FileNotFoundError):
        kept = path.read_text(encoding="utf-8").strip()
        if kept:
            return kept
    token = secrets.token_urlsafe(18)
    # 0600 from the start: never a moment where another user could read it.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(token + "\n")
    os.chmod(path, 0o600)  # an older file with wider bits keeps them through O_TRUNC
    return token


def kept_port(data_dir: Path) -> int | None:
    with contextlib.suppress(FileNotFoundError, ValueError):
        port = int((data_dir / PORT_NAME).read_text(encoding="utf-8").strip())
        if 0 < port < 65536:
            return port
    return None


def keep_port(data_dir: Path, port: int) -> None:
    (data_dir / PORT_NAME).write_text(f"{port}\n", encoding="utf-8")


def is_free(host: str, port: int) -> bool:
    """Whether a server could listen on `port` now. SO_REUSEADDR as uvicorn binds: the
    TIME_WAIT connections a stopped demo leaves behind do not hold the port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def free_within(host: str, port: int, wait_s: float) -> bool:
    deadline = time.monotonic() + wait_s
    while not is_free(host, port):
        if time.monotonic() >= deadline:
            return False
        time.sleep(PORT_RETRY_S)
    return True


def pick_api_port(host: str, data_dir: Path, *, wait_s: float = PORT_WAIT_S) -> int:
    """The port the API ran on last time (API_PORT on a first start), once free, waiting a
    moment for a demo that is still stopping; else API_PORT; else 0 (any free port)."""
    wanted = kept_port(data_dir) or API_PORT
    if free_within(host, wanted, wait_s):
        return wanted
    if wanted != API_PORT and is_free(host, API_PORT):
        return API_PORT
    return 0
