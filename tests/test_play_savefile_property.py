"""Property: whatever a save file holds, ``Game.from_json`` gives a game or a GameError, never another exception;
and a game it gives is whole: it saves back the same, and it can be played on."""

import json

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pentadice.game import rules  # noqa: E402
from pentadice.players.engine import Game, GameError, Player  # noqa: E402

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**200), max_value=2**200)
    | st.floats()  # NaN and infinities included: json.dumps writes them as NaN and Infinity
    | st.text(max_size=12)
    | st.sampled_from(["penta", "kiriki", "PCG64", "pentadice-game", "chance", "\x1b]0;x\x07", "false", ""])
)
json_values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=12), inner, max_size=6),
    max_leaves=12,
)


def real_game(name: str, players: int, seed: int, steps: int) -> Game:
    """A game of ``players`` played ``steps`` random moves in: a valid save to start mutations from."""
    rng = np.random.default_rng(seed)
    g = Game(rules.get_rules(name), [Player(f"p{i}", computer=i % 2 == 1) for i in range(players)], seed=seed)
    for _ in range(steps):
        if g.over:
            break
        if g.dice is None or (g.rolls_left and rng.random() < 0.5):
            g.roll()
        else:
            legal, _ = g.legal_boxes()
            g.score(str(rng.choice(sorted(legal))))
    return g


games = st.builds(
    real_game,
    st.sampled_from(sorted(rules.REGISTRY)),
    st.integers(1, 6),
    st.integers(0, 2**32),
    st.integers(0, 250),
)


def check(text) -> None:
    """The property: a game (whole: it saves back the same and can be played on) or a GameError."""
    try:
        game = Game.from_json(text)
    except GameError:
        return
    again = Game.from_json(game.to_json())
    assert again.to_json() == game.to_json()
    if not game.over:
        if game.dice is None:
            game.roll()
        legal, _ = game.legal_boxes()
        assert legal  # some box always takes the dice
        game.score(sorted(legal)[0])


@SETTINGS
@given(st.text(max_size=300))
def test_any_text(text):
    check(text)


@SETTINGS
@given(st.binary(max_size=300))
def test_any_bytes(data):
    check(data)


@SETTINGS
@given(json_values)
def test_any_json(value):
    check(json.dumps(value))


def _paths(node, path=()):
    """Every place in a JSON tree: (path, node)."""
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*path, i))


def _mutate(data, path, how, value):
    if not path:
        return value
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if how == "delete":
        del parent[last]
    elif how == "add" and isinstance(parent, dict):
        parent[f"{last}_x"] = value
    elif how == "add" and isinstance(parent, list):
        parent.insert(last, value)
    elif how == "number" and isinstance(parent[last], int) and not isinstance(parent[last], bool):
        parent[last] += value if isinstance(value, int) and not isinstance(value, bool) else 1
    else:
        parent[last] = value
    return data


@SETTINGS
@given(games, st.data())
def test_valid_saves_mutated(game, data):
    saved = json.loads(game.to_json())
    check(json.dumps(saved))  # the unmutated save loads
    assert Game.from_json(json.dumps(saved)).to_json() == game.to_json()
    for _ in range(data.draw(st.integers(1, 3))):
        places = list(_paths(saved))
        path, _ = data.draw(st.sampled_from(places))
        how = data.draw(st.sampled_from(["replace", "delete", "add", "number"]))
        saved = _mutate(saved, path, how, data.draw(json_values | st.integers(-3, 3)))
    check(json.dumps(saved))


@SETTINGS
@given(games, st.data())
def test_valid_saves_cut_or_with_bytes_flipped(game, data):
    raw = bytearray(game.to_json().encode())
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i] = data.draw(st.integers(0, 255))
    check(bytes(raw[: data.draw(st.integers(0, len(raw)))]))
    check(bytes(raw))
