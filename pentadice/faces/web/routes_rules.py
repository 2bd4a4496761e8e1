"""``GET /api/rules``: the rule sets served, as the page draws their score sheets."""

from __future__ import annotations

import json
from collections.abc import Iterable

from fastapi import APIRouter
from fastapi.responses import Response

from pentadice.faces.web import schemas
from pentadice.faces.web.playing import AUTO_COMMIT_SECONDS
from pentadice.faces.web.responses import JSON
from pentadice.faces.web.state import State
from pentadice.game import rules
from pentadice.players import win
from pentadice.players.strategies import table_directory

router = APIRouter()


@router.get("/api/rules", responses={200: {"model": schemas.RulesOut}}, tags=["server"])
async def rule_sets(state: State) -> Response:
    """The rule sets served: their boxes (ids, display names, sections), dice and rolls."""
    return Response(state.rules_answer, media_type=JSON)


def rules_answer(advisors: Iterable) -> bytes:
    """The answer of ``GET /api/rules`` for the advisors served (made once, when the application is)."""
    return json.dumps({"rules": [_rules_of(a.rules, table_directory(a)) for a in advisors]}).encode()


def _rules_of(rs: rules.RuleSet, directory=None) -> dict:
    boxes = [
        {"id": b, "name": rs.box_name(b), "section": "upper" if (rs.upper_mask >> rs.box_index[b]) & 1 else "lower"}
        for b in rs.boxes
    ]
    return {
        "name": rs.name,
        "title": rs.title,
        "boxes": boxes,
        "dice": rs.dice,
        "rolls": rs.rolls,
        "upper_threshold": rs.upper_threshold,
        "upper_bonus": rs.upper_bonus,
        "penta_points": rs.penta_points,
        "penta_bonus": rs.penta_bonus,
        "penta_repeat": rs.penta_repeat,
        "joker": str(rs.joker),
        "joker_boxes": [{"box": box, "points": points} for box, points in rs.joker_boxes],
        "auto_commit_seconds": AUTO_COMMIT_SECONDS,
        "win_refusal": win.refusal(rs, directory),
    }
