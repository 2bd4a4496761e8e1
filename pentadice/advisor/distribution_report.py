"""The exact distribution of the final score (:mod:`pentadice.advisor.distribution`) as people and programs
take it: its summary (mean, SD, percentiles), the report ``pentadice distribution`` prints, and the whole
distribution written to a file (JSON or Parquet, one row per score), which is recognised when written again."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np

from pentadice.advisor.distribution import Distribution
from pentadice.game import rules
from pentadice.game.sheet import Sheet


def summary(dist: Distribution) -> dict:
    """``mean``, ``sd``, ``percentiles``, ``tail`` and how the sheet ends (``p_upper_bonus``, ``p_penta``) as JSON
    data (see docs/distribution.md)."""
    return {
        "mean": dist.mean(),
        "sd": dist.sd(),
        "min": dist.min_score,
        "max": dist.max_score,
        "percentiles": dist.percentiles(),
        "tail": dist.tail(),
        "p_upper_bonus": dist.p_upper_bonus,
        "p_penta": dist.p_penta,
    }


FILE_FORMAT = "pentadice-distribution"


def report(
    rs: rules.RuleSet,
    dist: Distribution,
    sheet: Sheet,
    dice: Sequence[int] | None = None,
    rolls_left: int | None = None,
) -> dict:
    """The distribution as the JSON object of ``pentadice distribution --json``: ``rules``, ``sheet``,
    ``score_so_far``, (``dice``, ``rolls_left`` mid-turn), ``mean``, ``sd``, ``min``, ``max``, ``percentiles``
    (an object ``{"1": score, ...}``), ``tail`` (``[t, P(final >= t)]`` for every ``t`` from 0 to ``max``),
    ``p_upper_bonus`` and ``p_penta`` (null without a Penta box)."""
    out: dict = {"rules": rs.name, "sheet": sheet.as_dict(rs), "score_so_far": sheet.score(rs)}
    if dice is not None:
        out["dice"] = sorted(dice)
        out["rolls_left"] = rolls_left
    out.update(summary(dist))
    out["seconds"] = dist.seconds
    return out


def is_distribution_file(path) -> bool:
    """Whether ``path`` holds a distribution written by :func:`write` (which may then replace it)."""
    from pathlib import Path

    try:
        with open(Path(path), "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    if head.startswith(b"PAR1"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            meta = pq.read_schema(path).metadata or {}
        except (OSError, ValueError, pa.ArrowException):
            return False
        return FILE_FORMAT.encode() in meta.get(b"pentadice", b"")
    return head.lstrip().startswith(b"{") and f'"format": "{FILE_FORMAT}"'.encode() in head


def file_kind(path: str) -> str:
    """``"parquet"`` or ``"json"`` from the file name's ending; ValueError for any other."""
    lower = path.lower()
    if lower.endswith((".parquet", ".pq")):
        return "parquet"
    if lower.endswith(".json"):
        return "json"
    raise ValueError(f"--out {path}: the file name must end in .parquet (Parquet) or .json (JSON)")


def write(target, rs: rules.RuleSet, dist: Distribution, meta: dict, kind: str) -> None:
    """Write the whole distribution to ``target`` (a checked :class:`~pentadice.tables.atomic.Target`) atomically: a row
    per score from the lowest to the highest possible, with ``score``, ``probability`` and ``p_at_least``
    (``P(final >= score)``); ``meta`` (the report without its tail) goes into the file's metadata."""
    from pentadice.tables import atomic

    surv = np.cumsum(dist.probs[::-1])[::-1] / dist.total()
    head = {"format": FILE_FORMAT, **meta}
    if kind == "json":
        data = {
            **head,
            "offset": dist.offset,
            "scores": dist.scores.tolist(),
            "probability": dist.probs.tolist(),
            "p_at_least": np.minimum(surv, 1.0).tolist(),
        }
        text = json.dumps(data).encode()
        atomic.write_file(target, lambda fh: fh.write(text))
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow = pa.table(
        {
            "score": pa.array(dist.scores.astype(np.int32)),
            "probability": pa.array(dist.probs),
            "p_at_least": pa.array(np.minimum(surv, 1.0)),
        }
    ).replace_schema_metadata({"pentadice": json.dumps(head)})
    atomic.write_file(target, lambda fh: pq.write_table(arrow, fh, write_page_checksum=True))
