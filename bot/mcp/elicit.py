"""An upstream server's elicitation (`elicitation/create`, form mode), asked of a person in
Slack as a question in the review channel, and their answer, decline or silence sent back.

It is asked outside the session's run: that run's requester is the MCP client, not a
person, so nobody but an operator could answer in it; a question of no run is answered by
the people of this workspace its channel shows it to.

A form's fields are top-level primitives (MCP's restricted schema): one field is answered
by its value, several by `name: value` lines; a single choice or yes/no is offered as
buttons. An answer that does not fit the schema is asked again with what was wrong, so a
person's words are never dropped; a question nobody answers in time is a cancel. URL mode
(a link the user must open) is declined: a Slack message is no safe place to hand it on.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from mcp_types import ElicitRequestFormParams, ElicitRequestParams, ElicitResult

from bot.mcp import messages as msg
from bot.sdk import Gate, Unanswered

log = logging.getLogger(__name__)

ASK_TIMEOUT_S = 15 * 60  # how long a person has to answer a form before it is cancelled
ATTEMPTS = 3  # asks of one form, each after an answer that did not fit
YES, NO = ("yes", "true", "y", "1"), ("no", "false", "n", "0")
Value = str | int | float | bool


class NotFitting(ValueError):
    """An answer that does not fit the form; the message says what to fix."""


def _fields(schema: Mapping[str, Any]) -> tuple[dict[str, dict[str, Any]], set[str]]:
    props = schema.get("properties") or {}
    return {str(k): dict(v or {}) for k, v in props.items()}, set(schema.get("required") or ())


def _kind(spec: Mapping[str, Any]) -> str:
    if "enum" in spec:
        return " | ".join(map(str, spec["enum"]))
    return str(spec.get("type", "string"))


def _how(fields: Mapping[str, Any]) -> str:
    """How a person answers this form: one value, or a line per field."""
    return msg.ELICIT_ONE if len(fields) == 1 else msg.ELICIT_MANY


def question_of(upstream: str, p: ElicitRequestFormParams) -> tuple[str, list[str]]:
    """The question's text and its buttons (for a single choice or a single yes/no)."""
    fields, required = _fields(p.requested_schema)
    lines = [msg.ELICIT_HEAD.format(upstream=upstream, message=p.message)]
    for name, spec in fields.items():
        about = spec.get("description") or spec.get("title")
        lines.append(
            msg.ELICIT_FIELD.format(
                name=name,
                kind=_kind(spec),
                required=msg.ELICIT_REQUIRED if name in required else "",
                about=f": {about}" if about else "",
            )
        )
    lines.append(_how(fields))
    options: list[str] = []
    if len(fields) == 1:
        [spec] = fields.values()
        if "enum" in spec:
            options = [str(v) for v in spec["enum"]]
        elif spec.get("type") == "boolean":
            options = ["yes", "no"]
        if options:
            options.append(msg.ELICIT_DECLINE)
    return "\n".join(lines), options


def _value(name: str, spec: Mapping[str, Any], raw: str) -> Value:
    text = raw.strip()
    if "enum" in spec:
        choices = [str(v) for v in spec["enum"]]
        if text not in choices:
            bad = msg.ELICIT_BAD_CHOICE.format(name=name, choices=", ".join(choices), value=text)
            raise NotFitting(bad)
        return text
    kind = spec.get("type", "string")
    if kind == "boolean":
        if text.lower() in YES:
            return True
        if text.lower() in NO:
            return False
        raise NotFitting(msg.ELICIT_BAD_BOOLEAN.format(name=name, value=text))
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            raise NotFitting(msg.ELICIT_BAD_INTEGER.format(name=name, value=text)) from None
    if kind == "number":
        try:
            return float(text)
        except ValueError:
            raise NotFitting(msg.ELICIT_BAD_NUMBER.format(name=name, value=text)) from None
    return raw.strip()


def content_of(schema: Mapping[str, Any], answer: str) -> dict[str, Value]:
    """The form's content from a person's answer, or NotFitting saying what to fix."""
    fields, required = _fields(schema)
    given: dict[str, str] = {}
    if len(fields) == 1:
        [name] = fields
        given[name] = answer
    else:
        for line in answer.splitlines():
            if not line.strip():
                continue
            name, sep, value = line.partition(":")
            name = name.strip().lstrip("•-* ").strip()
            if not sep or name not in fields:
                raise NotFitting(msg.ELICIT_UNKNOWN.format(name=name or line.strip()))
            given[name] = value
    for name in sorted(required - {n for n, v in given.items() if v.strip()}):
        raise NotFitting(msg.ELICIT_MISSING.format(name=name))
    return {n: _value(n, fields[n], v) for n, v in given.items() if v.strip()}


class Elicitor:
    """The proxy's answer to one upstream's elicitations (the MCP client's callback)."""

    def __init__(self, gate: Gate, upstream: str, *, timeout_s: float = ASK_TIMEOUT_S) -> None:
        self.gate = gate
        self.upstream = upstream
        self.timeout_s = timeout_s

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        if not isinstance(params, ElicitRequestFormParams):
            log.info("elicitation_declined", extra={"upstream": self.upstream, "mode": "url"})
            return ElicitResult(action="decline")
        text, options = question_of(self.upstream, params)
        how = _how(_fields(params.requested_schema)[0])
        asked = text
        for _ in range(ATTEMPTS):
            try:
                answer = await self.gate.ask(asked, timeout=self.timeout_s, options=options)
            except Unanswered:
                return ElicitResult(action="cancel")
            if answer.strip().lower() == msg.ELICIT_DECLINE:
                return ElicitResult(action="decline")
            try:
                content = content_of(params.requested_schema, answer)
            except NotFitting as exc:
                asked = text + "\n" + msg.ELICIT_AGAIN.format(problem=exc, how=how)
                continue
            return ElicitResult(action="accept", content=dict(content))
        return ElicitResult(action="cancel")
