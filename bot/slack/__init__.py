"""The Slack side: pure Block Kit rendering (render, views, escape) and the Bolt listeners."""
