"""What `hitl-bot policy suggest` says: typed templates, so a wrong placeholder fails
the messages test (tests/test_messages.py)."""

from __future__ import annotations

HEAD = (
    "Mined {n} requests made since {since} under {policy}: {made} suggestion(s), "
    "{refused} pattern(s) people decided without one."
)
EMPTY = "No requests were made since {since}: nothing to mine."
NONE_MADE = (
    "Nothing to suggest: no pattern is both decided often enough and clear enough. "
    "Run with --explain to see why for each."
)
EXPLAIN_HINT = "{n} other pattern(s) got no suggestion; --explain says why."

TITLE = {
    "no_review": "{n}. {tool} by {requester} ({tier}): run without review inside the bounds "
    "(the policy approves them, audited; outside, {tier} as today)",
    "lower_tier": "{n}. {tool} by {requester} ({tier}): review at {new} inside the bounds "
    "(outside, {tier} as today)",
    "stricter": "{n}. {tool} by {requester} ({tier}): review at {new}{where}",
}
STRICTER_ABOVE = " from {argument} {value} up"
STRICTER_ALL = " every call"

EVIDENCE = (
    "   Evidence: {requests} requests; {approved} approved as asked, {rejected} rejected "
    "({rejection_rate}), {edited} edited ({edit_rate}), {timed_out} left to time out; "
    "median {median} to decide; decided by {deciders}."
)
BOUNDS = "   Bounds, read from the calls approved: {bounds}."
BOUND_RANGE = "{argument} from {low} to {high}"
BOUND_VALUES = "{argument} one of {values}"
LOOSE = "   Not bounded (the policy cannot hold them; read before applying): {loose}."
LOOSE_WHY = {
    "not_always": "{argument} (not in every call)",
    "shape": "{argument} (not a number or short text)",
    "many": "{argument} (more than 20 values)",
    "unwritable": "{argument} (cannot be written in a rule)",
}
EFFECT = (
    "   Effect, as `policy diff` replays it: {moved} request(s) change tier ({tiers}); "
    "{to_auto} decided by a person would have been resolved without one; "
    "{to_person} resolved without a person would have gone to one."
)
MOVED_WHO = "   The policy names tools, not requesters: it moves the calls of {who}."
FRAGMENT = "   As a policy fragment (nothing changes until you apply it):"

NOT_TITLE = "Not suggested, {n}:"
NOT_LINE = "  - {tool} by {requester} ({tier}), {decided} decided: {why}"
WHY = {
    "critical": "critical calls are decided one at a time; nothing is ever suggested for them",
    "quorum": "the tier needs {quorum} approvals; no rule may stand for several people",
    "too_few": "fewer than {min} decisions to go by",
    "slow": "people take their time over it (median {median}, above {quick}): they read it",
    "lowest": "it is already low; the policy cannot exempt part of a low tool's calls",
    "raised": "a rule or the caller raised these calls above the tool's tier; change the "
    "rule by hand if you mean to",
    "no_bound": "none of its arguments can be bounded from what was approved",
    "rejected_inside": "request {request} inside the bounds was rejected by {actor}",
    "edited_inside": "request {request} inside the bounds was edited by {actor} before approval",
    "timed_out_inside": "request {request} inside the bounds was left to time out",
}

OUT_HEAD = (
    "# Suggested by `hitl-bot policy suggest --since {since_arg}` on {now}, from {n} requests.\n"
    "# Nothing here is in effect. Review each tool and delete the ones you do not accept;\n"
    "# `hitl-bot policy apply THIS_FILE --by NAME` merges the rest into the policy file\n"
    "# (checked first, recorded in the policy log). `hitl-bot policy diff OLD NEW` and the\n"
    "# shadow policy (HITL_SHADOW_POLICY) show what it would change before you do.\n"
)
OUT_ITEM = "# {title}\n"
OUT_SKIPPED = (
    "# {tool}: another suggestion is written here for this tool; this one is printed only.\n"
)
WROTE = "Wrote {n} suggestion(s) to {path}: review it; nothing changes until you apply it."

# `hitl-bot policy apply FRAGMENT` and `hitl-bot policy applied`
APPLY_NOT_A_FRAGMENT = (
    "{path} is not a policy fragment: it needs a `tools:` mapping (as `policy suggest "
    "--out` writes), and only that."
)
APPLY_REFUSED = "Not applied: the policy with {path} merged in does not load: {problem}"
APPLIED = (
    "Applied {path} to {target} ({n} tool(s): {tools}), as {by}; recorded in the store's "
    "policy log (fragment sha256 {sha}). Restart serve, or point HITL_SHADOW_POLICY at "
    "{target} first to watch it without enforcing it."
)
APPLIED_NONE = "No policy change was applied with `hitl-bot policy apply`."
APPLIED_LINE = "{at}  {by}  {target}  {tools}  fragment {sha}  {before} -> {after}"
APPLY_NEEDS_BY = "Say who applies it: --by NAME (it goes in the policy log)."
APPLY_NO_POLICY = (
    "Not applied: no policy file to change; fix: give --policy FILE, or set HITL_POLICY "
    "to the file serve reads."
)
APPLY_NOT_A_FILE = "Not applied: {target} is not a policy file (no such file)."
