"""The compiled advice path (pentadice.advisor.quick, pentadice.solver.advice_kernel) against its references: on
random situations of a small game of every registered rule set (the joker's, Kiriki's repeats and the upper bonus
all occur; all dice alike often, with few dice), its text is byte for byte the object path's
(``advice_object``: ``advise --json``'s object, ``why`` included), and ``advise --json``'s own code as the
command runs it (plain-Python turn, no Numba); on full Penta, the real command's output. Through the web API,
``/api/advise`` and ``/api/advise/batch`` answer good and bad bodies exactly as the object path does."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from sheets import random_sheet

from pentadice.advisor import Advisor
from pentadice.advisor.explain import explain
from pentadice.advisor.quick import QuickAdvisor
from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.game.situation import Situation
from pentadice.solver import induction
from pentadice.tables import moment_files, table

pytest.importorskip("fastapi", reason="no fastapi: make install (the [web] extra)")
from fastapi.testclient import TestClient

from pentadice.faces.web import advising
from pentadice.faces.web.advising import advice_object, batch_answers
from pentadice.faces.web.api import create_app
from pentadice.faces.web.responses import escaped

# A small game of each registered rule set (solved in a second): its own rules (joker, bonus, repeats, sheet) on
# fewer dice and boxes.
GAMES = {
    "penta": dict(dice=3, boxes=("ones", "threes", "full_house", "chance", "penta"), upper_threshold=8),
    "yahtzee": dict(dice=3, boxes=("ones", "twos", "full_house", "small_straight", "penta"), upper_threshold=5),
    "yahtzee+forced-joker": dict(dice=3, boxes=("fives", "sixes", "four_of_a_kind", "penta"), upper_threshold=20),
    "yahtzee+no-joker": dict(dice=3, boxes=("twos", "three_of_a_kind", "chance", "penta"), upper_threshold=6),
    "yahtzee+no-bonus": dict(dice=3, boxes=("threes", "full_house", "chance", "penta"), upper_threshold=9),
    "kiriki": dict(dice=3, boxes=("ones", "twos", "chance", "penta"), upper_threshold=4),
    "yatzy": dict(dice=4, boxes=("sixes", "two_pairs", "four_of_a_kind", "chance"), upper_threshold=18),
    "maxi-yatzy": dict(dice=6, boxes=("twos", "three_pairs", "tower", "maxi_yatzy"), upper_threshold=6),
}
PER_GAME = 40  # random situations per game (a tenth of them all dice alike)


def test_every_registered_rule_set_has_a_game():
    assert set(GAMES) == set(rules.REGISTRY)


@pytest.fixture(scope="module")
def advisors(tmp_path_factory) -> dict[str, tuple[Advisor, Advisor]]:
    """Per rule set: the advisor as the server has it (compiled kernels, the spread loaded) and as ``advise``
    has it (plain-Python turn), on one saved table with its second moments."""
    out = {}
    for name, changes in GAMES.items():
        rs = rules.get_rules(name).reduced(**changes)
        directory = tmp_path_factory.mktemp(name.replace("+", "-"))
        values = induction.solve(rs).values
        table.save(rs, values, directory)
        moment_files.build_moments(rs, directory, values)
        served = Advisor(table.load(rs, directory))
        served.load_spread()
        command = Advisor(table.load(rs, directory), compiled=False)
        command.load_spread()
        out[name] = (served, command)
    return out


def situations(rs: rules.RuleSet, seed: int, n: int = PER_GAME) -> list[dict]:
    """Random situations as JSON data: random sheets (the Penta box and its bonus too), dice, rolls left."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        sheet = random_sheet(rs, rng, int(rng.integers(0, len(rs.boxes))))
        dice = [int(d) for d in rng.integers(1, 7, rs.dice)]
        if len(out) % 10 == 0:
            dice = [dice[0]] * rs.dice  # all alike: the joker, the Penta bonus, Kiriki's repeats
        data = {"dice": dice, "rolls_left": int(rng.integers(0, rs.rolls)), "sheet": sheet.as_dict(rs)}
        try:
            Situation.make(rs, data["dice"], data["rolls_left"], sheet)
        except ValueError:
            continue
        out.append(data)
    return out


