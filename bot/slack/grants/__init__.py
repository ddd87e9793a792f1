"""Standing approvals in Slack: the card's "Approve and allow similar" button and its
dialog, the grant line and Revoke button on the card that made it, the note for each
call a grant passed, `/hitl grants` and the App Home's list (docs/grants.md)."""
