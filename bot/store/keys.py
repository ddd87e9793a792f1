"""Every Redis key hitl-bot uses, in one place.

Keys are spread over `SHARDS` hash tags (`hitl:{s07}:...`). A request, its
audit list, its wake stream and the shard's expiry and pending indexes share a
tag, so each transition script touches one slot and runs on Redis Cluster; the
sweeper walks the shards. (A single global expiry index, as a `{req:ID}` tag
per request would need, could not be updated in the same script on Cluster.)
"""

from __future__ import annotations

from bot.db.slots import PREFIX as PREFIX
from bot.db.slots import SHARDS as SHARDS
from bot.db.slots import replica_mark as replica_mark
from bot.db.slots import shard_of as shard_of
from bot.db.slots import shard_of_key as shard_of_key
from bot.db.slots import tag as tag
from bot.db.slots import wait_control as wait_control


def _t(item_id: str) -> str:
    return tag(shard_of(item_id))


def request(rid: str) -> str:
    return f"{request_prefix(shard_of(rid))}{rid}"


def request_prefix(shard: int) -> str:
    """What a request's key is in its shard, before the id."""
    return f"{tag(shard)}req:"


def posts(rid: str) -> str:
    """Hash of the escalation messages posted for a request, in the request's shard.

    Field `LEVEL:user:U123` or `LEVEL:channel:#name` -> `CHANNEL TS` of the message
    posted there (so every later notice can update it, and a retry never posts it
    twice); `LEVEL:done` once every post and page of that level went out;
    `SLOT:posting` -> when the first attempt to post that slot started, until its ts is
    saved (a crash in between is found and adopted, bot/slack/delivery/once.py).
    """
    return f"{_t(rid)}posts:{rid}"


# SCAN pattern over every request's hash: for operator maintenance only.
REQUEST_RECORDS = f"{PREFIX}{{s??}}:req:*"


def audit(rid: str) -> str:
    return f"{_t(rid)}audit:{rid}"


def wake(item_id: str) -> str:
    """A short stream per request or question; waiters block on it (XREAD), no polling."""
    return f"{_t(item_id)}wake:{item_id}"


def question(qid: str) -> str:
    return f"{_t(qid)}q:{qid}"


def loose_questions(shard: int) -> str:
    """Sorted set of the questions asked outside any run (an MCP elicitation, an agent's
    ask_human with no run), by `asked_at`: how retention finds them before their TTL."""
    return f"{tag(shard)}loose-questions"


# SCAN pattern over every question's hash: for operator maintenance only (a run's
# questions are read through `run_questions`, the others through `loose_questions`).
QUESTION_KEYS = f"{PREFIX}{{s??}}:q:*"


def open_views(rid: str) -> str:
    """The modals opened on a request while it waited: view id -> callback id."""
    return f"{_t(rid)}views:{rid}"


def due(shard: int) -> str:
    """Sorted set: member `kind:id|version`, score the deadline in epoch ms."""
    return f"{tag(shard)}due"


def pending(shard: int) -> str:
    """Sorted set of requests in pending_review, by creation time."""
    return f"{tag(shard)}pending"


def every(shard: int) -> str:
    """Sorted set of requests by creation time, for audit export and verify: every one
    that has left review (those in review are in `pending`; see ids_between)."""
    return f"{tag(shard)}all"


def events(shard: int) -> str:
    """Stream of everything that happened in the shard, for the Slack notifier.

    Read through a consumer group and acknowledged only once Slack took the
    message, it doubles as the outbox: an undelivered event is retried.
    """
    return f"{tag(shard)}events"


def pending_tiers(shard: int) -> str:
    """Hash of how many of the shard's pending requests each risk tier has, kept by the
    scripts as requests enter and leave review (bot/store/pending_count.py)."""
    return f"{tag(shard)}pending_tiers"


def terms(shard: int) -> str:
    """Hash: a reference -> the review terms (chain, approvers, quorum, timeouts, default)
    requests of the shard created under them share; each request stores the reference.
    Content-addressed and never rewritten: a copy per distinct set (bot/store/codec.py)."""
    return f"{tag(shard)}terms"


def metrics(shard: int) -> str:
    """Hash of Prometheus counters for events of the shard (bot/store/figures/metrics.py
    sums them)."""
    return f"{tag(shard)}metrics"


# The request scripts' KEYS, by the names the Lua gives them (bot/store/scripts/common.py).
REQUEST_KEYS = ("req", "audit", "due", "pending", "all", "wake", "events", "tiers", "terms")


def request_keys(rid: str) -> list[str]:
    """The KEYS of the request scripts, in the order of `REQUEST_KEYS`."""
    s = shard_of(rid)
    return [
        request(rid),
        audit(rid),
        due(s),
        pending(s),
        every(s),
        wake(rid),
        events(s),
        pending_tiers(s),
        terms(s),
    ]


def question_keys(qid: str) -> list[str]:
    s = shard_of(qid)
    return [question(qid), due(s), wake(qid), events(s)]


def run(run_id: str) -> str:
    return f"{PREFIX}{{run:{run_id}}}"


