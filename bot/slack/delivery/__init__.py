"""From the event stream to Slack: the notifier, one post per item even across crashes,
escalation posts, a run's thread lines, and what is done when Slack refuses a message."""
