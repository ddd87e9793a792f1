"""The Redis plumbing: one connection (single server, Sentinel or Cluster), the embedded
Valkey, replica acknowledgements, the wait hub, leases and maintenance scans. It knows
slots, not records: nothing here reads a request or a run (those are bot.store's)."""
