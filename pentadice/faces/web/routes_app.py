"""The offline app's tables (:mod:`pentadice.faces.web.app_tables`) at stable addresses: ``GET /app-tables/index.json``
(the rule sets whose tables are served, with their sizes and SHA-256), ``/app-tables/NAME.json`` (a rule set's
description) and ``/app-tables/NAME.f64`` (its value table, raw little-endian float64). Each answer has an ``ETag``
(its SHA-256; ``If-None-Match`` answers 304) and may be cached a week: the page's service worker keeps them.

They are made from the tables the server holds, once, when first asked (about 0.1 s for Penta), and kept with the
application; not among the page's files (:class:`~pentadice.faces.web.page.HeldFiles` holds only small ones).
"""

from __future__ import annotations

import hashlib
import json
import re

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from pentadice.faces.web import app_tables
from pentadice.faces.web.responses import answer
from pentadice.faces.web.state import State

router = APIRouter()
CACHE = "public, max-age=604800"  # a week; revalidated by its ETag (the service worker asks again when online)
NAME = re.compile(r"[a-z0-9+-]{1,40}")


def _exported(request: Request, state, name: str) -> app_tables.Exported | None:
    """The tables of a served rule set, made once per application (None: not served here, or too large)."""
    held = getattr(request.app.state, "app_tables", None)
    if held is None:
        held = request.app.state.app_tables = {}
    if name not in held:
        advisor = state.advisors.get(name)
        if advisor is None:
            return None
        try:
            held[name] = app_tables.export(advisor.rules, advisor.values)
        except app_tables.TooLarge:
            held[name] = None
    return held[name]


def _send(request: Request, body: bytes, sha: str, kind: str) -> Response:
    tag = f'"{sha}"'
    headers = {"etag": tag, "cache-control": CACHE}
    asked = request.headers.get("if-none-match", "")
    if any(t.strip() in (tag, "*") for t in asked.split(",")):
        return Response(status_code=304, headers=headers)
    if request.method == "HEAD":
        return Response(status_code=200, headers={**headers, "content-length": str(len(body))}, media_type=kind)
    return Response(body, 200, headers, media_type=kind)


@router.api_route("/app-tables/index.json", methods=["GET", "HEAD"], include_in_schema=False)
async def app_tables_index(request: Request, state: State) -> Response:
    """The rule sets the offline app can take from this server: name, title, sizes and SHA-256 of each file."""

    def make() -> bytes:
        out = []
        for name, advisor in state.advisors.items():
            held = _exported(request, state, name)
            if held is None:
                continue
            out.append({"name": name, "title": advisor.rules.title, "json": f"{name}.json",
                        "json_bytes": len(held.json_bytes), "json_sha256": held.json_sha256,
                        "values": f"{name}.f64", "values_bytes": len(held.values),
                        "values_sha256": held.values_sha256})  # fmt: skip
        return json.dumps({"format": app_tables.FORMAT, "rules": out}).encode()

    body = await run_in_threadpool(make)
    return _send(request, body, hashlib.sha256(body).hexdigest(), "application/json")


@router.api_route("/app-tables/{file}", methods=["GET", "HEAD"], include_in_schema=False)
async def app_table_file(file: str, request: Request, state: State) -> Response:
    """A served rule set's description (``NAME.json``) or value table (``NAME.f64``); 404 otherwise."""
    name, dot, ext = file.rpartition(".")
    if not dot or ext not in ("json", "f64") or not NAME.fullmatch(name):
        return answer({"error": f"no such path: /app-tables/{file[:80]}"}, 404)
    held = await run_in_threadpool(_exported, request, state, name)
    if held is None:
        why = "not served here" if name not in state.advisors else "too large for the offline app"
        return answer({"error": f"no offline tables for {name!r}: {why}; served: {', '.join(state.advisors)}"}, 404)
    if ext == "json":
        return _send(request, held.json_bytes, held.json_sha256, "application/json")
    return _send(request, held.values, held.values_sha256, "application/octet-stream")
