"""The event stream every transition publishes to: the bus, its trimming, and the
consumer-group reader the notifier, webhooks and traces share."""
