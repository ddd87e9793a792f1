"""Slack's wire: the Web API client and its rate gate, the events endpoint and its checks,
Socket Mode, and what serve checks of the token and the policy at start."""
