"""The page at `/`: one self-contained HTML document (inline CSS and JS, no external assets).

It is assembled from two files beside this module: `page.html` (layout, styles, the app
that polls `/_emu/state` and calls the control API) and `page_blocks.html` (a script that
renders Block Kit and mrkdwn into DOM nodes, text always through textContent). Permalinks
(`/archives/<channel>/p<ts>`) serve the same page, which opens that message.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

_SLOT = "<!-- page_blocks.html -->"


@cache
def page_html() -> str:
    here = files(__package__ or "bot.sandbox.slack")
    shell = here.joinpath("page.html").read_text(encoding="utf-8")
    blocks = here.joinpath("page_blocks.html").read_text(encoding="utf-8")
    return shell.replace(_SLOT, blocks)


async def _page(request: Request) -> HTMLResponse:
    return HTMLResponse(page_html(), headers={"Cache-Control": "no-store"})


async def _no_icon(request: Request) -> Response:
    return Response(status_code=204)


def page_routes() -> list[Route]:
    return [
        Route("/", _page, methods=["GET"]),
        Route("/favicon.ico", _no_icon, methods=["GET"]),
        Route("/archives/{rest:path}", _page, methods=["GET"]),
    ]
