"""Slack's wire: the Web API client and its rate gate, the events endpoint and its
checks, Socket Mode, and the words for what Slack refuses."""
