"""The demo's policy: the production shape with timeouts short enough to watch.

Written into the data dir at every start and handed to every part through
HITL_POLICY (Settings.hitl_policy), so the bot, the sweeper and the worker judge
by the same file and `hitl-bot policy check` can show it. `hitl-bot demo --policy
FILE` uses that file instead, checked before anything starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from bot.core.policy import Policy, load_policy, parse_policy

POLICY_NAME = "demo-policy.yaml"
REVIEW_S = 45  # per level: long enough to click, short enough to watch an escalation
ASK_TIMEOUT_MS = 3 * 60_000  # how long the agent's questions wait for an answer

_REVIEW = f"{REVIEW_S}s"

# Medium calls offer standing approvals (docs/grants.md) so "Approve and allow similar"
# can be tried; the parent and the leads (carol) are operators, so their App Home
# shows the fatigue panel (docs/fatigue.md).
# approvers [] means only the people of the levels reached so far may decide: the
# parent first, then the on-call group too once it escalated. The kid who asked the
# agent counts as requester, so the kid's own click is refused (separation of duties).
DEMO_POLICY: dict[str, Any] = {
    "default_tier": "medium",
    "tiers": {
        "low": {
            "review_timeout": _REVIEW,
            "reviewers": {"channels": ["#hitl-approvals"]},
            "on_exhausted": "auto_approved",
        },
        "medium": {
            "review_timeout": _REVIEW,
            "reviewers": {"users": ["UPARENT"]},
            "escalation": [{"groups": ["SONCALL"], "channels": ["#hitl-oncall"]}],
            "on_exhausted": "auto_rejected",
            "approvers": [],
            "standing": {"max": "1h", "scope": "requester"},
        },
        "high": {
            "review_timeout": _REVIEW,
            "reviewers": {"groups": ["SFINANCE"]},
            "escalation": [{"groups": ["SONCALL"], "channels": ["#hitl-oncall"]}],
            "on_exhausted": "auto_rejected",
            "approvers": ["SFINANCE"],
        },
        "critical": {
            "review_timeout": _REVIEW,
            "reviewers": {"groups": ["SFINANCE"]},
            "escalation": [{"channels": ["#hitl-oncall"]}],
            "on_exhausted": "auto_rejected",
            "approvals_required": 2,
            "approvers": ["SFINANCE"],
        },
    },
    "tools": {
        "move_claw": {"tier": "low", "review": "none"},
        "drop_claw": {"tier": "medium"},
        "lookup_order": {"tier": "low", "review": "none"},
        "issue_refund": {"tier": "medium", "rules": [{"if": "amount > 1000", "tier": "high"}]},
    },
    "operators": ["UPARENT", "SLEADS"],
}


def demo_policy() -> Policy:
    return parse_policy(DEMO_POLICY, source="demo policy")


def write_policy(data_dir: Path) -> Path:
    """Write the policy file into `data_dir` (created 0700 if missing) and return its path."""
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = data_dir / POLICY_NAME
    header = (
        "# Written by `hitl-bot demo` at every start; edits are lost.\n"
        "# To try your own: copy it, edit the copy, and run `hitl-bot demo --policy COPY`.\n"
    )
    path.write_text(header + yaml.safe_dump(DEMO_POLICY, sort_keys=False), encoding="utf-8")
    return path


def policy_for(data_dir: Path, given: Path | None) -> Path:
    """The policy file the demo runs by: `given` (`--policy FILE`) once it loads, else the
    built-in one written into `data_dir`. A file that does not load raises ConfigError
    naming it and the fix, before any part starts."""
    if given is None:
        return write_policy(data_dir)
    path = given.expanduser().resolve()
    load_policy(path, setting=None)
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path
