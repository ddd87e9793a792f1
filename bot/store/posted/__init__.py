"""What the notifier keeps about Slack and pagers: card references, the Slack look-up
cache, parked and refused messages, pages, and batch digests."""
