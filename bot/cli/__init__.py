"""The hitl-bot commands (typer): serve, worker, demo, mcp, runs, audit, valkey, channels."""
