"""An independent solver (the dev dependency ``yatzy-solver``, written in Rust) asked for every state of a table:
what the solver is compared with where the peer has the same rules."""

from __future__ import annotations

import numpy as np
import pytest

from pentadice.game import rules


def peer_values(rs: rules.RuleSet, values: np.ndarray, variant: str) -> np.ndarray:
    """yatzy-solver's ``variant``'s values of the states that ``values`` (a table of ``rs``) holds, in
    ``np.nonzero(~np.isnan(values))`` order; the test is skipped where yatzy-solver is not installed. Its category
    order is mapped onto the sheet's bits (its ``five_of_a_kind`` is the Penta box)."""
    ys = pytest.importorskip("yatzy_solver")
    peer = ys.Solver.build(ys.Variant(variant))
    order = [rs.box_index[c if c != "five_of_a_kind" else "penta"] for c in peer.variant.categories]
    full, mask, sub = np.nonzero(~np.isnan(values))
    filled = np.zeros(len(mask), dtype=np.uint32)
    for peer_bit, our_bit in enumerate(order):
        filled |= (((~mask >> our_bit) & 1) << peer_bit).astype(np.uint32)
    return peer.state_values(filled, sub.astype(np.uint16), full.astype(bool))