def command_json(advisor: Advisor, situation: Situation, top: int | None = None) -> str:
    """What ``pentadice advise --json`` prints, by its own code (``faces/cli/advise.py``)."""
    advice = advisor.advise(situation)
    why = explain(advisor, advice)
    return json.dumps({**advice.as_dict(advisor.rules, top), "why": why.as_dict() if why else None})


def situation_of(rs: rules.RuleSet, data: dict) -> Situation:
    from pentadice.game.sheet import Sheet

    return Situation.make(rs, data["dice"], data["rolls_left"], Sheet.from_mapping(data["sheet"], rs))


@pytest.mark.parametrize("name", list(GAMES))
def test_the_compiled_path_writes_the_object_paths_bytes(advisors, name):
    served, command = advisors[name]
    rs = served.rules
    quick = QuickAdvisor(served)
    kinds = {"joker": 0, "why": 0, "last roll": 0, "sd": 0}
    for i, data in enumerate(situations(rs, seed=len(name))):
        top = 3 if i % 7 == 3 else None
        record = quick.read(data)
        assert record is not None, data
        fast = quick.texts([record], top, explain=True)[0]
        situation = situation_of(rs, data)
        assert fast == json.dumps(advice_object(served, situation, top)), data
        assert fast == command_json(command, situation, top), data
        answer = json.loads(fast)
        kinds["joker"] += "joker" in answer
        kinds["why"] += answer["why"] is not None
        kinds["last roll"] += data["rolls_left"] == 0
        kinds["sd"] += "sd" in answer["best"]
        # The batch's answer: the same without why, SDs as the batch gives them (the advisor's spread).
        batch = quick.texts([record], top, explain=False)[0]
        assert batch == json.dumps(served.advise_many([situation])[0].as_dict(rs, top)), data
    assert kinds["why"] > 0 and kinds["last roll"] > 0 and kinds["sd"] == PER_GAME
    if rs.penta_id is not None and rs.joker is not rules.Joker.NONE:
        assert kinds["joker"] > 0


def test_many_situations_in_one_call_answer_as_one_each(advisors):
    served, _ = advisors["yahtzee"]
    quick = QuickAdvisor(served)
    records = [quick.read(d) for d in situations(served.rules, seed=7)]
    alone = [quick.texts([r], None, explain=True)[0] for r in records]
    assert quick.texts(records, None, explain=True) == alone


def test_full_penta_matches_the_real_command(penta_table_dir):
    """Full Penta: ``pentadice advise --json`` itself, run for a handful of situations (a joker among them)."""
    advisor = Advisor.load("penta", str(penta_table_dir), solve_missing=False)
    quick = QuickAdvisor(advisor)
    rs = advisor.rules
    cases = situations(rs, seed=3, n=6)
    cases.append({"dice": [4, 4, 4, 4, 4], "rolls_left": 1, "sheet": {"penta": 50, "fours": 12}})
    for data in cases:
        sheet = " ".join(f"{b}={v}" for b, v in data["sheet"].items())
        args = ["advise", "--json", "--rules", "penta", "--data", str(penta_table_dir), "--rolls-left"]
        args += [str(data["rolls_left"]), *(["--sheet", sheet] if sheet else []), *map(str, data["dice"])]
        done = CliRunner().invoke(main, args)
        assert done.exit_code == 0, done.output
        record = quick.read(data)
        assert done.output == quick.texts([record], None, explain=True)[0] + "\n"


# The web API: the same bytes as the object path, for good bodies and bad.

