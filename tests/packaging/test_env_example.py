"""deploy/.env.example names every setting the code reads, and nothing else.

A setting added to bot/config.py (or read from the environment anywhere in bot/) and
left out of the template is one a deployment never learns about: this fails naming it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from bot.config import Settings

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "deploy" / ".env.example"

# Read from the environment outside `Settings`, each by its reader (the scan below finds
# any other: a new one must be added here, with its reason, and to the template).
OUTSIDE_SETTINGS = {
    "HITL_TAKEOVER_AFTER": "bot/agent/worker.py: the default of `worker --min-idle`",
    "HITL_PAGERDUTY_URL": "bot/core/pagers.py: where serve sends PagerDuty pages",
    "HITL_OPSGENIE_URL": "bot/core/pagers.py: where serve sends Opsgenie alerts",
    "HITL_API_URL": "bot/sdk, bot/mcp, bot/claudecode: the bot's API, for agents elsewhere",
    "HITL_MCP_TOKEN": "bot/mcp/transport.py: the token MCP clients send",
    "HITL_RUN_ID": "bot/mcp/sessions.py: the run an MCP gateway's calls belong to",
    # a prefix (ending in _): the template shows it with an example name
    "HITL_WEBHOOK_SECRET_": "bot/telemetry/webhook_config.py: each webhook's secret",
    # OpenTelemetry's standard variables that turn tracing on and point it somewhere
    "OTEL_SDK_DISABLED": "bot/telemetry/setup.py: tracing off whatever else is set",
    "OTEL_TRACES_EXPORTER": "bot/telemetry/setup.py: otlp or console; none: off",
    "OTEL_EXPORTER_OTLP_ENDPOINT": "bot/telemetry/setup.py: the collector; set: tracing on",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "bot/telemetry/setup.py: the same, for traces only",
    "OTEL_EXPORTER_OTLP_PROTOCOL": "bot/telemetry/setup.py: only http/protobuf",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "bot/telemetry/setup.py: the same, for traces only",
    "OTEL_SERVICE_NAME": "bot/telemetry/setup.py: the spans' service.name, default hitl-bot",
}
PREFIXES = tuple(name for name in OUTSIDE_SETTINGS if name.endswith("_"))
ENV_NAME = re.compile(r"(HITL|SLACK|OPENAI|REDIS|OTEL)_[A-Z0-9_]+")
LINE = re.compile(r"^#?\s*([A-Z][A-Z0-9_]*)=", re.MULTILINE)


def _names_in_code() -> set[str]:
    """Every string in bot/ that is an environment name as a whole (HITL_X, never a
    sentence that mentions one): how code outside Settings names what it reads."""
    found = set()
    for path in (ROOT / "bot").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            value = node.value if isinstance(node, ast.Constant) else None
            if isinstance(value, str) and ENV_NAME.fullmatch(value):
                found.add(value)
    return found


def settings() -> set[str]:
    return {name.upper() for name in Settings.model_fields} | set(OUTSIDE_SETTINGS)


def template() -> set[str]:
    names = set(LINE.findall(TEMPLATE.read_text(encoding="utf-8")))
    # HITL_WEBHOOK_SECRET_AUDIT stands for the prefix it shows
    return {next((p for p in PREFIXES if n.startswith(p)), n) for n in names}


def test_every_setting_is_in_the_env_template() -> None:
    missing = sorted(settings() - template())
    assert not missing, (
        f"deploy/.env.example lacks {', '.join(missing)}: add a line `NAME=` for each "
        "(commented out, `# NAME=default`, when it is optional) under a comment saying "
        "what it is, beside docs/configuration.md's row"
    )


def test_the_env_template_names_no_setting_the_code_does_not_read() -> None:
    stale = sorted(template() - settings())
    assert not stale, f"deploy/.env.example names {', '.join(stale)}, which nothing reads"


def test_every_environment_name_read_outside_settings_is_listed_here() -> None:
    unknown = sorted(_names_in_code() - settings())
    assert not unknown, (
        f"bot/ reads {', '.join(unknown)} but neither Settings nor OUTSIDE_SETTINGS "
        "(tests/packaging/test_env_example.py) has it: add it to Settings, or to "
        "OUTSIDE_SETTINGS with its reader, and to deploy/.env.example"
    )
    assert set(OUTSIDE_SETTINGS) <= _names_in_code(), "the scan no longer finds the names"


def test_the_template_blanks_nothing_the_image_sets() -> None:
    # An uncommented `HITL_HOST=` would override the image's 0.0.0.0 with "unset", and
    # serve would listen on the container's loopback, out of reach.
    image = set(re.findall(r"\b(HITL_[A-Z_]+)=", (ROOT / "Dockerfile").read_text()))
    assert image >= {"HITL_HOST", "HITL_PORT", "HITL_DATA_DIR"}
    active = set(re.findall(r"^([A-Z][A-Z0-9_]*)=", TEMPLATE.read_text(), re.MULTILINE))
    assert not image & active, f"commented out, please: {sorted(image & active)}"
