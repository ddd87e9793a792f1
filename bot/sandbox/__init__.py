"""Stand-ins for the outside world, for `hitl-bot demo` and the tests.

`slack` emulates the Slack Web API and its events; `model` is a scripted
OpenAI-compatible model, and `claw_script` its rules for the claw machine.
"""
