"""What ``/openapi.json`` says of the routes beyond their signatures: the refusals each may answer, and the
request bodies (read strictly by :mod:`pentadice.faces.web.bodies`, not parsed by FastAPI: documented here
with their models in :mod:`pentadice.faces.web.schemas`)."""

from __future__ import annotations

from pentadice.faces.web import schemas
from pentadice.faces.web.responses import JSON

ERRORS = {
    400: {"model": schemas.ErrorOut, "description": "The body is not JSON."},
    403: {"model": schemas.ErrorOut, "description": "Sent by another site's page (Origin, Sec-Fetch-Site)."},
    408: {"model": schemas.ErrorOut, "description": "The body did not arrive in time."},
    413: {"model": schemas.ErrorOut, "description": "The body is too large."},
    422: {"model": schemas.ErrorOut, "description": "A wrong field or value."},
    503: {"model": schemas.ErrorOut, "description": "The games database cannot be reached; nothing was written."},
}
GAME_ERRORS = {
    **ERRORS,
    404: {"model": schemas.ErrorOut, "description": "No such game (unknown, or removed: see GET /api/health's kept)."},
    409: {"model": schemas.ErrorOut, "description": "The game's state refuses the move."},
    507: {"model": schemas.ErrorOut, "description": "The disk of the games database is full; nothing was written."},
    500: {
        "model": schemas.DamagedOut,
        "description": "The game's record in the games database is damaged (cannot be decoded): it can be neither "
        "shown nor played; the other games are served. Logged once.",
    },
}


def _save_file_schema() -> dict:
    """A save file, as :meth:`pentadice.players.engine.Game.from_json` reads it: an object with its fields, no
    other (what each holds is checked by the reader: 422 for a save that is not a game's)."""
    from pentadice.players.saves import SAVE_KEYS, SAVE_OPTIONAL_KEYS

    return {
        "type": "object",
        "required": sorted(SAVE_KEYS),
        "properties": {key: {} for key in sorted(SAVE_KEYS | SAVE_OPTIONAL_KEYS)},
        "additionalProperties": False,
        "description": "A save file (GET /api/games/{id}/save, `pentadice play --save`), posted as it is.",
    }


SAVE_FILE_BODY = {"requestBody": {"required": True, "content": {JSON: {"schema": _save_file_schema()}}}}
# A move without fields: no body, {} or {"version": N}.
VERSION_BODY = {
    "requestBody": {
        "required": False,
        "content": {JSON: {"schema": {"$ref": "#/components/schemas/VersionIn"}, "example": {"version": 3}}},
    }
}


def body_doc(model: type, example: object) -> dict:
    """The ``openapi_extra`` of a route whose body is ``model``, with ``example``."""
    schema = {"$ref": f"#/components/schemas/{model.__name__}"}
    return {"requestBody": {"required": True, "content": {JSON: {"schema": schema, "example": example}}}}
