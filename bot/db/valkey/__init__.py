"""The embedded Valkey: one server per data dir, shared by every hitl-bot process there."""
