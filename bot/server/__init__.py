"""The server process: `hitl-bot serve`, its ASGI host and its event loop."""
