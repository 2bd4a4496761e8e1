"""The tables the offline app reads (``static/advisor.js``, ``static/offline.js``): a rule set described as JSON and
its value table as raw little-endian float64, each with its SHA-256.

Nothing here scores a roll or solves a state: the JSON carries what the rules module says (:func:`describe`):
the sheet, the parameter vector the compiled code reads (:meth:`RuleSet.params`), the dice tables of
:mod:`pentadice.game.dice` (hands, keeps, the keep one die larger by face: the rolls' exact odds, each face
1/6), the score table of :func:`pentadice.game.rules.score_table` (the points of every hand in every box), the
points a joker gives (asked of :func:`pentadice.game.rules.score_options`), and the layout of the value table.
The browser ports only the rules' logic of legal boxes, joker placement and the next state, which the tests
check against :func:`pentadice.game.rules.score_options`.

The whole value table is exported, unreachable states included (NaN there): Penta's is 8 MiB (2 x 8192 masks x
64 subtotals); only the reachable ones would be about half, at the price of an index the browser must read.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from types import SimpleNamespace

import numpy as np

from pentadice.game import dice, rules

FORMAT = "pentadice-app-tables"
FORMAT_VERSION = 1
# The value tables the offline app takes, at most (bytes): Penta, Kiriki and the Yahtzee conventions are 8 MiB,
# Yatzy 13 MiB; Maxi Yatzy's 640 MiB is no download for a phone.
MAX_VALUES_BYTES = 64 * 1024 * 1024
PARAM_NAMES = (
    "P_DICE",
    "P_ROLLS",
    "P_BOXES",
    "P_UPPER_THRESHOLD",
    "P_UPPER_BONUS",
    "P_PENTA_POINTS",
    "P_PENTA_BONUS",
    "P_JOKER",
    "P_JOKER_NEEDS_FULL",
    "P_PENTA_REPEAT",
    "P_N_BOXES",
    "P_PENTA_BOX",
    "P_UPPER_MASK",
    "P_LOWER_MASK",
    "P_N_ROWS",
    "P_FACE_BOX",
    "P_BOX_DATA",
)
FIELD_NAMES = ("BOX_FIELDS", "F_KIND", "F_A", "F_B", "F_POINTS", "F_ROW", "F_ALIKE")
KIND_NAMES = (
    "K_FACE",
    "K_KIND_TOTAL",
    "K_KIND_SUM",
    "K_PAIRS",
    "K_HOUSE",
    "K_FULL_HOUSE",
    "K_RUN",
    "K_STRAIGHT",
    "K_CHANCE",
    "K_ALL_ALIKE",
    "K_PENTA",
)


class TooLarge(ValueError):
    """A rule set whose value table is too large for the offline app."""


def values_bytes(rs: rules.RuleSet) -> int:
    """The size of ``rs``'s value table as the offline app downloads and stores it."""
    return 8 * int(np.prod(rs.table_shape))


def check_size(rs: rules.RuleSet) -> None:
    """:class:`TooLarge` where ``rs``'s value table is more than the offline app takes."""
    size = values_bytes(rs)
    if size > MAX_VALUES_BYTES:
        raise TooLarge(
            f"the {rs.name} table is {size / 2**20:,.0f} MiB: too large for the offline app "
            f"(at most {MAX_VALUES_BYTES // 2**20} MiB)"
        )


def raw_values(rs: rules.RuleSet, values: np.ndarray) -> bytes:
    """The value table as the offline app reads it: little-endian float64, C order, shaped ``rs.table_shape``."""
    arr = np.asarray(values)
    if arr.shape != rs.table_shape:
        raise ValueError(f"the {rs.name} values are shaped {arr.shape}, not {rs.table_shape}")
    return np.ascontiguousarray(arr, dtype="<f8").tobytes()


