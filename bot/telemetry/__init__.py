"""What `serve` tells the systems teams already watch: OpenTelemetry spans of each
request (docs/tracing.md) and signed CloudEvents to webhooks (docs/webhooks.md)."""
