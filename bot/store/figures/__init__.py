"""What is read back from the records as figures: the Prometheus metrics, the fatigue
report, the shadow policy's verdicts, and the history a policy diff replays."""
