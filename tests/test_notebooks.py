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
FAMILY = ("penta", "yahtzee", "yatzy", "maxi-yatzy")  # the games family.ipynb compares


@pytest.fixture(scope="session")
def family_table_dir(tmp_path_factory):
    """A table directory holding the tables family.ipynb reads, saved from the session's solves (tests/conftest.py
    caches them): Maxi Yatzy's solve (a minute or two) is then shared with the tests that need it rather than
    done again in the notebook."""
    from conftest import solved

    from pentadice.tables import table

    directory = tmp_path_factory.mktemp("family-tables")
    for name in FAMILY:
        solution = solved(name)
        table.save(solution.rules, solution.values, directory)
    return directory


def test_every_notebook_is_checked():
    assert {p.name for p in NOTEBOOKS} == set(FIGURES)


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_and_saves_its_figures(path, tmp_path, monkeypatch, request):
    import nbformat

    data = request.getfixturevalue("family_table_dir" if path.name == "family.ipynb" else "penta_table_dir")
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
