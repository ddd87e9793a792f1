"""The Slack side, by role: transport (the Web API and the events coming in), blocks (pure
Block Kit), listeners (the Bolt handlers), delivery (the notifier), access (who a person
is to the policy); the batch digest and standing grants in their own folders."""
