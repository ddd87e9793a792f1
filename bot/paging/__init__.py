"""Paging the on-call engineer (PagerDuty Events v2, Opsgenie) when a request reaches a
level with a pager, and resolving the page when it is decided. Not Slack: the notifier
calls it beside its Slack posts (bot/slack/delivery/escalations.py)."""
