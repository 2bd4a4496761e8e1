"""Progress bars whose time left can be believed: the rate is measured from the first step on (a compile or a
table loading before it says nothing of the rest) and shown from the second, and the table builds report their
progress in units of work, so that the rate holds from one layer to the next.

Cost: a reduced game's chances and end-game tables (a second or so); the bar is driven with a fake clock."""

from __future__ import annotations

import io

import click
import click._termui_impl as termui
import pytest

from pentadice.faces.cli import loading


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = Clock()
    monkeypatch.setattr(loading.time, "time", fake)
    monkeypatch.setattr(termui.time, "time", fake)
    return fake


def test_the_time_left_leaves_out_the_wait_before_the_first_step(clock):
    bar = loading.RateBar(click.progressbar(length=100, label="x", file=io.StringIO()))
    with bar:
        clock.now += 60.0  # a minute of compiling before anything is done
        bar.update(1)
        assert not bar.bar.show_eta, "no estimate from a single step"
        for _ in range(9):  # then one step a second
            clock.now += 1.0
            bar.update(1)
        assert bar.bar.show_eta
        assert bar.bar.eta == pytest.approx(90.0, rel=0.05)  # 90 steps left at 1 s each, not 90 x 6.9 s


def test_chances_progress_is_in_units_of_work(penta_is_small, small_game_tables):
    from pentadice.advisor import Advisor
    from pentadice.solver import remaining

    advisor = Advisor.load("penta", str(small_game_tables), solve_missing=False)
    seen: list[tuple[int, int]] = []
    remaining.solve(penta_is_small, advisor.values, progress=lambda done, total: seen.append((done, total)))
    assert len(seen) == penta_is_small.n_boxes and len({t for _, t in seen}) == 1
    dones = [d for d, _ in seen]
    assert dones == sorted(dones) and dones[-1] == seen[0][1]
    steps = [b - a for a, b in zip([0, *dones], dones, strict=False)]
    assert steps != [steps[0]] * len(steps), "layers of different sizes weigh differently"
