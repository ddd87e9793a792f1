"""The proxy's config file and command line: mistakes are named before anything starts."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from bot.cli.main import app
from bot.core.policy import parse_policy
from bot.errors import ConfigError
from bot.mcp.config import exposed_name, load_config, parse_config, single
from tests.e2e.conftest import POLICY
from tests.support.docpages import page


def test_an_mcpservers_style_entry_is_an_upstream() -> None:
    cfg = parse_config(
        {
            "upstreams": {
                "files": {"command": "npx", "args": ["-y", "srv", "/data"], "env": {"A": "1"}},
                "tracker": {"url": "http://127.0.0.1:9000/mcp"},
            }
        }
    )
    assert cfg.upstreams["files"].args == ("-y", "srv", "/data")
    assert cfg.upstreams["tracker"].url == "http://127.0.0.1:9000/mcp"
    assert exposed_name("files", "read_file") == "files__read_file"


@pytest.mark.parametrize(
    ("upstreams", "says"),
    [
        ({"x": {}}, "exactly one of 'command'"),
        ({"x": {"command": "a", "url": "http://h/mcp"}}, "exactly one of 'command'"),
        ({"x": {"url": "http://h/mcp", "args": ["a"]}}, "belong to a 'command'"),
        ({"x": {"url": "ftp://h"}}, "upstreams.x.url"),
        ({"my_files": {"command": "a"}}, "upstreams.my_files"),  # "_" would blur the prefix
        ({"x": {"comand": "a"}}, "comand"),
        ({}, "upstreams"),
    ],
)
def test_a_wrong_config_names_the_field(upstreams: object, says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        parse_config({"upstreams": upstreams}, source="proxy.yaml")


def test_an_unreadable_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the proxy config"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("upstreams: [")
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(bad)


def test_one_command_after_the_double_dash() -> None:
    cfg = single(["npx", "-y", "server", "--flag"], "files")
    up = cfg.upstreams["files"]
    assert (up.command, up.args) == ("npx", ("-y", "server", "--flag"))
    with pytest.raises(ConfigError):
        single(["x"], "no__pe")


def test_the_cli_wants_exactly_one_way_to_name_upstreams(tmp_path: Path) -> None:
    runner = CliRunner()
    none = runner.invoke(app, ["mcp", "proxy"])
    assert none.exit_code == 2 and "--config" in none.output
    cfg = tmp_path / "p.yaml"
    cfg.write_text("upstreams: {a: {command: x}}")
    both = runner.invoke(app, ["mcp", "proxy", "--config", str(cfg), "--", "npx", "srv"])
    assert both.exit_code == 2 and "not both" in both.output


def _mcp_page_blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", page("mcp.md"), re.S)


def test_the_mcp_page_configs_are_valid() -> None:
    """The copy-paste blocks must work as pasted: the proxy file, the policy lines, and
    the mcpServers entries naming real subcommands."""
    yamls = [yaml.safe_load(b) for b in _mcp_page_blocks("yaml")]
    proxies = [y for y in yamls if "upstreams" in y]
    assert proxies and all(parse_config(p) for p in proxies)
    for y in yamls:
        if "tools" in y:
            parse_policy({"tiers": POLICY["tiers"], "tools": y["tools"]})
    entries = [json.loads(b)["mcpServers"] for b in _mcp_page_blocks("json")]
    assert entries
    for servers in entries:
        for entry in servers.values():
            assert entry["command"] == "hitl-bot" and entry["args"][0] == "mcp"
            assert entry["args"][1] in {"serve", "proxy"}


def test_secrets_come_from_the_environment_and_must_be_set() -> None:
    up = parse_config(
        {
            "upstreams": {
                "t": {"url": "https://t/mcp", "headers": {"Authorization": "Bearer ${TOK}"}}
            }
        }
    ).upstreams["t"]
    assert up.resolved({"TOK": "abc"}).headers == {"Authorization": "Bearer abc"}
    with pytest.raises(ConfigError, match=r"\$\{TOK\}"):
        up.resolved({})
    with pytest.raises(ConfigError, match="'headers' belong to a 'url'"):
        parse_config({"upstreams": {"c": {"command": "x", "headers": {"A": "b"}}}})


def test_the_cli_stops_on_an_unset_variable(tmp_path: Path) -> None:
    cfg = tmp_path / "p.yaml"
    cfg.write_text('upstreams: {t: {url: "https://t/mcp", headers: {A: "${NOT_SET_HERE}"}}}')
    out = CliRunner().invoke(app, ["mcp", "proxy", "--config", str(cfg)])
    assert out.exit_code == 2 and "NOT_SET_HERE" in out.output


def test_without_the_extra_the_command_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a)
    )
    out = CliRunner().invoke(app, ["mcp", "serve"])
    assert out.exit_code == 2 and "hitl-bot[mcp]" in out.output
