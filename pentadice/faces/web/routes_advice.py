"""Advice: ``POST /api/advise`` (one situation, exactly ``pentadice advise --json``) and
``POST /api/advise/batch`` (many, as ``advise --batch`` answers them). Answers come from the advice cache
where they can (:mod:`pentadice.faces.web.advising`), else from the compiled path (one kernel call, well under a
millisecond: answered at once, in the event loop), else (a body that does not read plainly, or an error to word)
from the object path in a worker thread. A batch runs in a worker thread."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from pentadice.advisor.quick import MAX_TOP
from pentadice.faces.web import bodies, schemas
from pentadice.faces.web.advising import MAX_BATCH, batch_text, situation_of
from pentadice.faces.web.apidoc import ERRORS, body_doc
from pentadice.faces.web.bodies import ApiError
from pentadice.faces.web.responses import JSON, escaped
from pentadice.faces.web.state import State

ADVISE_EXAMPLE = '{"dice": [..], "rolls_left": N, "sheet": {..}}'

router = APIRouter()


@router.post(
    "/api/advise",
    responses={200: {"model": schemas.AdviceOut}, **ERRORS},
    openapi_extra=body_doc(schemas.AdviseIn, {"dice": [1, 1, 3, 4, 6], "rolls_left": 2, "sheet": {"ones": 3}}),
    tags=["advice"],
)
async def advise(request: Request, state: State) -> Response:
    """Every option of one situation with its expected final score: exactly `pentadice advise --json`."""
    cache = state.cache
    body = await bodies.read(request, bodies.ADVISE_LIMIT)
    known = cache.by_body(body)
    if known is None:
        known = cache.quick(state, body)
        if known is not None:
            cache.remember_body(body, known)
    if known is not None:
        return Response(known, media_type=JSON)
    data = bodies.loads(body)
    if not isinstance(data, dict):
        raise ApiError(422, f"the body must be a JSON object {ADVISE_EXAMPLE}")
    advisor = state.advisor_of(data.pop("rules", None))
    top = _top_of(data.pop("top", None))
    situation = situation_of(advisor, data)
    key = cache.key(advisor, situation, top)
    found = cache.lookup(key)
    if found is None:
        found = await run_in_threadpool(cache.compute, key, advisor, situation, top)
    cache.remember_body(body, found)
    return Response(found, media_type=JSON)


@router.post(
    "/api/advise/batch",
    responses={200: {"model": schemas.BatchOut}, **ERRORS},
    openapi_extra=body_doc(schemas.BatchIn, {"items": [{"dice": [1, 1, 3, 4, 6]}, {"dice": [6, 6, 6, 6, 6]}]}),
    tags=["advice"],
)
async def advise_batch(request: Request, state: State) -> Response:
    """Many situations at once, as `advise --batch` answers them (no `why`); a bad item gets its error."""
    body = await bodies.read(request, bodies.LARGE_LIMIT)
    data = bodies.json_object(body, ("rules", "top", "items"), '{"items": [..]}', required=("items",))
    advisor = state.advisor_of(data.get("rules"))
    top = _top_of(data.get("top"))
    items = data["items"]
    if not isinstance(items, list):
        raise ApiError(422, f"items must be a list of situations {ADVISE_EXAMPLE}")
    if len(items) > MAX_BATCH:
        raise ApiError(422, f"at most {MAX_BATCH:,} items in one batch, not {len(items):,}")
    text = await run_in_threadpool(batch_text, advisor, items, top)
    return Response(escaped(text.encode()), media_type=JSON)


def _top_of(value: object) -> int | None:
    return None if value is None else bodies.whole(value, "top", 1, MAX_TOP)
