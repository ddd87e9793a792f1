"""Interactivity: a person clicks or picks in a message, a modal or the home tab, submits
or closes a modal. Each becomes a signed form POST `payload=<json>` to the bot, sent once.

Client behaviour copied from Slack: a select remembers its choice and later clicks carry
it in `state.values`; elements in input blocks only dispatch with `dispatch_action`;
required or too-short modal fields are refused before anything is sent; the bot's answer
to a `view_submission` decides what happens to the modal (errors / update / push / clear /
close).
"""

from __future__ import annotations

from typing import Any

from bot.sandbox.slack.acting import Outcome, person, place
from bot.sandbox.slack.api.api_views import MAX_STACK, check_view, replace_definition
from bot.sandbox.slack.blockkit import (
    NOT_STATEFUL,
    Located,
    action_entry,
    find_element,
    is_empty,
    state_entry,
)
from bot.sandbox.slack.errors import ControlError, WebApiError
from bot.sandbox.slack.ids import Ids
from bot.sandbox.slack.to_app.delivery import Answer, Deliverer
from bot.sandbox.slack.to_app.payloads import Payloads
from bot.sandbox.slack.to_app.responses import Origin, Responses
from bot.sandbox.slack.triggers import Triggers
from bot.sandbox.slack.workspace import JSON, User, View, Workspace

REQUIRED = "Please complete this required field."
TROUBLE = "We had some trouble connecting. Try again?"


def _typed(located: Located, selected: Any) -> JSON | None:
    if located.element.get("type") == "button":
        return None
    try:
        return state_entry(located.element, selected)
    except ValueError as e:
        raise ControlError(str(e)) from e


def _supplied(values: dict[str, Any], block_id: str, action_id: str) -> Any:
    """A submitted value given as {block: {action: v}}, {block: v} or {action: v}."""
    if block_id in values:
        given = values[block_id]
        if isinstance(given, dict) and action_id in given:
            return given[action_id]
        return given
    return values.get(action_id)


def _length_error(element: JSON, entry: JSON) -> str | None:
    value = entry.get("value")
    if not isinstance(value, str):
        return None
    low, high = element.get("min_length"), element.get("max_length")
    if isinstance(low, int) and len(value) < low:
        return f"Must be at least {low} characters."
    if isinstance(high, int) and len(value) > high:
        return f"Must be at most {high} characters."
    return None


