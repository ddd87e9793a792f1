"""What a store call raises when the store itself is in trouble, for the layers above.

They catch these names instead of the client's exceptions: which client the store
speaks through is the store's business.
"""

from __future__ import annotations

from redis.asyncio.sentinel import MasterNotFoundError
from redis.exceptions import (
    AskError,
    ClusterError,
    ReadOnlyError,
    RedisError,
    ResponseError,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as _ConnectionError
from redis.exceptions import TimeoutError as _TimeoutError

# Any error the store reports (a refused command, a lost connection, a cluster moving).
StoreError = RedisError

# Passing store trouble: a lost connection, or on a cluster a slot without a primary
# yet (failover), moving, or still redirecting once the client's retries ran out.
# Behind Sentinel: no primary known yet (MasterNotFoundError, a ConnectionError, named
# so that narrowing the tuple keeps it), or a write reaching the demoted primary
# (READONLY: redis-py's sentinel connections turn it into a ConnectionError and look
# the primary up again; listed for any reply read outside them).
STORE_DOWN: tuple[type[Exception], ...] = (
    _ConnectionError,
    _TimeoutError,
    MasterNotFoundError,
    ReadOnlyError,
    ClusterError,
    TryAgainError,
    AskError,
    SlotNotCoveredError,
)


def is_missing_group(exc: BaseException) -> bool:
    """A stream read refused because its consumer group is gone (a flushed or replaced
    Redis): the reader makes the group again and carries on."""
    return isinstance(exc, ResponseError) and "NOGROUP" in str(exc)
