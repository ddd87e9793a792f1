"""Pure core: states, models, policy. No Redis, no Slack, no clock reads."""
