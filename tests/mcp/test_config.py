"""The proxy's config file and command line: mistakes are named before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.errors import ConfigError
from bot.mcp.config import exposed_name, load_config, parse_config, single


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
