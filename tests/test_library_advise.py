"""`pentadice.advise`, the library's one call: the same options and values as the advisor, SDs included, a sheet
given as a mapping or in the command line's notation, clear errors for a situation the rules do not allow, and an
`import pentadice` that loads nothing heavy (the call imports what it needs).

Cost: the Penta table read once (in process) and one short interpreter."""

from __future__ import annotations

import subprocess
import sys

import pytest

import pentadice
from pentadice.advisor import Advisor


@pytest.fixture(autouse=True)
def _fresh_cache():
    pentadice._advisor.cache_clear()
    yield
    pentadice._advisor.cache_clear()


def test_advise_is_the_advisors_answer_with_sds(penta_table_dir):
    got = pentadice.advise([1, 1, 3, 4, 6], data=str(penta_table_dir))
    advisor = Advisor.load("penta", str(penta_table_dir), solve_missing=False, spread=True)
    expected = advisor.advise(advisor.situation([1, 1, 3, 4, 6], 2))
    assert got.options == expected.options
    assert got.best_keep is not None and got.best_keep.move.dice == (4,)
    assert all(o.sd is not None and o.sd > 0 for o in got.options)


def test_a_sheet_as_mapping_or_notation(penta_table_dir):
    data = str(penta_table_dir)
    mapped = pentadice.advise([6, 6, 6, 2, 3], {"sixes": 24, "penta": 50}, rolls_left=0, data=data)
    written = pentadice.advise([6, 6, 6, 2, 3], "sixes=24 penta=50", rolls_left=0, data=data)
    assert mapped.options == written.options and mapped.best_keep is None
    assert "sixes" not in {o.move.box for o in mapped.options}


@pytest.mark.parametrize(
    ("dice", "sheet", "rolls_left", "words"),
    [([1, 2, 3], None, None, "uses 5 dice"), ([1, 1, 3, 4, 7], None, None, "1 to 6"),
     ([1, 1, 3, 4, 6], {"sevens": 3}, None, "sevens"), ([1, 1, 3, 4, 6], None, 3, "roll")],
)  # fmt: skip
def test_a_situation_the_rules_refuse_says_why(penta_table_dir, dice, sheet, rolls_left, words):
    with pytest.raises(ValueError, match=words):
        pentadice.advise(dice, sheet, rolls_left, data=str(penta_table_dir))


def test_import_pentadice_loads_nothing_heavy():
    code = "import sys, pentadice; print(sorted(m for m in ('numpy', 'numba', 'pyarrow') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
