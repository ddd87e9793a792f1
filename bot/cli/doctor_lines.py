"""One line of `hitl-bot doctor`: a status, what was found, and the fix."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Status(StrEnum):
    PASS = "PASS"  # as it should be
    WARN = "WARN"  # works, but something a person would want to know or change
    FAIL = "FAIL"  # something breaks: approvals lost, nobody asked, nobody able to approve


@dataclass(frozen=True)
class Line:
    check: str  # which check: "slack token", "scopes", "channel", ...
    status: Status
    text: str
    fix: str = ""  # empty when the text already says it, or nothing is to be done


def passed(check: str, text: str) -> Line:
    return Line(check, Status.PASS, text)


def warn(check: str, text: str, fix: str = "") -> Line:
    return Line(check, Status.WARN, text, fix)


def fail(check: str, text: str, fix: str = "") -> Line:
    return Line(check, Status.FAIL, text, fix)
