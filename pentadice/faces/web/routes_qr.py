"""``POST /api/qr``: the QR code of a link (a shared game's seat link, shown on the host's screen for a phone to
scan), as SVG, made by the segno library. The link travels in the body of a POST, never in a URL: a seat's link
carries its secret."""

from __future__ import annotations

import io
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import Response

from pentadice.faces.web import bodies, schemas
from pentadice.faces.web.apidoc import ERRORS, body_doc
from pentadice.faces.web.bodies import ApiError

SVG = "image/svg+xml"
TEXT_LIMIT = 512  # characters of the link
QR_BODY_LIMIT = 4 * bodies.KIB
QR_BODY = body_doc(schemas.QrIn, {"text": "http://192.168.1.5:8000/games/ID#seat=SECRET"})

router = APIRouter()


@router.post(
    "/api/qr",
    responses={200: {"content": {SVG: {"schema": {"type": "string"}}}, "description": "The QR code."}, **ERRORS},
    openapi_extra=QR_BODY,
    tags=["games"],
)
async def qr(request: Request) -> Response:
    """The QR code of `text`, an http(s) link of at most 512 characters, as an SVG image (black on white)."""
    body = await bodies.read(request, QR_BODY_LIMIT)
    data = bodies.json_object(body, ("text",), '{"text": "http://..."}', ["text"])
    return Response(qr_svg(link(data["text"])), media_type=SVG)


def link(text: object) -> str:
    """``text`` checked: an http or https URL with a host, at most :data:`TEXT_LIMIT` characters; 422 otherwise."""
    if not isinstance(text, str):
        raise ApiError(422, f"text must be a link (a string), not {bodies.short(text)}")
    if len(text) > TEXT_LIMIT:
        raise ApiError(422, f"text is {len(text):,} characters long: a link of at most {TEXT_LIMIT} is drawn")
    try:
        parts = urlsplit(text)
        host = parts.hostname
    except ValueError:
        host = None
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not host or any(c.isspace() for c in text):
        raise ApiError(422, f"text must be an http:// or https:// link, not {bodies.short(text)}")
    return text


def qr_svg(text: str) -> bytes:
    """The QR code of ``text`` as an SVG document (segno; a QR code, never a Micro QR code; error correction
    M; a quiet zone of 4 modules; black on white, as scanners expect even in dark mode)."""
    import segno

    out = io.BytesIO()
    segno.make_qr(text, error="m").save(out, kind="svg", scale=4, border=4, dark="#000", light="#fff", xmldecl=False)
    return out.getvalue()
