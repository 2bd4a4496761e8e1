"""The rules of Penta and its relatives: the single source of truth for scoring.

A rule set is data (:class:`RuleSet`): a definition with switches, looked up by name in :data:`REGISTRY`.
The scoring itself is one plain function, :func:`score_options`, written so that Numba can compile it: the
solver, the advisor and the game all call it (compiled or not), so they cannot disagree on a rule.

Decisions where the rules text is terse are in ``docs/rules-decisions.md``.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from collections.abc import Iterable, Sequence

import numpy as np

from pentadice.i18n import N_  # marks the names and messages for the catalogue (translated where shown)

# Box ids, in score-sheet order. Bit ``i`` of a box mask stands for ``BOX_IDS[i]``.
BOX_IDS: tuple[str, ...] = (
    "ones",
    "twos",
    "threes",
    "fours",
    "fives",
    "sixes",
    "three_of_a_kind",
    "four_of_a_kind",
    "full_house",
    "small_straight",
    "large_straight",
    "chance",
    "penta",
)
N_BOXES = len(BOX_IDS)
ALL_BOXES = (1 << N_BOXES) - 1
UPPER_MASK = 0b111111  # ones .. sixes
LOWER_MASK = ALL_BOXES & ~UPPER_MASK & ~(1 << 12)  # three_of_a_kind .. chance
BOX_INDEX = {box: i for i, box in enumerate(BOX_IDS)}
(
    ONES,
    TWOS,
    THREES,
    FOURS,
    FIVES,
    SIXES,
    THREE_KIND,
    FOUR_KIND,
    FULL_HOUSE,
    SMALL_STRAIGHT,
    LARGE_STRAIGHT,
    CHANCE,
    PENTA,
) = range(N_BOXES)

BOX_NAMES_EN = {
    "ones": N_("Ones"),
    "twos": N_("Twos"),
    "threes": N_("Threes"),
    "fours": N_("Fours"),
    "fives": N_("Fives"),
    "sixes": N_("Sixes"),
    "three_of_a_kind": N_("Three of a kind"),
    "four_of_a_kind": N_("Four of a kind"),
    "full_house": N_("Full house"),
    "small_straight": N_("Small straight"),
    "large_straight": N_("Large straight"),
    "chance": N_("Chance"),
    "penta": N_("Penta"),
}

# Other names people type for the boxes (the ids and the rule set's display names are always understood).
BOX_ALIASES = {
    "ones": ("aces", "1s"),
    "twos": ("2s",),
    "threes": ("3s",),
    "fours": ("4s",),
    "fives": ("5s",),
    "sixes": ("6s",),
    "three_of_a_kind": ("3k", "3ok", "3oak", "3kind", "threekind", "toak"),
    "four_of_a_kind": ("4k", "4ok", "4oak", "4kind", "fourkind", "foak"),
    "full_house": ("fh", "full"),
    "small_straight": ("ss", "sm", "small", "smstraight", "sstraight"),
    "large_straight": ("ls", "lg", "large", "lgstraight", "lstraight"),
    "chance": ("ch",),
    "penta": (),
}
BONUS_ID = "penta_bonus"  # the sheet's key for the bonus points of five of a kinds, whatever the rule set calls it
NO_SCORE_MESSAGE = N_("No open box scores: you must sacrifice one")  # the rules' words, when every legal box scores 0


class UnknownBox(ValueError):
    """A box name that the rule set does not know, or a box the game does not have."""


def name_key(text: str) -> str:
    """A box name reduced for matching: any case, without spaces, ``-`` or ``_`` (``Full-House`` -> ``fullhouse``)."""
    return "".join(ch for ch in text.casefold() if ch not in " _-\t")


JOKER_NONE, JOKER_FREE, JOKER_FORCED = 0, 1, 2  # as the compiled code reads them (P_JOKER)


class Joker(enum.StrEnum):
    """How a five of a kind rolled with the Penta (Yahtzee) box filled may be placed (see :class:`RuleSet`)."""

    NONE = "none"
    FREE = "free"
    FORCED = "forced"

    @property
    def code(self) -> int:
        """The mode as the compiled code reads it."""
        return {Joker.NONE: JOKER_NONE, Joker.FREE: JOKER_FREE, Joker.FORCED: JOKER_FORCED}[self]


JOKER_MODES = {j.value: j.code for j in Joker}

# Layout of the integer parameter vector that the compiled code reads (see RuleSet.params).
(
    P_DICE,
    P_ROLLS,
    P_BOXES,
    P_UPPER_THRESHOLD,
    P_UPPER_BONUS,
    P_PENTA_POINTS,
    P_PENTA_BONUS,
    P_JOKER,
    P_JOKER_NEEDS_FULL,
    P_FULL_HOUSE,
    P_SMALL_STRAIGHT,
    P_LARGE_STRAIGHT,
    P_PENTA_REPEAT,
    N_PARAMS,
) = range(14)


@dataclasses.dataclass(frozen=True)
class RuleSet:
    """One rule set: a definition with switches, never special cases in code.

    ``penta_bonus`` is paid for each further five of a kind while the Penta box holds points (50).
    ``joker`` (:class:`Joker`; its text is accepted) is ``forced`` (the Penta placement order: upper box of
    the face, else a lower box, else an upper box at 0), ``free`` (the lower-box scores apply when the upper
    box of the face is filled, and the roll may go in any open box) or ``none``. ``joker_needs_full`` (a name
    kept for the tables' metadata) makes the joker apply only while the Penta box holds points (Penta);
    otherwise any filled Penta box (even at 0) is enough.
    ``penta_repeat`` (Kiriki): while the Penta box holds points, each further five of a kind may be added to
    it (``penta_points`` more) instead of filling a box; that turn fills nothing, so the game gains a turn.
    ``dice``, ``rolls`` and ``boxes`` shrink the game for the brute-force cross-checks.
    """

    name: str
    title: str
    dice: int = 5
    rolls: int = 3
    boxes: tuple[str, ...] = BOX_IDS
    upper_threshold: int = 63
    upper_bonus: int = 35
    penta_points: int = 50
    penta_bonus: int = 100
    joker: Joker = Joker.FORCED
    joker_needs_full: bool = True
    full_house_points: int = 25
    small_straight_points: int = 30
    large_straight_points: int = 40
    penta_repeat: bool = False
    box_names: tuple[tuple[str, str], ...] = tuple(BOX_NAMES_EN.items())

    def __post_init__(self) -> None:
        if not 1 <= self.dice <= 5:
            raise ValueError(f"dice must be 1..5, not {self.dice}")
        if not 1 <= self.rolls <= 3:
            raise ValueError(f"rolls must be 1..3, not {self.rolls}")
        if not 0 <= self.upper_threshold <= 63:
            raise ValueError(f"upper_threshold must be 0..63, not {self.upper_threshold}")
        if self.joker not in JOKER_MODES:
            raise ValueError(f"joker must be one of {sorted(JOKER_MODES)}, not {self.joker!r}")
        object.__setattr__(self, "joker", Joker(self.joker))  # "free" given as text is Joker.FREE
        unknown = [b for b in self.boxes if b not in BOX_INDEX]
        if unknown or not self.boxes:
            raise ValueError(f"unknown box ids: {unknown}")

    @functools.cached_property
    def box_mask(self) -> int:
        """Bit mask of the boxes this game has."""
        return sum(1 << BOX_INDEX[b] for b in self.boxes)

    def box_name(self, box: str) -> str:
        """Display name of a box under this rule set (Kiriki calls the Penta box Kiriki)."""
        return dict(self.box_names)[box]

    @property
    def bonus_name(self) -> str:
        """The bonus for further five of a kinds in words: "Penta bonus", "Yahtzee bonus"."""
        return f"{self.box_name('penta')} bonus"

    @functools.cached_property
    def _names(self) -> dict[str, str]:
        """Every accepted name (see :func:`name_key`) -> box id, or :data:`BONUS_ID` for the bonus."""
        names: dict[str, str] = {}
        for box in BOX_IDS:
            for name in (box, BOX_NAMES_EN[box], self.box_name(box), *BOX_ALIASES[box]):
                names[name_key(name)] = box
        if self.penta_bonus:
            for name in (BONUS_ID, "bonus", self.bonus_name):
                names[name_key(name)] = BONUS_ID
        return names

    def parse_box(self, text: str, bonus: bool = False) -> str:
        """The box id a player means: an id or a display name in any case, with spaces, ``-`` or ``_`` or none
        (``Full house``, ``full-house``, ``FULL_HOUSE``, ``fullhouse``), a short form (``fh``, ``3k``, ``ss``),
        or the rule set's own name of the five-of-a-kind box (``yahtzee``, ``kiriki``). With ``bonus``, the
        bonus key (``penta_bonus``, ``bonus``, ``yahtzee bonus``) is understood too and returns
        :data:`BONUS_ID`. :class:`UnknownBox` otherwise."""
        key = name_key(text)
        box = self._names.get(key)
        if box == BONUS_ID and not bonus:
            box = None
        if box is None and bonus and not self.penta_bonus and key in (name_key(BONUS_ID), "bonus"):
            raise UnknownBox(f"{self.title} pays no bonus for further {self.box_name('penta')}s")
        if box is None:
            also = f" (and {BONUS_ID})" if bonus and self.penta_bonus else ""
            raise UnknownBox(f"unknown box {text.strip()[:40]!r}; boxes: {' '.join(self.boxes)}{also}")
        if box != BONUS_ID and box not in self.boxes:
            raise UnknownBox(f"{self.title} has no {self.box_name(box)} box")
        return box

    def names_help(self) -> str:
        """The box ids for a help text, each with its short forms (any case, ``-``/``_``/space or none)."""
        out = []
        for b in self.boxes:
            own = name_key(self.box_name(b))
            short = [a for a in (*BOX_ALIASES[b][:3], own) if a not in (b, name_key(b))]
            out.append(f"{b} ({', '.join(dict.fromkeys(short))})" if short else b)
        return ", ".join(out)

    def params(self) -> np.ndarray:
        """The rule set as the int64 vector that compiled code reads (layout: the ``P_*`` constants)."""
        return self._params.copy()

    @functools.cached_property
    def _params(self) -> np.ndarray:
        p = np.zeros(N_PARAMS, dtype=np.int64)
        p[P_DICE] = self.dice
        p[P_ROLLS] = self.rolls
        p[P_BOXES] = self.box_mask
        p[P_UPPER_THRESHOLD] = self.upper_threshold
        p[P_UPPER_BONUS] = self.upper_bonus
        p[P_PENTA_POINTS] = self.penta_points
        p[P_PENTA_BONUS] = self.penta_bonus
        p[P_JOKER] = self.joker.code
        p[P_JOKER_NEEDS_FULL] = int(self.joker_needs_full)
        p[P_FULL_HOUSE] = self.full_house_points
        p[P_SMALL_STRAIGHT] = self.small_straight_points
        p[P_LARGE_STRAIGHT] = self.large_straight_points
        p[P_PENTA_REPEAT] = int(self.penta_repeat)
        return p

    def reduced(self, **changes: object) -> RuleSet:
        """A smaller game with the same rules (fewer dice, rolls or boxes), for cross-checks."""
        return dataclasses.replace(self, **changes)


PENTA_RULES = RuleSet("penta", "Penta")
YAHTZEE_NAMES = tuple({**BOX_NAMES_EN, "penta": "Yahtzee"}.items())
REGISTRY: dict[str, RuleSet] = {
    rs.name: rs
    for rs in (
        PENTA_RULES,
        RuleSet("yahtzee", N_("Yahtzee, free joker"), joker="free", joker_needs_full=False, box_names=YAHTZEE_NAMES),
        RuleSet(
            "yahtzee+forced-joker",
            N_("Yahtzee, forced joker"),
            joker="forced",
            joker_needs_full=False,
            box_names=YAHTZEE_NAMES,
        ),
        RuleSet("yahtzee+no-joker", N_("Yahtzee without joker"), joker="none", box_names=YAHTZEE_NAMES),
        RuleSet(
            "yahtzee+no-bonus",
            N_("Yahtzee without joker or bonus"),
            joker="none",
            penta_bonus=0,
            box_names=YAHTZEE_NAMES,
        ),
        RuleSet(
            "kiriki",
            "Kiriki",
            joker="none",
            penta_bonus=0,
            penta_repeat=True,
            box_names=tuple({**BOX_NAMES_EN, "penta": "Kiriki"}.items()),
        ),
    )
}
DEFAULT_RULES = "penta"


class UnknownRules(ValueError):
    """A rule-set name that the registry does not hold."""


def get_rules(name: str) -> RuleSet:
    """The rule set registered under ``name``."""
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(REGISTRY)
        raise UnknownRules(f"unknown rule set {name!r}; known: {known}") from None


def penta_filled(p: np.ndarray, open_mask: int) -> bool:
    """Whether the game has a Penta box and it is filled (with any score)."""
    return (open_mask >> PENTA) & 1 == 0 and (p[P_BOXES] >> PENTA) & 1 == 1


def joker_applies(p: np.ndarray, counts: np.ndarray, open_mask: int, penta_scored: int) -> bool:
    """Whether these dice are a joker: all alike, with the Penta box filled as the rule set requires.

    The forced joker always applies then; the free one only once the upper box of the face is filled.
    """
    face = -1
    for f in range(6):
        if counts[f] == p[P_DICE]:
            face = f
    if face < 0 or not penta_filled(p, open_mask) or p[P_JOKER] == JOKER_NONE:
        return False
    if penta_scored == 0 and p[P_JOKER_NEEDS_FULL] == 1:
        return False
    return p[P_JOKER] == JOKER_FORCED or (open_mask >> face) & 1 == 0


def score_options(p: np.ndarray, counts: np.ndarray, open_mask: int, penta_scored: int, points: np.ndarray) -> int:
    """Which boxes may take these dice now, and for how many points.

    ``p`` is :meth:`RuleSet.params`, ``counts[f]`` the number of dice showing face ``f + 1``, ``open_mask``
    the open boxes, ``penta_scored`` 1 when the Penta box holds points (50; in Kiriki 50 or more). Fills
    ``points[b]`` with the points of box ``b`` (the upper bonus excluded) or -1 where the box may not take the
    roll; returns the Penta bonus earned by the roll. Plain Python that Numba compiles: the solver, the
    advisor and the game all call this one function.
    """
    n = p[P_DICE]
    total = 0
    top = 0
    face = 0
    pairs = 0
    triples = 0
    run = 0
    longest = 0
    for f in range(6):
        c = counts[f]
        total += (f + 1) * c
        if c > top:
            top = c
            face = f
        if c == 2:
            pairs += 1
        if c == 3:
            triples += 1
        if c > 0:
            run += 1
            if run > longest:
                longest = run
        else:
            run = 0
    all_same = top == n
    scored_and_filled = penta_scored == 1 and penta_filled(p, open_mask)

    bonus = p[P_PENTA_BONUS] if all_same and scored_and_filled else 0
    joker = joker_applies(p, counts, open_mask, penta_scored)

    # Normal scores.
    for b in range(6):
        points[b] = (b + 1) * counts[b]
    points[THREE_KIND] = total if top >= 3 else 0
    points[FOUR_KIND] = total if top >= 4 else 0
    points[FULL_HOUSE] = p[P_FULL_HOUSE] if triples == 1 and pairs == 1 else 0
    points[SMALL_STRAIGHT] = p[P_SMALL_STRAIGHT] if longest >= 4 else 0
    points[LARGE_STRAIGHT] = p[P_LARGE_STRAIGHT] if longest >= 5 else 0
    points[CHANCE] = total
    points[PENTA] = p[P_PENTA_POINTS] if all_same else 0

    allowed = open_mask
    if joker:
        points[FULL_HOUSE] = p[P_FULL_HOUSE]
        points[SMALL_STRAIGHT] = p[P_SMALL_STRAIGHT]
        points[LARGE_STRAIGHT] = p[P_LARGE_STRAIGHT]
        if p[P_JOKER] == JOKER_FORCED:
            if (open_mask >> face) & 1 == 1:
                allowed = 1 << face
            elif open_mask & LOWER_MASK != 0:
                allowed = open_mask & LOWER_MASK
            else:
                allowed = open_mask & UPPER_MASK  # they score 0: the face's own box is filled
    if all_same and scored_and_filled and p[P_PENTA_REPEAT] == 1:
        allowed |= 1 << PENTA  # Kiriki: add this five of a kind to the box, filling nothing
    for b in range(N_BOXES):
        if (allowed >> b) & 1 == 0:
            points[b] = -1
    return bonus


def upper_bonus(p: np.ndarray, subtotal: int, added: int) -> int:
    """The upper bonus paid when ``added`` upper points take the upper subtotal to the threshold (compilable)."""
    if subtotal < p[P_UPPER_THRESHOLD] and subtotal + added >= p[P_UPPER_THRESHOLD]:
        return p[P_UPPER_BONUS]
    return 0


def score_table(rs: RuleSet) -> np.ndarray:
    """Per hand (``dice.tables(rs.dice)`` order): its points in every box with all boxes open, and in the last
    column 1 when those points hold in every state, i.e. the dice are not all alike (only a roll of all alike
    dice meets the Penta box's bonus and joker). The turn code reads such hands from here.
    """
    return _score_table(rs).copy()


@functools.cache
def _score_table(rs: RuleSet) -> np.ndarray:
    from pentadice import dice

    t = dice.tables(rs.dice)
    p = rs.params()
    out = np.empty((t.n_hands, N_BOXES + 1), dtype=np.int64)
    for h in range(t.n_hands):
        score_options(p, t.counts[h], rs.box_mask, 0, out[h, :N_BOXES])
        out[h, N_BOXES] = 0 if t.counts[h].max() == rs.dice else 1
    return out


# ----------------------------------------------------------------------------------------------------------
# Friendly wrappers for Python callers (the advisor's text, the game, the tests).


def dice_counts(dice: Iterable[int]) -> np.ndarray:
    """Face counts of a roll: ``counts[f]`` dice show ``f + 1``."""
    counts = np.zeros(6, dtype=np.int64)
    for d in dice:
        if not 1 <= d <= 6:
            raise ValueError(f"a die shows 1 to 6, not {d}")
        counts[d - 1] += 1
    return counts


def mask_of(boxes: Iterable[str]) -> int:
    """Bit mask of a collection of box ids."""
    mask = 0
    for b in boxes:
        if b not in BOX_INDEX:
            raise ValueError(f"unknown box id {b!r}; box ids: {' '.join(BOX_IDS)}")
        mask |= 1 << BOX_INDEX[b]
    return mask


def boxes_of(mask: int) -> list[str]:
    """Box ids whose bits are set in ``mask``, in sheet order."""
    return [b for i, b in enumerate(BOX_IDS) if (mask >> i) & 1]


# The functions above that Numba compiles (with the turn functions): they call only each other.
COMPILED = (penta_filled, joker_applies, score_options, upper_bonus)


def legal_scores(
    rules: RuleSet, dice: Sequence[int], open_boxes: Iterable[str], penta_scored: bool
) -> tuple[dict[str, int], int]:
    """The boxes that may take ``dice`` and their points, and the Penta bonus the roll earns.

    ``open_boxes`` are the boxes still open, ``penta_scored`` whether the Penta box holds points (not open, not 0).
    """
    if len(dice) != rules.dice:
        raise ValueError(f"{rules.title} uses {rules.dice} dice, got {len(dice)}")
    points = np.empty(N_BOXES, dtype=np.int64)
    open_mask = mask_of(open_boxes) & rules.box_mask
    bonus = score_options(rules.params(), dice_counts(dice), open_mask, int(penta_scored), points)
    return {BOX_IDS[b]: int(points[b]) for b in range(N_BOXES) if points[b] >= 0}, int(bonus)


def upper_bonus_earned(rules: RuleSet, subtotal: int, added: int) -> int:
    """The upper bonus paid when ``added`` upper points take the subtotal from ``subtotal`` to the threshold."""
    return int(upper_bonus(rules._params, subtotal, added))
