"""Policy suggestions mined from the recorded requests (`hitl-bot policy suggest`)."""
