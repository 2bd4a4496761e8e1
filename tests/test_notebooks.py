"""The notebooks run top to bottom on small inputs, and make their figures."""

from pathlib import Path

import pytest

nbclient = pytest.importorskip("nbclient")  # the notebooks extra; `make install` brings it

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))
FIGURES = {
    "value_of_a_position.ipynb": ["expected_scores.png", "upper_heatmap.png", "bonus_worth.png"],
    "optimal_vs_greedy.ipynb": ["optimal_vs_greedy.png", "greedy_losses.png"],
    "decisions.ipynb": ["habit_costs.png"],
    "distribution.ipynb": ["score_distribution.png"],
    "family.ipynb": ["family_distribution.png"],
}
# The rule sets a notebook compares in the test (PENTADICE_NOTEBOOK_RULES: a small input, as the numbers of
# games are), their tables read from the session's solves (tests/solutions.py caches them, so that Maxi Yatzy's
# solve, a minute or two, is shared with the tests that need it, not done again here). The family notebook keeps
# one exact distribution and Maxi Yatzy's simulated one: both of its paths.
TABLES = {
    "family.ipynb": ("penta", "maxi-yatzy"),
    "distribution.ipynb": ("yahtzee+no-bonus",),
}


def tables_of(names, directory):
    """``directory`` holding the saved tables of the rule sets ``names``, as the session solved them."""
    from solutions import saved

    for name in names:
        saved(name, directory)
    return directory


def test_every_notebook_is_checked():
    assert {p.name for p in NOTEBOOKS} == set(FIGURES)


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_and_saves_its_figures(path, tmp_path, monkeypatch, request):
    import nbformat

    if path.name in TABLES:
        data = tables_of(TABLES[path.name], tmp_path / "tables")
        monkeypatch.setenv("PENTADICE_NOTEBOOK_RULES", ",".join(TABLES[path.name]))
    else:
        data = request.getfixturevalue("penta_table_dir")
    monkeypatch.setenv("PENTADICE_FIGURES", str(tmp_path))
    monkeypatch.setenv("PENTADICE_DATA", str(data))
    monkeypatch.setenv("PENTADICE_NOTEBOOK_GAMES", "2000")
    monkeypatch.setenv("PENTADICE_NOTEBOOK_DECISION_GAMES", "10")
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    for name in FIGURES[path.name]:
        assert (tmp_path / name).stat().st_size > 10_000, name
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
