"""A call's arguments: the canonical payload and its hash, plain JSON, and the JSON
Schema checks (a safe subset, its bounds, safe regular expressions)."""
