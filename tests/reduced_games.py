"""The reduced games the tests solve, by name: one registry, so that a brute force, a distribution, a moment and a
chances check of "penta, 3 dice" all mean the same game. Each game is small enough to solve in a second or so and
keeps a rule of its family reachable (the joker paths need all dice alike, which few dice make common; the upper
bonus is reachable under its threshold); a test module picks the games it needs with :func:`pick`.

The games named after a rule set (``"penta"``, ``"yatzy"``, ...) in :data:`AS_RULE_SETS` stand for that rule
set in a command or server started by a test (tests/reduced_pentadice.py registers one under the rule set's name),
so that a real ``pentadice`` process solves, builds and serves a table of a few MB rather than the full game."""

from __future__ import annotations

from pentadice.game import rules


def of(name: str, **changes: object) -> rules.RuleSet:
    """The registered rule set ``name`` with fewer dice, rolls or open boxes (``boxes``: those left open)."""
    return rules.get_rules(name).reduced(**changes)


def on_sheet(name: str, ids: tuple[str, ...], **changes: object) -> rules.RuleSet:
    """The registered rule set ``name`` on a sheet of only the boxes ``ids`` (2**len masks: a table of a few MB),
    every one of them open."""
    rs = rules.get_rules(name)
    sheet = tuple(b for b in rs.sheet if b.id in ids)
    return rs.reduced(sheet=sheet, boxes=tuple(b.id for b in sheet), **changes)


def maxi_boxes(*ids: str, **changes: object) -> rules.RuleSet:
    """Maxi Yatzy (6 dice) on a sheet of the boxes ``ids``: its own reduced games keep its 2**20 masks, too many
    for the target and win tables, so the 6-dice checks use a sheet of these boxes."""
    maxi = rules.get_rules("maxi-yatzy")
    sheet = tuple(b for b in maxi.sheet if b.id in ids)
    return maxi.reduced(sheet=sheet, boxes=(), **changes)


# Boxes of the small Maxi Yatzy game: two upper boxes (the bonus is reachable), pairs, three pairs, houses, a
# straight, chance and six alike; threshold 50 (64 lanes, as Penta's: the kernels' common build).
SMALL_MAXI_BOXES = ("fives", "sixes", "one_pair", "three_pairs", "tower", "full_straight", "chance", "maxi_yatzy")
SMALL_MAXI_THRESHOLD = 50
PENTA_8_BOXES = ("ones", "threes", "fives", "sixes", "full_house", "large_straight", "chance", "penta")

