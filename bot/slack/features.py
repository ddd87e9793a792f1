"""Every feature the Slack side carries beside the core card flow, in one list: the
notifier, the Bolt app and `/hitl` call each at the points bot/slack/seams.py names.
Removing a feature is removing its folder and its line here."""

from __future__ import annotations

from bot.slack.batch.feature import BATCH
from bot.slack.grants.feature import GRANTS
from bot.slack.seams import Feature

FEATURES: tuple[Feature, ...] = (
    GRANTS,  # standing approvals: bot/slack/grants/
    BATCH,  # the batch digest: bot/slack/batch/
)
