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
    """The message catalogue the terminal speaks, for the page: msgid -> text in ``lang`` (``en``, ``id``;
    default: the browser's Accept-Language)."""
    from pentadice.support import i18n

    try:
        asked = request.headers.get("accept-language")
        code = i18n.check(lang) if lang is not None else i18n.from_accept_language(asked)
    except i18n.UnknownLanguage as e:
        raise ApiError(422, str(e)) from None
    return answer({"lang": code, "messages": i18n.catalogue(code)})
