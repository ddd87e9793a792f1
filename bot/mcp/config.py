"""The proxy's YAML file: which upstream MCP servers to put behind the gate.

    upstreams:
      files:                       # tools show as files__<tool>
        command: npx
        args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv/data"]
        env: {LOG_LEVEL: warn}
      tracker:
        url: https://tracker.example.com/mcp
        headers: {Authorization: "Bearer ${TRACKER_TOKEN}"}   # from the proxy's environment

The fields of an upstream are those of an `mcpServers` entry, so a client's existing
configuration moves over as it is. Validated strictly: a misspelt field would
otherwise start a different server than the operator meant.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from bot.errors import ConfigError
from bot.mcp import messages as msg

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
SEPARATOR = "__"
# No "_" in a name, so "<upstream>__<tool>" splits back unambiguously at the first "__",
# and the result stays inside what every client accepts as a tool name.
UpstreamName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9-]{0,31}$")]


class Upstream(BaseModel):
    """One upstream MCP server: a command to start (stdio) or a streamable-HTTP URL."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: Annotated[str, StringConstraints(pattern=r"^https?://")] | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    # How the gateway opens the session: "legacy" is the initialize handshake every server
    # speaks, and the one where a server may ask mid-call (elicitation, the 2025-11-25
    # way); "auto" discovers the newest protocol the server offers, where a server that
    # elicits over stdio must return its questions as results instead.
    protocol: Literal["legacy", "auto"] = "legacy"

    @model_validator(mode="after")
    def _one_kind(self) -> Upstream:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of 'command' (stdio) or 'url' (streamable HTTP)")
        if self.url is not None and (self.args or self.env or self.cwd):
            raise ValueError("'args', 'env' and 'cwd' belong to a 'command' upstream, not a 'url'")
        if self.command is not None and self.headers:
            raise ValueError("'headers' belong to a 'url' upstream, not a 'command'")
        return self

    def resolved(self, environ: Mapping[str, str]) -> Upstream:
        """`${VAR}` in `env` and `headers` replaced from `environ`, so secrets stay out of
        the file. A variable that is not set is an error, never an empty credential."""

        def sub(value: str) -> str:
            def one(m: re.Match[str]) -> str:
                if m.group(1) not in environ:
                    raise ConfigError(msg.VAR_UNSET.format(var=m.group(1)))
                return environ[m.group(1)]

            return _VAR.sub(one, value)

        return self.model_copy(
            update={
                "env": {k: sub(v) for k, v in self.env.items()},
                "headers": {k: sub(v) for k, v in self.headers.items()},
            }
        )

    @property
    def where(self) -> str:
        return self.url or " ".join([self.command or "", *self.args])


class ProxyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    upstreams: dict[UpstreamName, Upstream] = Field(min_length=1)


def exposed_name(upstream: str, tool: str) -> str:
    return f"{upstream}{SEPARATOR}{tool}"


def parse_config(data: object, *, source: str = "<proxy config>") -> ProxyConfig:
    try:
        return ProxyConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(x) for x in e['loc']) or '(top level)'}: "
            f"{e['msg'].removeprefix('Value error, ')}"
            for e in exc.errors()
        )
        raise ConfigError(msg.CONFIG_INVALID.format(path=source, problems=problems)) from None


def load_config(path: Path) -> ProxyConfig:
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(msg.CONFIG_UNREADABLE.format(path=path, error=exc)) from None
    return parse_config(data, source=str(path))


def single(argv: list[str], name: str = "upstream") -> ProxyConfig:
    """The config for `hitl-bot mcp proxy -- command args...`."""
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9-]{0,31}$", name):
        raise ConfigError(msg.CONFIG_INVALID.format(path="--name", problems=f"{name!r}"))
    return ProxyConfig(upstreams={name: Upstream(command=argv[0], args=tuple(argv[1:]))})
