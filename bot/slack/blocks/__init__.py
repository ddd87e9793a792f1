"""Block Kit as pure functions: the card and its call, modals, lists, the App Home, a
request's lines, and untrusted text made safe for mrkdwn. No I/O, no clock."""
