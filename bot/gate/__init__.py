"""The approval use cases: file a call, decide it, let it time out, claim it, report
how it ran, withdraw and correct it. Every face (Slack, the API, the SDK's direct mode,
the worker, MCP, Claude Code, the sweeper) moves a request through these functions;
none calls the store's transition scripts itself (tests/test_layers.py holds that)."""
