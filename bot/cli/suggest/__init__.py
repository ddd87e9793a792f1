"""`hitl-bot policy suggest`: the policy changes the recorded requests support."""
