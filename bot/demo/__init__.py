"""`hitl-bot demo`: the bot, a local Slack with a web page, an agent and its store, at once.

`app.py` starts and stops the parts, `parts.py` holds their plumbing, `policy.py`
the short timeouts, and `messages.py` every sentence it prints. `agents/` are the
demo's two agents and `claw_script.py` / `refund_script.py` the scripted models
that play them. Import from the modules: this package loads nothing by itself.
"""