def joker_points(rs: rules.RuleSet) -> list[list[int] | None] | None:
    """Per hand, the points of every box when the joker applies (None for a hand that is no joker; None in all
    for a rule set without one), as :func:`rules.score_options` gives them: asked with the free joker, the
    Penta box filled with its points and the face's own box filled, so that every other box may take the dice;
    the face's box and the Penta box score as without a joker."""
    if rs.penta_box < 0 or rs.joker is rules.Joker.NONE:
        return None
    t = dice.tables(rs.dice)
    base = rules.score_table(rs)
    free = dataclasses.replace(rs, joker="free", joker_needs_full=False).params()
    out: list[list[int] | None] = []
    points = np.empty(rs.n_boxes, dtype=np.int64)
    for h in range(t.n_hands):
        counts = t.counts[h]
        if counts.max() != rs.dice:
            out.append(None)
            continue
        face = int(np.argmax(counts)) + 1
        mask = rs.box_mask & ~(1 << rs.penta_box)
        own = rs.face_box(face)
        if own is not None:
            mask &= ~(1 << rs.box_index[own])
        rules.score_options(free, counts, mask, 1, points)
        out.append([int(points[b]) if points[b] >= 0 else int(base[h, b]) for b in range(rs.n_boxes)])
    return out


def rules_answer(rs: rules.RuleSet) -> dict:
    """The rule set as ``GET /api/rules`` lists it (the offline app answers that request with it)."""
    from pentadice.faces.web import routes_rules

    return json.loads(routes_rules.rules_answer([SimpleNamespace(rules=rs)]))["rules"][0]


def describe(rs: rules.RuleSet, raw: bytes) -> dict:
    """The JSON description of ``rs`` for the offline app, the value table ``raw`` (:func:`raw_values`) named
    with its size and SHA-256."""
    t = dice.tables(rs.dice)
    p = rs.params()
    upper = rs.upper_mask
    boxes = [
        {
            "id": b.id,
            "name": rs.box_name(b.id),
            "kind": b.kind,
            "a": b.a,
            "b": b.b,
            "points": b.points,
            "section": "upper" if (upper >> i) & 1 else "lower",
            "in_game": b.id in rs.boxes,
        }
        for i, b in enumerate(rs.sheet)
    ]
    values = np.frombuffer(raw, dtype="<f8").reshape(rs.table_shape)
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "rules": rs.name,
        "title": rs.title,
        "rules_answer": rules_answer(rs),
        "dice": rs.dice,
        "rolls": rs.rolls,
        "box_ids": list(rs.box_ids),
        "boxes": boxes,
        "in_game": list(rs.boxes),
        "bonus_name": rs.bonus_name,
        "params": [int(x) for x in p],
        "param_layout": {name: getattr(rules, name) for name in PARAM_NAMES + FIELD_NAMES},
        "kinds": {name: getattr(rules, name) for name in KIND_NAMES},
        "joker_codes": {"none": rules.JOKER_NONE, "free": rules.JOKER_FREE, "forced": rules.JOKER_FORCED},
        "hands": {
            "n_hands": t.n_hands,
            "n_keeps": t.n_keeps,
            "counts": t.counts.tolist(),
            "weight": t.weight.tolist(),
            "add": t.add.tolist(),
            "subs": t.subs.tolist(),
            "subkeeps": t.subkeeps.tolist(),
            "odds": "a keep smaller than a hand is worth the mean, over the six faces (each 1/6), of the keep "
            "add[keep][face] one die larger; a hand's chance on a full roll is weight[hand] / 6**dice",
        },
        "score_table": rules.score_table(rs).tolist(),
        "score_table_layout": "per hand: the points of each box with every box open, then 1 where they hold in "
        "every state (0: all dice alike, with a Penta box: the joker and the bonus may apply), then each box's "
        "successor row",
        "joker_points": joker_points(rs),
        "values": {
            "file": f"{rs.name}.f64",
            "dtype": "<f8",
            "shape": list(rs.table_shape),
            "index": "[penta_scored][open_mask][upper_subtotal capped at upper_threshold]",
            "unreachable": "NaN",
            "bytes": len(raw),
            "sha256": hashlib.sha256(raw).hexdigest(),
            "reachable_states": int(np.count_nonzero(~np.isnan(values))),
        },
        "expected_score": float(values[0, rs.box_mask, 0]),
    }


@dataclasses.dataclass(frozen=True)
class Exported:
    """One rule set's exported tables: the JSON text and the raw values, and the SHA-256 of each."""

    name: str
    json_bytes: bytes
    values: bytes
    json_sha256: str
    values_sha256: str


def export(rs: rules.RuleSet, values: np.ndarray) -> Exported:
    """``rs``'s tables for the offline app (:class:`TooLarge` for Maxi Yatzy)."""
    check_size(rs)
    raw = raw_values(rs, values)
    text = json.dumps(describe(rs, raw), separators=(",", ":")).encode()
    return Exported(rs.name, text, raw, hashlib.sha256(text).hexdigest(), hashlib.sha256(raw).hexdigest())
