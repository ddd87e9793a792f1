"""Batch decisions: one digest card per (channel, requester, tool) with three or more
requests waiting, and its "Approve all" / "Reject all" buttons. Each request is still
decided on its own, through the same sealed, audited transition as a click on its card."""
