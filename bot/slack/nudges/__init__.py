"""Approval-fatigue signals told to the operators in Slack, once a day each."""
