"""`hitl-bot demo`: the bot, a local Slack with a web page, an agent and its store, at once.

`app.py` starts and stops the parts, `parts.py` holds their plumbing, `policy.py`
the short timeouts, and `messages.py` every sentence it prints.
"""

from bot.demo.app import AGENTS, DemoOptions, demo_responder, run_demo, serve_demo
from bot.demo.parts import count_store

__all__ = ["AGENTS", "DemoOptions", "count_store", "demo_responder", "run_demo", "serve_demo"]
