"""Whether `serve` traces, from the standard OTEL_* variables (docs/tracing.md).

Off unless configured: on when OTEL_TRACES_EXPORTER names `otlp` (or `console`), or an
OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turns it off. The SDK is an optional
extra (`pip install 'hitl-bot[otel]'`): tracing asked for without it stops start-up
with the fix, rather than running untraced unseen.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from bot.errors import ConfigError
from bot.telemetry import messages as msg


def wanted(env: Mapping[str, str]) -> bool:
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = {e.strip().lower() for e in env.get("OTEL_TRACES_EXPORTER", "").split(",")}
    if "none" in exporters:
        return False
    if exporters & {"otlp", "console"}:
        return True
    return bool(
        env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


def provider_from_env(env: Mapping[str, str]) -> Any:
    """A TracerProvider exporting as the OTEL_* variables say, or None when off."""
    if not wanted(env):
        return None
    try:
        spans = importlib.import_module("bot.telemetry.spans")
        export = importlib.import_module("opentelemetry.sdk.trace.export")
        resources = importlib.import_module("opentelemetry.sdk.resources")
    except ImportError as exc:
        raise ConfigError(msg.OTEL_MISSING.format(error=exc)) from exc
    processors = []
    exporters = {e.strip().lower() for e in env.get("OTEL_TRACES_EXPORTER", "otlp").split(",")}
    if "console" in exporters:
        processors.append(export.SimpleSpanProcessor(export.ConsoleSpanExporter()))
    if "otlp" in exporters or not exporters - {"console", ""}:
        protocol = env.get(
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", env.get("OTEL_EXPORTER_OTLP_PROTOCOL", "")
        )
        if protocol and protocol != "http/protobuf":
            raise ConfigError(msg.OTEL_PROTOCOL.format(protocol=protocol))
        try:
            otlp = importlib.import_module("opentelemetry.exporter.otlp.proto.http.trace_exporter")
        except ImportError as exc:
            raise ConfigError(msg.OTEL_MISSING.format(error=exc)) from exc
        processors.append(export.BatchSpanProcessor(otlp.OTLPSpanExporter()))
    resource = resources.Resource.create({"service.name": env.get("OTEL_SERVICE_NAME", "hitl-bot")})
    return spans.provider(*processors, resource=resource)
