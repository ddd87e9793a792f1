"""What many tests share: waiting on a condition (poll), starting processes and local
clusters, reading the docs, the Slack page in Chromium, fake pagers, decisions and keys."""
