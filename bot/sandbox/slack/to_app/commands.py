"""Slash commands: a form POST to the bot, answered within 3 s.

The immediate answer shows as Slack shows it: text or JSON `{text|blocks}` becomes an
ephemeral for the user (`response_type: in_channel` posts it in the channel); no 2xx in
time becomes Slackbot's `/cmd failed with the error "operation_timeout"`.
"""

from __future__ import annotations

from bot.sandbox.slack.acting import Outcome, person, place
from bot.sandbox.slack.errors import ControlError
from bot.sandbox.slack.to_app.delivery import Deliverer
from bot.sandbox.slack.to_app.payloads import Payloads
from bot.sandbox.slack.to_app.responses import Origin, Responses
from bot.sandbox.slack.triggers import Triggers
from bot.sandbox.slack.workspace import Workspace


class Commands:
    def __init__(
        self,
        ws: Workspace,
        triggers: Triggers,
        payloads: Payloads,
        deliverer: Deliverer,
        responses: Responses,
    ) -> None:
        self.ws = ws
        self.triggers = triggers
        self.payloads = payloads
        self.deliverer = deliverer
        self.responses = responses

    async def run(self, user_ref: str, channel_ref: str, command: str, text: str = "") -> Outcome:
        if not command.startswith("/") or " " in command:
            raise ControlError(f"not a slash command: {command!r}")
        user = person(self.ws, user_ref)
        channel = place(self.ws, user, channel_ref)
        trigger_id = self.triggers.issue(user.id)
        origin = Origin(channel.id, user.id)
        form = self.payloads.slash_command(
            user, channel, command, text, trigger_id, self.responses.issue(origin)
        )
        answer = await self.deliverer.send_form("command", form)
        if answer.ok:
            self.responses.immediate(origin, answer.json_body(), allow_in_channel=True)
        else:
            reason = "operation_timeout" if answer.error == "http_timeout" else "dispatch_failed"
            self.responses.ephemeral(
                origin, f'{command} failed with the error "{reason}"', from_slackbot=True
            )
        return Outcome(answer.status, answer.json_body(), answer.error, trigger_id=trigger_id)
