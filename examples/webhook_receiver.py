"""A receiver of hitl-bot's webhook events (docs/webhooks.md): it checks the signature,
refuses a stale timestamp, and handles each event id once.

    HITL_WEBHOOK_SECRET=... python examples/webhook_receiver.py 8080
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

MAX_AGE_S = 300  # older than five minutes: a replay, refused


def verified(secret: bytes, timestamp: str, signature: str, body: bytes, now: float) -> bool:
    """The signature hitl-bot sends (X-Hitl-Signature) over `v0:{timestamp}:{body}`,
    with a timestamp (X-Hitl-Request-Timestamp) no older than MAX_AGE_S."""
    if not timestamp.isdigit() or abs(now - int(timestamp)) > MAX_AGE_S:
        return False
    mac = hmac.new(secret, b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256)
    return hmac.compare_digest("v0=" + mac.hexdigest(), signature)


SEEN: set[str] = set()  # keep these in your database: delivery is at least once


class Receiver(BaseHTTPRequestHandler):
    secret = os.environ.get("HITL_WEBHOOK_SECRET", "").encode()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        ts = self.headers.get("X-Hitl-Request-Timestamp", "")
        sig = self.headers.get("X-Hitl-Signature", "")
        if not verified(self.secret, ts, sig, body, time.time()):
            self.send_response(401)
            self.end_headers()
            return
        event = json.loads(body)
        if event["id"] not in SEEN:  # a retry of an event already handled: just say 200
            SEEN.add(event["id"])
            print(event["type"], event["subject"], event["data"].get("state"))
        self.send_response(204)
        self.end_headers()


if __name__ == "__main__":
    HTTPServer(("127.0.0.1", int(sys.argv[1])), Receiver).serve_forever()
