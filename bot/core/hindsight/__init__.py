"""What the history of decisions says, as pure functions: the approval-fatigue figures
and the signals operators are told of, a policy's diff against recorded decisions, and
the shadow policy's verdicts."""