class Interactions:
    def __init__(
        self,
        ws: Workspace,
        ids: Ids,
        triggers: Triggers,
        payloads: Payloads,
        deliverer: Deliverer,
        responses: Responses,
    ) -> None:
        self.ws = ws
        self.ids = ids
        self.triggers = triggers
        self.payloads = payloads
        self.deliverer = deliverer
        self.responses = responses

    @staticmethod
    def _outcome(answer: Answer, trigger_id: str, **more: Any) -> Outcome:
        return Outcome(
            answer.status, answer.json_body(), answer.error, trigger_id=trigger_id, **more
        )

    # --- clicks ------------------------------------------------------------------------

    async def click(
        self,
        user_ref: str,
        action_id: str,
        *,
        channel: str | None = None,
        ts: str | None = None,
        view_id: str | None = None,
        value: str | None = None,
        selected: Any = None,
    ) -> Outcome:
        """Click a button (or pick `selected` in a select) in a message or a view."""
        user = person(self.ws, user_ref)
        if view_id:
            return await self._click_view(user, view_id, action_id, value, selected)
        if not channel or not ts:
            raise ControlError("give channel and ts, or view_id")
        where = place(self.ws, user, channel)
        message = where.messages.get(ts)
        ephemeral = self.ws.find_ephemeral(where.id, ts)
        if ephemeral is not None and ephemeral.user != user.id:
            ephemeral = None
        blocks = message.blocks if message else ephemeral.blocks if ephemeral else None
        if message is None and ephemeral is None:
            raise ControlError(f"no message {ts} in {channel} visible to {user.name}", 404)
        located = find_element(blocks or [], action_id, value)
        if located is None:
            raise ControlError(f"no element {action_id!r} in message {ts}", 404)
        entry = _typed(located, selected)
        state = self.ws.message_state.setdefault((where.id, ts, user.id), {})
        if entry is not None and located.element.get("type") not in NOT_STATEFUL:
            state.setdefault(located.block_id, {})[located.action_id] = entry
        trigger_id = self.triggers.issue(user.id)
        source = message or ephemeral
        origin = Origin(
            where.id, user.id, ts, ephemeral is not None, source.thread_ts if source else None
        )
        payload = self.payloads.block_actions(
            user,
            actions=[action_entry(located, entry, self.ids.action_ts())],
            trigger_id=trigger_id,
            state=state,
            container={
                "type": "message",
                "message_ts": ts,
                "channel_id": where.id,
                "is_ephemeral": ephemeral is not None,
                # as Slack sends it for a message inside a thread
                **({"thread_ts": origin.thread_ts} if origin.thread_ts else {}),
            },
            channel=where,
            message=message,
            response_url=self.responses.issue(origin),
        )
        answer = await self.deliverer.send_interaction(payload)
        if answer.ok:
            self.responses.immediate(origin, answer.json_body(), allow_in_channel=False)
        return self._outcome(answer, trigger_id)

    def _own_view(self, user: User, view_id: str) -> View:
        view = self.ws.views.get(view_id)
        if view is None or view.user != user.id:
            raise ControlError(f"no open view {view_id} for {user.name}", 404)
        return view

    async def _click_view(
        self, user: User, view_id: str, action_id: str, value: str | None, selected: Any
    ) -> Outcome:
        view = self._own_view(user, view_id)
        located = find_element(view.blocks(), action_id, value)
        if located is None:
            raise ControlError(f"no element {action_id!r} in view {view_id}", 404)
        entry = _typed(located, selected)
        if entry is not None and located.element.get("type") not in NOT_STATEFUL:
            view.values.setdefault(located.block_id, {})[located.action_id] = entry
            self.ws.changed()
        if located.in_input and not located.block.get("dispatch_action"):
            return Outcome(None, dispatched=False, view_id=view.id)
        trigger_id = self.triggers.issue(user.id)
        payload = self.payloads.block_actions(
            user,
            actions=[action_entry(located, entry, self.ids.action_ts())],
            trigger_id=trigger_id,
            state=view.values,
            container={"type": "view", "view_id": view.id},
            view=view,
        )
        answer = await self.deliverer.send_interaction(payload)
        return self._outcome(answer, trigger_id, view_id=view.id)

    # --- modals ------------------------------------------------------------------------

    def _top_view(self, user: User, view_id: str) -> View:
        view = self._own_view(user, view_id)
        stack = self.ws.modal_stacks.get(user.id) or []
        if not stack or stack[-1] != view.id:
            raise ControlError(f"view {view_id} is not the open modal of {user.name}", 409)
        return view

    def _fill(self, view: View, values: dict[str, Any]) -> dict[str, str]:
        """Put submitted values into the view's state; the client-side errors, if any."""
        errors: dict[str, str] = {}
        for block in view.blocks():
            element = block.get("element")
            if block.get("type") != "input" or not isinstance(element, dict):
                continue
            block_id, action_id = str(block.get("block_id")), str(element.get("action_id"))
            given = _supplied(values, block_id, action_id)
            current = view.values.get(block_id, {}).get(action_id)
            entry = _typed(Located(block, element), given) if given is not None else current
            entry = entry or _typed(Located(block, element), None) or {"type": "unknown"}
            view.values.setdefault(block_id, {})[action_id] = entry
            if is_empty(entry) and not block.get("optional"):
                errors[block_id] = REQUIRED
            elif (problem := _length_error(element, entry)) is not None:
                errors[block_id] = problem
        return errors

    async def submit(self, user_ref: str, view_id: str, values: dict[str, Any]) -> Outcome:
        """Fill the open modal's inputs with `values` and press its submit button."""
        user = person(self.ws, user_ref)
        view = self._top_view(user, view_id)
        errors = self._fill(view, values)
        view.errors, view.notice = errors, None
        self.ws.changed()
        if errors:
            return Outcome(
                None,
                error="client_validation",
                errors=errors,
                view_action="kept_open",
                dispatched=False,
                view_id=view.id,
            )
        trigger_id = self.triggers.issue(user.id)
        answer = await self.deliverer.send_interaction(
            self.payloads.view_submission(user, view, trigger_id)
        )
        if not answer.ok:
            view.notice = TROUBLE
            return self._outcome(answer, trigger_id, view_action="kept_open", view_id=view.id)
        body = answer.json_body()
        action, errors = self._respond(user, view, body if isinstance(body, dict) else {})
        top = self.ws.top_view(user.id)
        return self._outcome(
            answer, trigger_id, errors=errors, view_action=action, view_id=top.id if top else None
        )

    def _respond(self, user: User, view: View, body: JSON) -> tuple[str, dict[str, str]]:
        """Apply a view_submission answer's `response_action`."""
        action = body.get("response_action")
        try:
            if action == "errors":
                errors = body.get("errors") or {}
                view.errors = {str(k): str(v) for k, v in errors.items()}
                self.ws.changed()
                return "errors", view.errors
            if action == "update":
                replace_definition(self.ids, view, check_view(self.ids, body.get("view"), "modal"))
                self.ws.changed()
                return "updated", {}
            if action == "push":
                self._push(user, view, check_view(self.ids, body.get("view"), "modal"))
                return "pushed", {}
        except WebApiError as e:
            view.notice = f"The app answered with an invalid view ({e.error})."
            self.ws.changed()
            return "kept_open", {}
        if action == "clear":
            self._close(user, everything=True)
            return "cleared", {}
        self._close(user, everything=False)
        return "closed", {}

    def _push(self, user: User, top: View, definition: JSON) -> None:
        stack = self.ws.modal_stacks.setdefault(user.id, [])
        if len(stack) >= MAX_STACK:
            raise WebApiError("push_limit_reached")
        external_id = definition.get("external_id")
        if external_id and self.ws.find_view(external_id=str(external_id)) is not None:
            raise WebApiError("duplicate_external_id")
        view_id = self.ids.object_id("V")
        view = View(view_id, user.id, definition, self.ids.view_hash(), top.root_view_id, top.id)
        self.ws.views[view_id] = view
        stack.append(view_id)
        self.ws.changed()

    def _close(self, user: User, everything: bool) -> None:
        stack = self.ws.modal_stacks.get(user.id) or []
        closing = list(stack) if everything else stack[-1:]
        for view_id in closing:
            stack.remove(view_id)
            self.ws.views.pop(view_id, None)
        if not stack:
            self.ws.modal_stacks.pop(user.id, None)
        self.ws.changed()

    async def close(self, user_ref: str, view_id: str) -> Outcome:
        """Press the modal's close button: `view_closed` when it asked with notify_on_close."""
        user = person(self.ws, user_ref)
        view = self._top_view(user, view_id)
        everything = bool(view.definition.get("clear_on_close"))
        outcome = Outcome(None, dispatched=False, view_action="closed")
        if view.definition.get("notify_on_close"):
            stack = self.ws.modal_stacks.get(user.id) or []
            payload = self.payloads.view_closed(user, view, everything and len(stack) > 1)
            answer = await self.deliverer.send_interaction(payload)
            outcome = Outcome(answer.status, answer.json_body(), answer.error, view_action="closed")
        self._close(user, everything)
        top = self.ws.top_view(user.id)
        outcome.view_id = top.id if top else None
        if everything:
            outcome.view_action = "cleared"
        return outcome
