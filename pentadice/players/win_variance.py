"""The variance of the points still to come under optimal play, which the ``win`` strategy's formula reads
(:mod:`pentadice.players.win`): from the second moments saved beside the table, computed exactly from the
second-moment table, or read from the cumulant generating function of two utility tables of a very small theta
``h``: ``log E[exp(hR)] + log E[exp(-hR)] = h^2 Var(R) + O(h^4)``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pentadice.game import rules
from pentadice.tables import win_tables

VARIANCE_THETA = 0.0005  # h of the variance's cumulant estimate


def saved_variance(rs: rules.RuleSet, values: np.ndarray, directory: Path | str) -> np.ndarray | None:
    """Var(R) from the second moments saved beside the table (``pentadice solve``), or None."""
    from pentadice.tables import moment_files, table

    values = win_tables.saved_shape(rs, values)
    try:
        m2 = np.asarray(moment_files.load_moments(rs, Path(directory), values))
    except (AttributeError, ImportError, table.TableError):
        return None
    with np.errstate(invalid="ignore"):
        return np.maximum(m2 - values * values, 0.0)


def exact_variance(
    rs: rules.RuleSet, values: np.ndarray, threads: int = 1, directory: Path | str | None = None
) -> np.ndarray | None:
    """Var(R) under the advisor's policy from the second-moment table (:mod:`pentadice.solver.moments`), or
    None where that module is not available. Given ``directory``, the second moments are saved beside the
    table there when they can be (as ``pentadice solve`` does), so that the next build reads them."""
    try:
        from pentadice.solver.moments import second_moments
    except ImportError:
        return None
    values = win_tables.saved_shape(rs, values)
    m2 = second_moments(rs, values, threads=threads, check=False)
    if m2.shape != values.shape:
        return None
    if directory is not None:
        import contextlib

        from pentadice.tables import moment_files, table

        with contextlib.suppress(table.TableError, OSError):
            moment_files.save_moments(rs, Path(directory), np.ascontiguousarray(m2, dtype=np.float64), values)
    with np.errstate(invalid="ignore"):
        return np.maximum(m2 - values * values, 0.0)


def cumulant_variance(rs: rules.RuleSet, threads: int = 1, h: float = VARIANCE_THETA) -> np.ndarray:
    """Var(R) from two utility tables: ``(log E[exp(hR)] + log E[exp(-hR)]) / h^2`` (exact to O(h^2); their
    policies differ from the optimal one by O(h))."""
    from pentadice.solver import utility

    return cumulants(utility.solve_theta(rs, h, threads), utility.solve_theta(rs, -h, threads), h)


def cumulants(up: np.ndarray, down: np.ndarray, h: float) -> np.ndarray:
    """Var(R) from the utility tables of ``h`` and ``-h``: ``(log E[exp(hR)] + log E[exp(-hR)]) / h^2``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.maximum((np.log(up) + np.log(-down)) / (h * h), 0.0)
