"""One JSON object per log line, with secrets masked on the way out.

Structured lines are what log pipelines index; the mask is a last line of
defence: settings are SecretStr and never formatted, but an exception text
from a library may still carry a token or a password in a URL.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from typing import Any

_SECRET = re.compile(
    r"(xox[abposr]-[A-Za-z0-9-]+|xapp-[A-Za-z0-9-]+|(?i:bearer)\s+[A-Za-z0-9._~+/=-]+"
    r"|sk-[A-Za-z0-9_-]{8,}|(?<=://)[^/\s:@]+:[^/\s@]+(?=@))"
)
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


def mask(text: str) -> str:
    return _SECRET.sub("***", text)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["error"] = self.formatException(record.exc_info)
        return mask(json.dumps(out, default=str, ensure_ascii=False))


def setup(level: int = logging.INFO) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for noisy in ("httpx", "httpcore", "slack_sdk", "slack_bolt", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
