"""The tables stay the same bits: every registered rule set solved and its values' SHA-256 compared with the one
taken from the solver before its speed work. A change of the kernels that moves any value by one
unit in the last place fails here, not only in the tolerances of the exactness tests.

Should a deliberate change of the method alter a table, check it against tests/test_published.py,
test_bruteforce.py and yatzy-solver first, then replace the checksum and say why in the commit.
"""

import hashlib

import numpy as np
import pytest
from solutions import solved

from pentadice.game import rules

# SHA-256 of ``solver.solve(rules.get_rules(name)).values`` (C order, float64, shaped ``rs.table_shape``: (2, 8192,
# 64) for Penta's sheet). Yatzy's was taken when it was added, its start value then agreeing with the
# published 248.4399894 to 3e-8; Maxi Yatzy takes a minute to solve and is checked in test_published.
CHECKSUMS = {
    "penta": "9f8098ad6260808d3a6e8445fc3956471e213faf8a19c5099c7c7309e555f591",
    "yahtzee": "e06d73e57229eb920613a4d34ceb972a738cb4bdf66e6867b51e1fc1fcfc5385",
    "yahtzee+forced-joker": "1a2cc2a9ffd234172a868a2b4c62bd906376f0442d5f4843d6f58ec17af767b2",
    "yahtzee+no-joker": "df38be0de2656fb8aad64f50daf99a397cfae574749d5d767a1d9c5093f41556",
    "yahtzee+no-bonus": "2a9c4f4809ebde98ee0b81e57237a802d3ba779be809e93c3827a69ca30231c4",
    "kiriki": "2fff7461394a254c7ee12be2423bd5e01a4cbd3dd737f15724252d5832f2f138",
    "yatzy": "b4a60294a1646ee29f994192d20d87e64f0e26df898b8a8b50c9a88177ba272e",
}


def test_every_registered_rule_set_but_maxi_yatzy_has_a_checksum():
    assert set(CHECKSUMS) == set(rules.REGISTRY) - {"maxi-yatzy"}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CHECKSUMS))
def test_the_table_is_the_same_bits(name):
    values = solved(name).values
    rs = rules.get_rules(name)
    assert values.shape == rs.table_shape == (rs.n_flags, 1 << rs.n_boxes, rs.upper_threshold + 1)
    assert values.dtype == np.float64
    assert hashlib.sha256(np.ascontiguousarray(values).data).hexdigest() == CHECKSUMS[name]
