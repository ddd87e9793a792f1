"""The names `bot` promises are there, and every error sits under the one root."""

from __future__ import annotations

import inspect

import bot
from bot import errors


def test_all_names_resolve_and_are_sorted() -> None:
    assert bot.__all__ == sorted(bot.__all__)
    missing = [name for name in bot.__all__ if not hasattr(bot, name)]
    assert missing == []


def test_every_error_is_exported_and_under_hitl_error() -> None:
    classes = [
        c for _, c in inspect.getmembers(errors, inspect.isclass) if c.__module__ == errors.__name__
    ]
    for cls in classes:
        assert issubclass(cls, bot.HitlError), cls
        assert cls.__name__ in bot.__all__, cls
        assert cls.__name__ in (errors.__doc__ or ""), f"{cls.__name__} missing from the tree"
