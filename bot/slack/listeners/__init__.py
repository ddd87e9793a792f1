"""The Bolt listeners, each behind one prologue (prologue.py): clicks, modals, thread
replies, `/hitl` and the App Home."""
