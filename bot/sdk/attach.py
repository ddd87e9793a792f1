"""Direct mode joins the bot's store; it never makes one of its own.

A Valkey started by an agent script in some other data dir is a store no bot
reads: its cards are never posted and every call waits out its deadline. So the
SDK checks first that the store is the bot's (REDIS_URL, or a running embedded
server in HITL_DATA_DIR) and fails at once otherwise, and warns when no notifier
has read the store's events lately, since then nobody will see the card.
"""

from __future__ import annotations

import logging

from bot.config import Settings
from bot.db.valkey.embedded_dir import SOCKET_NAME, Liveness, ping_socket
from bot.errors import StoreUnavailable
from bot.gate.runtime import Runtime
from bot.sdk import messages as msg

log = logging.getLogger(__name__)

# A notifier blocks on its read for about a second at a time; a minute without a read
# means none is running.
LIVE_BOT_IDLE_S = 60


def require_store(settings: Settings) -> None:
    """Raise StoreUnavailable (with the fix) unless the bot's store is there to join."""
    if settings.redis_url is not None:
        return  # connect() reports an unreachable URL itself
    data_dir = settings.hitl_data_dir.expanduser().resolve()
    if ping_socket(data_dir / SOCKET_NAME) is Liveness.DOWN:
        raise StoreUnavailable(msg.NO_STORE.format(data_dir=data_dir))


async def warn_if_no_bot(rt: Runtime, where: str) -> bool:
    """Log one warning when no Slack notifier has read this store's events lately."""
    if await rt.notifier_read_within(LIVE_BOT_IDLE_S * 1000):
        return True
    log.warning(msg.NO_LIVE_BOT, where, LIVE_BOT_IDLE_S)
    return False
