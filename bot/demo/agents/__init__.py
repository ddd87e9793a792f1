"""The agents that ship with hitl-bot: `claw` (the mission's claw machine) and `refunds`."""
