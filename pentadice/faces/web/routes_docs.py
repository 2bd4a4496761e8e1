"""``GET /docs``: the API's reference as an HTML page, written from the server's own ``/openapi.json`` once per
process (:mod:`pentadice.faces.web.reference`): no script and nothing fetched from elsewhere, so it works offline."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from pentadice.faces.web.reference import html_page

router = APIRouter()


@router.get("/docs", include_in_schema=False)
async def docs(request: Request) -> HTMLResponse:
    """The HTTP reference of this server."""
    app = request.app  # its page kept on it: the description does not change while the app runs
    page = getattr(app.state, "reference_page", None)
    if page is None:
        page = app.state.reference_page = html_page(app.openapi())
    return HTMLResponse(page, headers={"cache-control": "no-cache"})