def transcript(run_id: str) -> str:
    """The run's model messages, one JSON object per list element."""
    return f"{PREFIX}{{run:{run_id}}}:msgs"


def run_audit(run_id: str) -> str:
    """Run-level audit lines (steering, stops), JSON per element."""
    return f"{PREFIX}{{run:{run_id}}}:audit"


def steering(run_id: str) -> str:
    """List of queued corrections for a run; LPOP hands each out at most once."""
    return f"{PREFIX}{{run:{run_id}}}:steer"


def run_signal(run_id: str) -> str:
    """Pub/sub channel: a correction was queued or a stop asked for the run, so a worker
    that keeps the run's state locally reads the store again (bot/store/run/run_signals.py)."""
    return f"{PREFIX}{{run:{run_id}}}:signal"


def run_owner(run_id: str) -> str:
    """The identity a run id belongs to: whoever used it first (POST /v1/runs, or an
    outside agent's approvals and questions). Set, it also tells that the run may be
    steered."""
    return f"{PREFIX}{{run:{run_id}}}:owner"


def run_waiting(run_id: str) -> str:
    """Set of the run's requests filed while it waited on a person (CREATE adds a pending
    one): a correction or a stop withdraws those still pending, whichever agent waits."""
    return f"{PREFIX}{{run:{run_id}}}:waiting"


def run_questions(run_id: str) -> str:
    """Sorted set of the questions asked under a run (id, scored by `asked_at`): how
    `show RUN` finds them. In the run's slot, not the questions' (a question's keys are
    in its shard), so it is written in a step of its own before the question's record:
    an entry may name a record not yet written or already expired, and readers check
    each record."""
    return f"{PREFIX}{{run:{run_id}}}:questions"


# The run indexes (bot/store/run/run_index.py): sorted sets of run ids scored by `created_at`,
# all in one slot of their own so one MULTI keeps them together on a cluster; a run's
# record is in its own slot, so an index is written in a step of its own after it.
_RUN_INDEX = f"{PREFIX}{{idx:runs}}"
RUNS_ALL = f"{_RUN_INDEX}:all"  # every run the store holds
RUNS_LIVE = f"{_RUN_INDEX}:live"  # the runs not final yet


def runs_live_by(requester: str) -> str:
    """The live runs one person (or identity) started: what the App Home shows them first."""
    return f"{_RUN_INDEX}:live:by:{requester}"


RUNS_LIVE_BY = f"{_RUN_INDEX}:live:by:*"  # SCAN pattern over them, for maintenance only


def run_requests(run_id: str) -> str:
    """Sorted set of the requests filed under a run (id, scored by `created_at`): how
    `show RUN` finds them (bot/store/run/run_requests.py)."""
    return f"{PREFIX}{{run:{run_id}}}:requests"


def thread_cards(channel: str, thread_ts: str) -> str:
    """Set of request ids whose approval card sits in (or heads) this Slack thread."""
    return f"{PREFIX}thread:{channel}:{thread_ts}:cards"


def thread_question(channel: str, thread_ts: str) -> str:
    """The question whose card heads this Slack thread (one asked outside a run's thread)."""
    return f"{PREFIX}thread:{channel}:{thread_ts}:question"


def thread(channel: str, thread_ts: str) -> str:
    """Which run a Slack thread is the home of."""
    return f"{PREFIX}thread:{channel}:{thread_ts}"


RUN_QUEUE = f"{PREFIX}runs"  # stream of runs to start; workers share one consumer group
# SCAN pattern over every run's keys (run_id_of picks the hashes): for operator
# maintenance only (listings read the run indexes).
RUN_KEYS = f"{PREFIX}{{run:*"


def run_id_of(key: str) -> str | None:
    """The run id of a run's own hash key (`run()`); None for its lists and other keys."""
    head = f"{PREFIX}{{run:"
    if not key.startswith(head) or not key.endswith("}"):
        return None
    return key[len(head) : -1]


def seen_event(event_id: str) -> str:
    """Set once per Slack event id: a retried event is acted on once."""
    return f"{PREFIX}slack:seen:{event_id}"


def fatigue_told(signal: str, day: int) -> str:
    """Set when the operators were told of a fatigue signal on `day` (days since the
    epoch): once a day, however many serve processes check
    (bot/store/figures/fatigue_told.py)."""
    return f"{PREFIX}fatigue:told:{day}:{signal}"


def fatigue_checked() -> str:
    """When serve last checked the fatigue signals (epoch ms)."""
    return f"{PREFIX}fatigue:checked"


def suggestions() -> str:
    """The last mining of policy suggestions, as the operators' App Home shows it (JSON,
    bot/store/figures/suggested.py)."""
    return f"{PREFIX}suggest:summary"


def suggestions_mined(hour: int) -> str:
    """Set by the one serve that mines the suggestions in `hour` (hours since the epoch)."""
    return f"{PREFIX}suggest:mined:{hour}"


def notice_lease(entry_id: str, stream: str) -> str:
    """The lease one notifier holds while it delivers a stream entry (bot/db/lease.py)."""
    return f"{PREFIX}slack:lease:{entry_id}:{stream}"


