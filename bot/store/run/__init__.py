"""A run's records: the run itself, its audit, the queue workers take runs from, its
steering queue and signals, its Slack thread, who owns it, the agents workers offer, and
the questions it asks."""
