"""The policy serve runs with when HITL_POLICY names no file: every tier reviewed in
Slack channels a new workspace creates, nothing auto-approved above `low`, two people
and the pager for `critical` (docs/policy.md explains each key)."""

TEXT = """
default_tier: medium
claim_timeout: 10m
execution_timeout: 15m
tiers:
  low:        # email draft, internal note
    review_timeout: 4h
    reviewers: {channels: ["#hitl-approvals"]}
    escalation: [{channels: ["#hitl-team"]}]
    on_exhausted: auto_approved
  medium:     # refund under threshold
    review_timeout: 30m
    reviewers: {channels: ["#hitl-approvals"]}
    escalation: [{channels: ["#hitl-oncall"]}]
    on_exhausted: auto_rejected
  high:       # bulk delete, bank transfer: named approver, then a backup
    review_timeout: 15m
    reviewers: {channels: ["#hitl-approvals"]}
    escalation: [{channels: ["#hitl-oncall"]}, {channels: ["#hitl-leads"]}]
    approvers: ["#hitl-leads"]   # replace with your approvers' user or group ids
    on_exhausted: auto_rejected
  critical:   # production config change: two people, then the pager
    review_timeout: 5m
    reviewers: {channels: ["#hitl-approvals"]}
    escalation: [{channels: ["#hitl-pager"]}]
    approvers: ["#hitl-leads"]   # replace with your approvers' user or group ids
    on_exhausted: auto_rejected
    approvals_required: 2
"""
