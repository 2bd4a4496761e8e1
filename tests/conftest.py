"""Shared fixtures: solved tables are expensive, so each is solved once per test session."""

import functools

import pytest

from pentadice import rules, solver, table


@functools.cache
def solved(name: str) -> solver.Solution:
    """The solution of a registered rule set, solved once per session."""
    return solver.solve(rules.get_rules(name))


@pytest.fixture(scope="session")
def penta_solution() -> solver.Solution:
    return solved("penta")


@pytest.fixture(scope="session")
def penta_table_dir(tmp_path_factory, penta_solution):
    """A directory holding the saved Penta table."""
    directory = tmp_path_factory.mktemp("tables")
    table.save(penta_solution.rules, penta_solution.values, directory)
    return directory