GAMES: dict[str, rules.RuleSet] = {
    # Penta: the joker (all dice alike), the Penta box's bonus, one to three rolls, one to six dice.
    "penta, 1 die": of("penta", dice=1, boxes=("ones", "twos", "sixes", "chance"), upper_threshold=7),
    "penta, 2 dice, 2 rolls, 3 boxes": of(
        "penta", dice=2, rolls=2, boxes=("twos", "chance", "penta"), upper_threshold=4
    ),
    "penta, 3 dice": of("penta", dice=3, boxes=("ones", "threes", "full_house", "penta"), upper_threshold=8),
    "penta, 2 dice, lower boxes": of(
        "penta", dice=2, boxes=("twos", "three_of_a_kind", "small_straight", "chance", "penta"), upper_threshold=4
    ),
    "penta, 2 dice, lower boxes, threshold 63": of(
        "penta", dice=2, boxes=("twos", "three_of_a_kind", "small_straight", "chance", "penta"), upper_threshold=63
    ),
    "penta, 4 dice, 1 roll": of(
        "penta", dice=4, rolls=1, boxes=("fours", "small_straight", "full_house", "penta"), upper_threshold=12
    ),
    # A threshold above 63: 80 lanes (fives and sixes of six dice reach 66).
    "penta, 6 dice, 80 lanes": of("penta", dice=6, rolls=2, boxes=("fives", "sixes", "penta"), upper_threshold=65),
    "penta, 8 boxes": of("penta", boxes=PENTA_8_BOXES),
    "penta, 6 boxes": on_sheet(
        "penta", ("fives", "sixes", "three_of_a_kind", "full_house", "chance", "penta"), upper_threshold=20
    ),
    # Yahtzee's three joker conventions.
    "yahtzee free joker, 2 dice": of(
        "yahtzee", dice=2, boxes=("ones", "twos", "full_house", "chance", "penta"), upper_threshold=5
    ),
    "yahtzee forced joker, 3 dice, 2 rolls": of(
        "yahtzee+forced-joker", dice=3, rolls=2, boxes=("fives", "sixes", "four_of_a_kind", "penta"), upper_threshold=20
    ),
    "yahtzee free joker, 3 dice, 2 rolls": of(
        "yahtzee", dice=3, rolls=2, boxes=("ones", "threes", "full_house", "penta"), upper_threshold=6
    ),
    "yahtzee no joker, 2 dice": of(
        "yahtzee+no-joker", dice=2, boxes=("ones", "large_straight", "chance", "penta"), upper_threshold=2
    ),
    # Kiriki: the Kiriki box scored again and again (a state comes back to itself).
    "kiriki, 2 dice": of("kiriki", dice=2, boxes=("ones", "twos", "chance", "penta"), upper_threshold=4),
    "kiriki, 2 dice, 2 rolls, lower boxes": of(
        "kiriki", dice=2, rolls=2, boxes=("three_of_a_kind", "full_house", "sixes", "penta"), upper_threshold=12
    ),
    "kiriki, 2 dice, 3 boxes": of("kiriki", dice=2, boxes=("ones", "chance", "penta"), upper_threshold=2),
    "kiriki, 8 boxes": of("kiriki", boxes=PENTA_8_BOXES),
    # Yatzy: no Penta box (one flag), boxes that score the sum of the dice they use, straights as sets of faces.
    "yatzy, 2 dice, 2 rolls, 3 boxes": of(
        "yatzy", dice=2, rolls=2, boxes=("twos", "one_pair", "yatzy"), upper_threshold=4
    ),
    "yatzy, 2 dice": of("yatzy", dice=2, boxes=("ones", "twos", "one_pair", "chance", "yatzy"), upper_threshold=4),
    "yatzy, 3 dice, ones and threes": of(
        "yatzy", dice=3, boxes=("ones", "threes", "one_pair", "three_of_a_kind", "yatzy"), upper_threshold=8
    ),
    "yatzy, 3 dice": of("yatzy", dice=3, boxes=("threes", "one_pair", "three_of_a_kind", "yatzy"), upper_threshold=9),
    "yatzy, 4 dice, 2 rolls": of(
        "yatzy", dice=4, rolls=2, boxes=("sixes", "two_pairs", "four_of_a_kind", "chance"), upper_threshold=18
    ),
    "yatzy, 4 dice, 2 rolls, ones and threes": of(
        "yatzy", dice=4, rolls=2, boxes=("ones", "threes", "two_pairs", "four_of_a_kind", "yatzy"), upper_threshold=6
    ),
    "yatzy, 4 dice, pairs and kinds": of(
        "yatzy", dice=4, boxes=("twos", "one_pair", "two_pairs", "three_of_a_kind", "four_of_a_kind"), upper_threshold=4
    ),
    "yatzy, 5 dice, 1 roll": of(
        "yatzy", rolls=1, boxes=("sixes", "one_pair", "two_pairs", "full_house", "yatzy"), upper_threshold=12
    ),
    "yatzy, 5 dice, 2 rolls, straights": of(
        "yatzy",
        rolls=2,
        boxes=("fives", "small_straight", "large_straight", "full_house", "chance"),
        upper_threshold=10,
    ),
    "yatzy, 5 dice, 3 rolls": of("yatzy", boxes=("ones", "two_pairs", "full_house", "yatzy"), upper_threshold=3),
    "yatzy, 7 boxes": on_sheet(
        "yatzy", ("fives", "sixes", "one_pair", "two_pairs", "full_house", "chance", "yatzy"), upper_threshold=25
    ),
    "yatzy, 8 boxes": of(
        "yatzy", boxes=("ones", "fours", "fives", "sixes", "two_pairs", "small_straight", "full_house", "yatzy")
    ),
    # Maxi Yatzy: 6 dice, combinations of all six dice, and smaller ones that more matching dice supply.
    "maxi-yatzy, 6 dice, 3 rolls, houses": of(
        "maxi-yatzy", boxes=("twos", "three_pairs", "super_house", "tower"), upper_threshold=2
    ),
    "maxi-yatzy, 6 dice, 2 rolls, straight": of(
        "maxi-yatzy", rolls=2, boxes=("sixes", "two_pairs", "full_straight", "maxi_yatzy"), upper_threshold=12
    ),
    "maxi-yatzy, 6 dice, 2 rolls, tower": of(
        "maxi-yatzy", dice=6, rolls=2, boxes=("twos", "three_pairs", "tower", "maxi_yatzy"), upper_threshold=6
    ),
    "maxi-yatzy, 6 dice, 1 roll": of(
        "maxi-yatzy",
        rolls=1,
        boxes=("threes", "one_pair", "three_of_a_kind", "five_of_a_kind", "full_house", "small_straight"),
        upper_threshold=9,
    ),
    "maxi-yatzy, 5 dice, 2 rolls, straights and kinds": of(
        "maxi-yatzy",
        dice=5,
        rolls=2,
        boxes=("ones", "four_of_a_kind", "large_straight", "chance", "maxi_yatzy"),
        upper_threshold=2,
    ),
    # 80 lanes (the kernels' other compiled build) on a sheet of three boxes: Maxi Yatzy's own sheet kept 2**20
    # masks of 80 lanes for them (half a minute a test).
    "maxi-yatzy, 6 dice, threshold above 64": maxi_boxes("fives", "sixes", "super_house", rolls=2, upper_threshold=65),
    "maxi boxes, 6 dice, 2 rolls, sixes": maxi_boxes(
        "sixes", "three_pairs", "tower", "maxi_yatzy", rolls=2, upper_threshold=12
    ),
    "maxi boxes, 6 dice, 2 rolls, twos": maxi_boxes(
        "twos", "three_pairs", "tower", "maxi_yatzy", rolls=2, upper_threshold=8
    ),
    "maxi boxes, 80 lanes, 4 boxes": maxi_boxes(
        "fives", "sixes", "three_pairs", "maxi_yatzy", rolls=2, upper_threshold=75
    ),
    # Threshold 75 (80 lanes), reachable: fours, fives and sixes reach 90.
    "maxi boxes, 80 lanes": maxi_boxes(
        "fours", "fives", "sixes", "three_pairs", "super_house", "tower", "chance", "maxi_yatzy"
    ),
    "maxi-yatzy, 9 boxes": maxi_boxes(
        "ones", "twos", "threes", "fours", "fives", "sixes", "three_pairs", "tower", "maxi_yatzy"
    ),
    "maxi-yatzy, 8 boxes": on_sheet("maxi-yatzy", SMALL_MAXI_BOXES, upper_threshold=SMALL_MAXI_THRESHOLD),
    # Threshold 75, its scoring, on eleven of its boxes: a table of 2**11 masks.
    "maxi-yatzy, 11 boxes": on_sheet(
        "maxi-yatzy",
        (
            *("fours", "fives", "sixes", "two_pairs", "three_pairs", "five_of_a_kind", "full_straight"),
            *("full_house", "tower", "chance", "maxi_yatzy"),
        ),
    ),
}

# Every joker convention (Penta's, free, forced, none) on small Penta and Yahtzee games, one to three rolls: the
# games most checks of a pass against a brute force start from.
JOKERS = (
    "penta, 3 dice",
    "penta, 2 dice, lower boxes",
    "yahtzee free joker, 2 dice",
    "yahtzee forced joker, 3 dice, 2 rolls",
    "yahtzee no joker, 2 dice",
    "penta, 4 dice, 1 roll",
)

# What a command or server started by a test solves under a rule set's name (tests/reduced_pentadice.py).
AS_RULE_SETS: dict[str, str] = {
    "penta": "penta, 6 boxes",
    "yatzy": "yatzy, 7 boxes",
    "maxi-yatzy": "maxi-yatzy, 8 boxes",
    "kiriki": "kiriki, 2 dice, 3 boxes",
}


def pick(*names: str) -> dict[str, rules.RuleSet]:
    """The games ``names`` of :data:`GAMES`, in that order (a test module's parametrization)."""
    return {name: GAMES[name] for name in names}


def as_rule_set(name: str) -> rules.RuleSet:
    """The reduced game that stands for the registered rule set ``name`` in a test's commands and servers."""
    return GAMES[AS_RULE_SETS[name]]
