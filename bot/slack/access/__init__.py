"""Who a Slack person is to the policy: their user groups and channels, the policy's
channel principals, and who may steer, stop and read (who may decide is bot/core/deciders.py)."""
