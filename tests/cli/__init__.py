"""The `hitl-bot` commands, run as a person runs them."""
