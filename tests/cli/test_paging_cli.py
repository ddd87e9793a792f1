"""`policy show` and `policy check` list each pager level and whether its key's variable
is set, and never print the key."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from tests.cli.test_cli import cli
from tests.conftest import QUORUM_POLICY

KEY = "pd-routing-key-that-is-secret-0042"


def _file(tmp_path: Path) -> Path:
    policy = copy.deepcopy(QUORUM_POLICY)
    policy["tiers"]["critical"] |= {
        "escalation": [
            {
                "pagerduty": {"routing_key_env": "PD_ROUTING_KEY"},
                "opsgenie": {"api_key_env": "OPSGENIE_KEY"},
            }
        ]
    }
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(policy))
    return path


@pytest.mark.parametrize("command", ["show", "check"])
async def test_policy_lists_each_pager_and_whether_its_key_is_set(
    tmp_path: Path, command: str
) -> None:
    path = str(_file(tmp_path))
    env = {"PD_ROUTING_KEY": KEY, "OPSGENIE_KEY": "", "COLUMNS": "300", "SLACK_BOT_TOKEN": ""}
    code, text, err = await cli("policy", command, path, env=env)
    assert code == 0, err
    assert "PagerDuty (PD_ROUTING_KEY set)" in text
    assert "Opsgenie (OPSGENIE_KEY NOT SET)" in text
    code, dumped, _ = await cli("policy", command, path, "--json", env=env)
    assert code == 0 and '"routing_key_env": "PD_ROUTING_KEY"' in dumped
    assert KEY not in text + err + dumped
