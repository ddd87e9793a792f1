"""Who a Slack person is to the policy: their user groups and channels, and who may steer,
stop and read (who may decide is bot/core/deciders.py)."""
