"""A local PagerDuty Events API and Opsgenie Alert API, over a real socket.

It records every request (method, path with query, headers, JSON body) and answers
202 as both services do, or a status the test queued first (`fail_next`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    status: int


@dataclass
class FakePagers:
    seen: list[Seen] = field(default_factory=list)
    # (path prefix, status) answered first, in order, to the first request that matches
    failures: list[tuple[str, int]] = field(default_factory=list)
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def fail_next(self, path_start: str, status: int) -> None:
        with self.lock:
            self.failures.append((path_start, status))

    def _status(self, path: str) -> int:
        for i, (start, status) in enumerate(self.failures):
            if path.startswith(start):
                del self.failures[i]
                return status
        return 202

    def taken(self, path_start: str) -> list[Seen]:
        """The requests to paths starting with `path_start` that were answered 202."""
        with self.lock:
            return [s for s in self.seen if s.path.startswith(path_start) and s.status == 202]

    def all(self, path_start: str) -> list[Seen]:
        with self.lock:
            return [s for s in self.seen if s.path.startswith(path_start)]


def _handler(fake: FakePagers) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with fake.lock:
                status = fake._status(self.path)
                fake.seen.append(
                    Seen(self.path, {k.lower(): v for k, v in self.headers.items()},
                         json.loads(raw or b"{}"), status)
                )  # fmt: skip
            answer = {"status": "success", "message": "Event processed"}
            if self.path.startswith("/v2/alerts"):
                answer = {"result": "Request will be processed", "requestId": "r1", "took": 0.1}
            data = json.dumps(answer if status == 202 else {"message": "down"}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def serve_fake() -> Iterator[FakePagers]:
    fake = FakePagers()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
