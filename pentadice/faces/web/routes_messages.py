"""``GET /api/messages``: the message catalogue the terminal speaks, for the page to speak it too."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from pentadice.faces.web import schemas
from pentadice.faces.web.apidoc import ERRORS
from pentadice.faces.web.bodies import ApiError
from pentadice.faces.web.responses import answer

router = APIRouter()


@router.get("/api/messages", responses={200: {"model": schemas.MessagesOut}, **ERRORS}, tags=["server"])
async def messages(request: Request, lang: str | None = None) -> Response:
    """The message catalogue the terminal speaks, for the page: msgid -> text in ``lang`` (``en`` or ``id``;
    absent: the language the browser's Accept-Language asks for, English if none spoken here)."""
    from pentadice.support import i18n

    if lang is not None and lang not in i18n.LANGUAGES:  # a language's code, as the page sends it
        raise ApiError(422, f"unknown language {lang[:20]!r}; languages: {', '.join(i18n.LANGUAGES)}")
    code = lang if lang is not None else i18n.from_accept_language(request.headers.get("accept-language"))
    return answer({"lang": code, "messages": i18n.catalogue(code)})
