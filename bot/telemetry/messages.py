"""Every sentence the telemetry parts say to a person."""

from __future__ import annotations

OTEL_MISSING = (
    "Tracing is configured (OTEL_* variables) but the OpenTelemetry SDK is not installed "
    "({error}). Fix: pip install 'hitl-bot[otel]', or unset OTEL_TRACES_EXPORTER and "
    "OTEL_EXPORTER_OTLP_ENDPOINT."
)
OTEL_PROTOCOL = (
    "OTEL_EXPORTER_OTLP_PROTOCOL={protocol} is not supported: hitl-bot exports OTLP over "
    "HTTP. Fix: set it to http/protobuf (or unset it) and point the endpoint at the "
    "collector's HTTP port (4318)."
)
TRACING_ON = "Tracing on: each request's span is exported when it reaches a final state."
WEBHOOK_REFUSED = "webhook {name} answered {status} for {type} {id}"
WEBHOOK_UNREACHABLE = "webhook {name} unreachable for {type} {id}: {error}"
WEBHOOK_BAD = (
    "HITL_WEBHOOKS has {part!r}, which is not NAME=URL (a name of lowercase letters, digits, "
    "- and _; an http:// or https:// URL). Fix: export HITL_WEBHOOKS=audit=https://example.com/hook"
)
WEBHOOK_TWICE = "HITL_WEBHOOKS names {name} twice. Fix: give each URL its own name."
WEBHOOK_SECRET = (
    "The webhook {name} has no secret, or one under 16 characters. Fix: export "
    '{var}=$(python -c "import secrets; print(secrets.token_urlsafe(32))") and give the '
    "same value to the receiver, which checks each event's signature with it."
)
GROUP_DROPPED = (
    "Dropped the events-stream group {group}: no longer configured (HITL_WEBHOOKS, OTEL_*); "
    "its undelivered events are not sent."
)
