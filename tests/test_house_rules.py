"""House rules: a rule set read from a TOML or JSON file (pentadice.game.rule_files), what it may change, how a bad
file is refused, and that every command and the server take one where they take a rule set's name. About 25 CPU-s,
most of it the documented example solved at full size against an independent solver (-m slow)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import re
import subprocess
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from commands import CLI, one_line, run
from hypothesis import given, settings
from hypothesis import strategies as st
from peer_solver import peer_values
from reference import brute_force, family_points
from serving import free_port, quiet_serve, started

from pentadice import solver
from pentadice.game import rule_files, rules
from pentadice.players.engine import Game, Player
from pentadice.tables import table
from pentadice.tables.inventory import inventory

EXAMPLE = Path(__file__).parent.parent / "docs" / "examples" / "yatzy-alike.toml"
# A game small enough to solve in a moment in a process of its own: 2 dice, 3 boxes.
TINY = """name = "tiny-house"
title = "Tiny house"
dice = 2
rolls = 2
upper_threshold = 5
sheet = ["ones", "twos", "chance"]
"""


@pytest.fixture(autouse=True)
def _registry(monkeypatch):
    """Each test registers its house rules in a registry of its own (the built-in ones only)."""
    monkeypatch.setattr(rules, "REGISTRY", {n: rules.REGISTRY[n] for n in rules.BUILT_IN})


def write(tmp_path: Path, text: str, name: str = "house.toml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_the_example_changes_only_what_it_names():
    rs = rule_files.resolve(str(EXAMPLE))
    yatzy = rules.REGISTRY["yatzy"]
    assert rules.REGISTRY["yatzy+alike"] is rs
    assert [b.id for b in rs.sheet if b.alike] == ["two_pairs", "full_house"]
    assert dataclasses.replace(rs, name="yatzy", title=yatzy.title, sheet=yatzy.sheet) == yatzy
    assert [dataclasses.replace(b, alike=False) for b in rs.sheet] == list(yatzy.sheet)


def test_alike_groups_score_every_roll_as_the_words_say():
    # Four alike are two pairs and five alike a full house (and on six dice: six alike three pairs, a super house,
    # a tower), against the reference that tries every way to split the dice into groups.
    yatzy = rule_files.resolve(str(EXAMPLE))
    maxi = dataclasses.replace(
        rules.REGISTRY["maxi-yatzy"],
        name="maxi-alike",
        sheet=tuple(dataclasses.replace(b, alike=b.kind in rules.ALIKE_KINDS) for b in rules.MAXI_YATZY_SHEET),
    )
    for rs in (yatzy, maxi):
        for roll in itertools.combinations_with_replacement(range(1, 7), rs.dice):
            legal, _ = rules.legal_scores(rs, roll, rs.box_ids, False)
            assert legal == {b.id: family_points(b.id, roll, alike=b.alike) for b in rs.sheet}, roll
    legal, _ = rules.legal_scores(yatzy, (3, 3, 3, 3, 3), yatzy.box_ids, False)
    assert (legal["two_pairs"], legal["full_house"]) == (12, 15)
    legal, _ = rules.legal_scores(yatzy, (2, 4, 4, 4, 4), yatzy.box_ids, False)
    assert (legal["two_pairs"], legal["full_house"]) == (16, 0)
    legal, _ = rules.legal_scores(yatzy, (5, 5, 6, 6, 6), yatzy.box_ids, False)
    assert (legal["two_pairs"], legal["full_house"]) == (22, 28)  # different faces score as before


def test_a_house_game_solves_as_the_brute_force_plays_it(tmp_path):
    text = 'name = "small-alike"\nbase = "yatzy"\ndice = 4\nupper_threshold = 6\n'
    text += 'sheet = ["ones", "twos", {id = "two_pairs", kind = "pairs", count = 2, alike = true}, "chance"]\n'
    rs = rule_files.resolve(write(tmp_path, text))
    fast = solver.solve(rs).values
    slow = brute_force(rs)
    states = np.argwhere(~np.isnan(fast))
    assert len(states) > 20
    for full, mask, sub in states:
        assert fast[full, mask, sub] == pytest.approx(slow(int(mask), int(sub), int(full)), abs=1e-9)


@pytest.mark.slow
def test_the_example_agrees_with_an_independent_solver_on_every_state():
    rs = rule_files.resolve(str(EXAMPLE))
    values = solver.solve(rs).values
    theirs = peer_values(rs, values, "yatzy-scandinavian+fh5+tp4")
    np.testing.assert_allclose(values[~np.isnan(values)], theirs, rtol=0, atol=1e-9)
    assert values[0, rs.box_mask, 0] == pytest.approx(248.6748826884, abs=1e-9)


@pytest.mark.parametrize("name", rules.BUILT_IN)
def test_every_built_in_rule_set_written_out_reads_back_the_same(name, tmp_path):
    rs = rules.REGISTRY[name]
    data = {**rule_files.definition(rs), "name": f"my-{name}"}
    back = rule_files.resolve(write(tmp_path, json.dumps(data), "mine.json"))
    assert dataclasses.replace(back, name=name, title=rs.title, box_names=rs.box_names) == rs
    assert [back.box_name(b) for b in rs.box_ids] == [rs.box_name(b) for b in rs.box_ids]
    assert table.rules_definition(back) | {"name": name} == table.rules_definition(rs)


def test_what_a_file_may_change(tmp_path):
    text = """
