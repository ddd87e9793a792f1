"""Two policies a few edits apart, for the dry run and the shadow policy's tests.

From OLD to NEW: small refunds (up to 100) run without review, medium waits 10m
instead of 30m, high may also be approved by ULEAD, and email drafts go to a person.
"""

from __future__ import annotations

import copy
from typing import Any

import yaml


def _tier(timeout: str, **extra: Any) -> dict[str, Any]:
    return {"review_timeout": timeout, "reviewers": {"channels": ["#approvals"]}, **extra}


OLD: dict[str, Any] = {
    "tiers": {
        "low": _tier("1h", on_exhausted="auto_approved"),
        "medium": _tier("30m"),
        "high": _tier("30m", approvers=["UBOSS"]),
        "critical": _tier("5m", approvers=["UBOSS"], approvals_required=2),
    },
    "tools": {
        "send_email": {"tier": "low", "review": "none"},
        "refund": {"tier": "medium", "rules": [{"if": "amount > 1000", "tier": "high"}]},
        "deploy": {"tier": "critical"},
    },
}

NEW: dict[str, Any] = copy.deepcopy(OLD)
NEW["tiers"]["medium"]["review_timeout"] = "10m"
NEW["tiers"]["high"]["approvers"] = ["UBOSS", "ULEAD"]
NEW["tools"]["send_email"] = {"tier": "low"}
NEW["tools"]["refund"] = {
    "tier": "low",
    "review": "none",
    "rules": [{"if": "amount > 100", "tier": "medium"}, {"if": "amount > 1000", "tier": "high"}],
}


def dump(policy: dict[str, Any]) -> str:
    return yaml.safe_dump(policy, sort_keys=False)
