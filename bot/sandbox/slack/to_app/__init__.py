"""What the emulated Slack sends the app: signed events, interactions and slash commands
over HTTP or Socket Mode, their payloads, and the replies through `response_url`."""