name = "our-penta"
title = "Penta at our table"
dice = 5
rolls = 3
upper_threshold = 60
upper_bonus = 40
bonus = 50
joker = "free"
joker_needs_points = false
[boxes.small_straight]
points = 35
[boxes.chance]
id = "chance"
[names]
penta = "Five alike"
"""
    rs = rule_files.resolve(write(tmp_path, text))
    assert (rs.name, rs.title) == ("our-penta", "Penta at our table")
    assert (rs.upper_threshold, rs.upper_bonus, rs.penta_bonus) == (60, 40, 50)
    assert (rs.joker, rs.joker_needs_full, rs.box_name("penta")) == (rules.Joker.FREE, False, "Five alike")
    assert dict(rs.joker_boxes) == {"full_house": 25, "small_straight": 35, "large_straight": 40}
    legal, _ = rules.legal_scores(rs, (1, 2, 3, 4, 6), rs.box_ids, False)
    assert legal["small_straight"] == 35
    assert rs.parse_box("five alike") == "penta"


def test_changed_rules_under_the_same_name_are_solved_again_never_read_from_old_tables(tmp_path):
    path = write(tmp_path, TINY)
    rs = rule_files.resolve(path)
    table.solve_and_save(rs, tmp_path / "data", lambda: solver.solve(rs).values)
    rules.REGISTRY.pop(rs.name)
    listed = inventory(tmp_path / "data")  # as `pentadice where` says it, without the file
    assert listed["tiny-house"].startswith("house rules: expected score ") and "--rules FILE" in listed["tiny-house"]
    assert listed["penta"] == "not solved yet"
    write(tmp_path, TINY.replace("upper_threshold = 5", "upper_threshold = 4"))
    changed = rule_files.resolve(path)
    with pytest.raises(table.TableError, match="solved for other rules") as refused:
        table.load(changed, tmp_path / "data")
    assert f"pentadice solve --rules {path} --data" in str(refused.value)  # the file to solve again, not a name


def test_a_sheet_without_a_penta_box_has_no_bonus_joker_nor_repeat(tmp_path):
    rs = rule_files.resolve(write(tmp_path, TINY))  # from Penta's switches: a bonus of 100, the forced joker
    assert (rs.penta_box, rs.penta_bonus, rs.joker, rs.penta_repeat) == (-1, 0, rules.Joker.NONE, False)
    for line in ("bonus = 50", 'joker = "free"', "repeat = true"):
        with pytest.raises(rule_files.RulesFileError, match=f"{line.split()[0]}: the sheet has no box of kind penta"):
            rule_files.resolve(write(tmp_path, TINY.replace('name = "tiny-house"', f'name = "t"\n{line}'), "x.toml"))


def test_one_name_means_one_game_in_a_process(tmp_path):
    first = rule_files.resolve(write(tmp_path, TINY, "a.toml"))
    assert rule_files.resolve(write(tmp_path, TINY, "b.toml")) is first  # the same rules again: the same rule set
    with pytest.raises(rules.UnknownRules, match="already other house rules'"):
        rule_files.resolve(write(tmp_path, TINY.replace("rolls = 2", "rolls = 3"), "c.toml"))


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("name = 1", "name: Input should be a valid string"),
        ('title = "x"', "name: Field required"),
        ('name = "Our Game"', "is not a rule set's name"),
        ('name = "penta"', "is a built-in rule set's"),
        ('name = "h"\nbase = "h2"', "base 'h2' is not a built-in rule set"),
        ('name = "h"\ndice = 9', "dice: Input should be less than or equal to 6"),
        ('name = "h"\nrolls = true', "rolls: Input should be a valid integer"),
        ('name = "h"\ncolour = "red"', "colour: Extra inputs are not permitted"),
        ('name = "h"\njoker = "sometimes"', "joker: Input should be 'none', 'free' or 'forced'"),
        ('name = "h"\nsheet = ["ones", "sevens"]', "unknown box 'sevens'"),
        ('name = "h"\nsheet = ["ones", "ones"]', "distinct"),
        ('name = "h"\nsheet = []', "sheet: List should have at least 1 item"),
        ('name = "h"\nsheet = [{kind = "chance"}]', "sheet[0]: a box defined in the sheet needs its id"),
        ('name = "h"\nsheet = ["ones", {id = "chance", kind = "run"}]', "sheet[1]: box 'chance' of kind run"),
        ('name = "h"\nsheet = [{id = "ones", kind = "chance"}]', "the upper boxes are ones"),
        ('name = "h"\nsheet = [{id = "chance", kind = "house", sizes = [3]}]', "sheet[0].sizes: List should have"),
        ('name = "h"\n[boxes.chance]\nalike = true', "boxes.chance: box 'chance' of kind chance takes no alike"),
        ('name = "h"\n[boxes.yatzy]\npoints = 3', "boxes.yatzy: the sheet has no box 'yatzy'"),
        ('name = "h"\n[boxes.chance]\nid = "ones"', "a box changed here keeps its id"),
        ('name = "h"\n[names]\nyatzy = "Y"', "names: the sheet has no box 'yatzy'"),
        ('name = "h"\nsheet = ["penta", {id = "yatzy", kind = "penta", points = 5}]', "at most one Penta box"),
        ('name = "h"\nupper_bonus = -1', "upper_bonus: Input should be greater than or equal to 0"),
        ('name = "h"\n[boxes.chance]\nkind = "all_alike"\npoints = 201', "boxes.chance.points: Input should be less"),
        ('name = "h"\nupper_threshold = 0', "upper_threshold: Input should be greater than or equal to 1"),
        ('name = "h"\n[names]\nchance = "Ones"', "names.chance: 'Ones' is already a name of the box 'ones'"),
        ('name = "h"\n[names]\nchance = "fh"', "names.chance: 'fh' is already a name of the box 'full_house'"),
        ('name = "h"\n[names]\nchance = " - "', "names.chance: ' - ' is no name"),
        ('name = "h"\n[names]\nchance = "Bonus"', "names.chance: 'Bonus' is the bonus's name"),
        ('name = "h"\ntitle = "\\u001b[31mRed"', "title: a control or invisible character is not a name's"),
        ("name = ", "is not TOML"),
        ("[1, 2]", "is not TOML"),
    ],
)
def test_a_bad_file_is_refused_naming_the_field(tmp_path, text, words):
    path = write(tmp_path, text)
    with pytest.raises(rule_files.RulesFileError) as refused:
        rule_files.resolve(path)
    assert str(refused.value).startswith(path) and words in str(refused.value), refused.value


@pytest.mark.parametrize(
    ("name", "content", "words"),
    [
        ("house.toml", None, "No such file or directory"),
        ("house.toml", "directory", "is a directory"),
        ("house.toml", b'name = "h\xff"', "is not UTF-8 text"),
        ("house.toml", b"#" * (rule_files.FILE_LIMIT + 1), "is larger than 65,536 bytes"),
        ("house.json", b'{"name": "h", "dice": NaN}', "NaN"),
        ("house.json", b"[" * 60_000, "is nested more than 64 levels deep"),  # no RecursionError
        ("house.json", b'{"name": "h", "name": "g"}', "key 'name' is given twice"),
        ("house.json", b'["a list"]', "holds a list, not a rule set's fields"),
        ("house.toml", b"x = " + b"[" * 30_000, "is not a rules file: it is nested deeper than any rule set"),
        ("house.toml", b"dice = " + b"9" * 5000, "is not a rules file: it holds a number too long to read"),
        ("house.toml", "fifo", "is not a regular file"),
    ],
)
def test_a_file_that_cannot_be_read_is_refused_in_one_line(tmp_path, name, content, words):
    path = tmp_path / name
    if content == "directory":
        path.mkdir()
    elif content == "fifo":
        os.mkfifo(path)  # nobody writes to it: reading it would wait for ever
    elif content is not None:
        path.write_bytes(content)
    done = run("advise", "--rules", str(path), "1", "1", "3", "4", "6")
    line = one_line(done, words, code=2)
    assert "--rules" in line


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_a_rule_set_or_one_clear_refusal(text):
    try:
        rs = rule_files.rule_set(rule_files._parse(text, "h.toml"), "h.toml")
    except rule_files.RulesFileError as e:
        assert str(e).startswith("h.toml") and "\n" not in str(e)
    else:
        assert isinstance(rs, rules.RuleSet)


FIELDS = st.sampled_from(["name", "title", "base", "dice", "rolls", "upper_threshold", "upper_bonus", "bonus", "joker",
                          "joker_needs_points", "repeat", "sheet", "boxes", "names", "other"])  # fmt: skip
WORDS = st.sampled_from(["h", "penta", "yatzy", "ones", "chance", "free", "house", "pairs"])
KEYS = st.sampled_from(["id", "kind", "points", "count", "sizes", "faces", "alike", "ones", "chance"])
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 70) | WORDS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(FIELDS, VALUES, max_size=6))
def test_any_data_is_a_rule_set_or_one_clear_refusal(data):
    try:
        rs = rule_files.rule_set(data, "h.json")
    except rule_files.RulesFileError as e:
        assert str(e).startswith("h.json") and "\n" not in str(e)
    else:
        assert isinstance(rs, rules.RuleSet) and rs.name == data["name"]


def test_rules_lists_the_rule_sets_and_writes_one_out_to_start_from(tmp_path):
    listed = run("rules")
    assert listed.exit_code == 0
    for name in rules.BUILT_IN:
        assert name in listed.output
    shown = run("rules", "yatzy")
    data = json.loads(shown.output)
    assert data["name"] == "yatzy" and len(data["sheet"]) == 15
    data["name"] = "mine"
    back = rule_files.resolve(write(tmp_path, json.dumps(data), "mine.json"))
    assert back.sheet == rules.REGISTRY["yatzy"].sheet
    checked = run("rules", str(EXAMPLE))
    assert json.loads(checked.output)["name"] == "yatzy+alike"


def test_a_real_process_solves_advises_and_serves_house_rules(tmp_path):
    path = write(tmp_path, TINY)
    data = str(tmp_path / "data")
    given = ("--rules", path, "--data", data)
    solve = subprocess.run([*CLI, "solve", *given], capture_output=True, text=True, timeout=300)
    assert solve.returncode == 0, solve.stderr
    advise = [*CLI, "advise", *given, "--json", "2", "2"]  # the first roll of a game of 2 rolls: 1 reroll left
    answered = subprocess.run(advise, capture_output=True, text=True, timeout=120)
    assert answered.returncode == 0, answered.stderr
    answer = json.loads(answered.stdout)
    assert answer["rules"] == "tiny-house" and answer["options"] and answer["rolls_left"] == 1
    batch = [*CLI, "advise", *given, "--batch", "-"]  # a line without rolls_left: the first roll's
    answered = subprocess.run(batch, input='{"dice": [2, 2]}\n', capture_output=True, text=True, timeout=120)
    assert answered.returncode == 0 and json.loads(answered.stdout)["rolls_left"] == 1, answered.stderr
    game = Game(rule_files.resolve(path), [Player("Ana")], seed=3)  # a whole game of the house rules, saved
    for box in ("ones", "twos", "chance"):
        game.roll()
        game.score(box)
    (tmp_path / "save.json").write_text(game.to_json())
    review = [*CLI, "review", str(tmp_path / "save.json"), "--data", data, "--json"]
    refused = subprocess.run(review, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "give their file with --rules" in refused.stderr
    reviewed = subprocess.run([*review, "--rules", path], capture_output=True, text=True, timeout=120)
    assert reviewed.returncode == 0 and json.loads(reviewed.stdout)["players"], reviewed.stderr
    port = free_port()
    with (
        started(quiet_serve(port, data, "--rules", path), port, tmp_path / "serve.log"),
        urllib.request.urlopen(f"http://127.0.0.1:{port}/api/rules", timeout=10) as r,
    ):
        served = json.load(r)
    assert "tiny-house" in json.dumps(served)


DOC = Path(__file__).parent.parent / "docs" / "house-rules.md"


def test_the_documented_files_and_refusals_are_what_the_program_reads_and_says(tmp_path):
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", text, re.S)
    assert blocks[0] == "".join(EXAMPLE.read_text(encoding="utf-8").partition("\nname")[1:]).lstrip("\n")
    for i, block in enumerate(blocks):
        assert isinstance(rule_files.resolve(write(tmp_path, block, f"doc{i}.toml")), rules.RuleSet)
    said = re.search(r"```text\n(.*?)```", text, re.S).group(1).splitlines()
    files = {
        "sheet[2]": 'name = "h"\nsheet = ["ones", "twos", {id = "chance", kind = "run"}]\n',
        "colour": 'name = "h"\ncolour = "red"\n',
        "built-in": 'name = "penta"\n',
    }
    for line in said:
        key = next(k for k in files if k in line)
        (tmp_path / "house.toml").write_text(files[key], encoding="utf-8")
        done = run("advise", "--rules", str(tmp_path / "house.toml"), "1", "2", "3", "4", "5")
        assert one_line(done, code=2) == line.replace("house.toml", str(tmp_path / "house.toml"))


def test_a_file_name_with_a_line_break_is_shown_as_its_escape(tmp_path):
    path = write(tmp_path, "name = 1\n", "bad\nname.toml")
    with pytest.raises(rule_files.RulesFileError) as refused:
        rule_files.resolve(path)
    assert "\n" not in str(refused.value) and "bad?name.toml: name:" in str(refused.value)
    os.remove(path)
    with pytest.raises(rule_files.RulesFileError, match="No such file") as missing:
        rule_files.resolve(path)
    assert "\n" not in str(missing.value)