def slack_group(group: str) -> str:
    """A Slack user group's members (JSON list), cached briefly."""
    return f"{PREFIX}slack:group:{group}"


def slack_name(principal: str) -> str:
    """The name Slack shows for a user, group or channel id, as serve last looked it up."""
    return f"{PREFIX}slack:name:{principal}"


def slack_channel_members(ref: str) -> str:
    """A channel's members (JSON list), cached briefly."""
    return f"{PREFIX}slack:channel:{ref}"


def slack_channel_pin(name: str) -> str:
    """The id a `#name` was pinned to (no expiry: a later channel of that name never
    takes its place)."""
    return f"{PREFIX}slack:channel-pin:{name.removeprefix('#')}"


def slack_channel_id(name: str) -> str:
    """A `#name` looked up and not found (""), cached briefly: never pinned."""
    return f"{PREFIX}slack:channel-id:{name.removeprefix('#')}"


DUE_REQUEST = "req"  # a due member's kind: a request's deadline
DUE_QUESTION = "q"  # a question's


def due_member(kind: str, item_id: str, version: int) -> str:
    return f"{kind}:{item_id}|{version}"


def parse_due_member(member: str) -> tuple[str, str, int]:
    kind, _, rest = member.partition(":")
    item_id, _, version = rest.rpartition("|")
    return kind, item_id, int(version)


# hashes: JSON [requester, tool] -> JSON schema of its arguments (bot/store/tools.py), as
# sent with calls, and as a worker registered its own tools. Global keys, no shard tag:
# read-mostly records that no script touches, fine on Cluster.
# The newest segment of the retention archive (bot/store/archive.py): JSON {name, sha}.
ARCHIVE_NEWEST = f"{PREFIX}archive:newest"
RETENTION_LEASE = f"{PREFIX}archive:lease"  # one retention pass at a time
POLICY_APPLIED = f"{PREFIX}policy:applied"  # stream: `hitl-bot policy apply`, audited
AGENTS_OFFERED = f"{PREFIX}agents:offered"  # agent name -> until when a worker offers it (ms)
TOOL_SCHEMAS = f"{PREFIX}schemas"
WORKER_SCHEMAS = f"{PREFIX}schemas:worker"


def digest(group: str) -> str:
    """Hash of one batch digest card (bot/store/posted/digests.py): where it is (`msg_channel`,
    `msg_ts`), its posting intent, and the group it lists (channel, requester, tool)."""
    return f"{PREFIX}{{dg:{group}}}"


def digest_members(group: str) -> str:
    """Hash of the requests a digest group has seen waiting: id -> its card's permalink."""
    return f"{PREFIX}{{dg:{group}}}:members"


def digest_index(group: str) -> str:
    """Sorted set of the requests waiting in a digest group, scored by `created_at`: a
    redraw reads the oldest it shows and the count, never every waiting call."""
    return f"{PREFIX}{{dg:{group}}}:index"


def digest_views(group: str) -> str:
    """Hash: a digest's view hash -> the calls it showed (JSON), for a click on it."""
    return f"{PREFIX}{{dg:{group}}}:views"


def digest_view_order(group: str) -> str:
    """List of a digest's view hashes, newest first: the oldest past a cap is dropped."""
    return f"{PREFIX}{{dg:{group}}}:views:order"


def digest_lease(group: str) -> str:
    """The lease one notifier holds while it redraws a digest (bot/db/lease.py)."""
    return f"{PREFIX}{{dg:{group}}}:lease"


# Standing approvals (bot/store/grants.py): every grant key shares one hash tag, so a
# use, a revocation and their audit are one script on one slot. There are few grants.
GRANTS_TAG = f"{PREFIX}{{grants}}:"


def grant_keys(gid: str) -> list[str]:
    """The grant scripts' KEYS: the grant's hash, the request ids it passed, its audit,
    the live index (grant id -> expires_at) and the index of the requests grants were
    made on (request id -> grant id)."""
    return [
        f"{GRANTS_TAG}grant:{gid}",
        f"{GRANTS_TAG}used:{gid}",
        f"{GRANTS_TAG}audit:{gid}",
        f"{GRANTS_TAG}live",
        f"{GRANTS_TAG}sources",
    ]


# Passkeys (bot/store/passkeys.py): few records, each read or written alone.
PASSKEY = f"{PREFIX}passkey:"


def passkey_user(user: str) -> str:
    """Hash: a Slack user's enrolled credentials, credential id -> record (JSON)."""
    return f"{PASSKEY}user:{user}"


PASSKEY_USERS = f"{PASSKEY}users"  # set: who has enrolled one at least once
PASSKEY_OWNERS = f"{PASSKEY}owners"  # hash: credential id -> Slack user id
PASSKEY_REVOKED = f"{PASSKEY}revoked"  # hash: credential id -> who removed it, and when


def passkey_link(kind: str, token: str) -> str:
    """A one-time link's record ("enroll" or "step"), and its `used` mark."""
    return f"{PASSKEY}{kind}:{token}"
