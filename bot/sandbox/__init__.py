"""Stand-ins for the outside world, for `hitl-bot demo` and the tests.

`slack` emulates the Slack Web API and its events; `model` is a scripted
OpenAI-compatible model (the demo's rules for it live in bot/demo).
"""