BAD_BODIES = [
    b"",
    b"{",
    b"[]",
    b"null",
    b"\xff\xfe",
    b'{"dice": [1, 2, 3]}',
    b'{"dice": [1, 2, 9]}',
    b'{"dice": "123"}',
    b'{"dice": [1, 2, 3], "rolls_left": 7}',
    b'{"dice": [1, 2, 3], "rolls_left": true}',
    b'{"dice": [1, 2, 3], "rolls_left": 1.0}',
    b'{"dice": [1, 2, 3], "sheet": {"ones": 7}}',
    b'{"dice": [1, 2, 3], "sheet": {"sevens": 1}}',
    b'{"dice": [1, 2, 3], "sheet": {"ones": 1, "ones": 2}}',
    b'{"dice": [1, 2, 3], "dice": [1, 1, 1]}',
    b'{"dice": [1, 2, 3], "rolls_left": NaN}',
    b'{"dice": [1, 2, 3], "rules": "chess"}',
    b'{"dice": [1, 2, 3], "rules": "yatzy", "x": NaN}',
    b'{"dice": [1, 2, 3], "top": 0}',
    b'{"dice": [1, 2, 3], "top": 1' + b"0" * 60 + b"}",
    b'{"dice": [1, 2, 3], "pad": 1}',
    b'{"dice": [1, 2, 3], "sheet": {"ones": 3, "threes": 3, "full_house": 25, "chance": 9, "penta": 50}}',
    b"[" * 200 + b"]" * 200,
]


@pytest.fixture(scope="module")
def clients(advisors):
    """The application serving the small games, and the same with the compiled path turned off (the reference)."""
    served = {name: pair[0] for name, pair in advisors.items()}
    fast, slow = create_app(served), create_app(served)
    slow.state.web.cache.quick = lambda state, body: None
    with TestClient(fast) as f, TestClient(slow) as s:
        yield f, s


def test_advise_answers_as_the_object_path(clients, advisors):
    fast, slow = clients
    bodies = []
    for name, (served, _) in advisors.items():
        for i, data in enumerate(situations(served.rules, seed=100 + len(name), n=12)):
            body = {**data, "rules": name} if name != "penta" or i % 2 else data
            if i % 5 == 4:
                body["top"] = 2
            bodies.append(json.dumps(body).encode())
    bodies.append(b'{"dice": [2, 2, 2], "sheet": {"Ones": 1}}')  # another spelling of a box: the object path
    for body in [*bodies, *BAD_BODIES]:
        got, expected = fast.post("/api/advise", content=body), slow.post("/api/advise", content=body)
        assert (got.status_code, got.content) == (expected.status_code, expected.content), body
    assert all(advising._QUICK.get(pair[0]) is not None for pair in advisors.values())  # the compiled path ran
    for body in bodies[:5]:  # asked again: from the cache, the same bytes
        assert fast.post("/api/advise", content=body).content == slow.post("/api/advise", content=body).content


def test_the_batch_answers_as_the_object_path(clients, advisors):
    fast, _ = clients
    for name, (served, _) in advisors.items():
        items: list = [*situations(served.rules, seed=200 + len(name), n=15)]
        items[3:3] = [17, "x", {"dice": [9] * served.rules.dice}, {"dice": [1] * served.rules.dice, "rolls_left": 9}]
        items.append({"dice": [1] * served.rules.dice, "sheet": {"Chance": 5}})
        for top in (None, 2):
            body = {"items": items, "rules": name, **({"top": top} if top else {})}
            got = fast.post("/api/advise/batch", json=body)
            expected = escaped(json.dumps({"results": batch_answers(served, items, top)}).encode())
            assert (got.status_code, got.content) == (200, expected), name
        assert json.loads(got.content)["results"][5]["line"] == 6
    assert fast.post("/api/advise/batch", json={"items": {}}).status_code == 422


def test_warm_up_makes_the_compiled_path(advisors):
    served, _ = advisors["kiriki"]
    advising.warm_up([served])
    assert advising.quick_of(served) is advising.quick_of(served)
