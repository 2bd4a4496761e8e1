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
import shlex
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from pentadice.support.i18n import N_  # marks the names and messages for the catalogue (translated where shown)

# Scoring kinds: how a box scores a roll. A box of a score sheet is a kind with its arguments (:class:`Box`).
(
    K_FACE,  # the sum of the dice showing face ``a`` (an upper box)
    K_KIND_TOTAL,  # the sum of all the dice when ``a`` of them are alike (Penta's three and four of a kind)
    K_KIND_SUM,  # ``a`` dice alike, the highest such face: the sum of those ``a`` dice
    K_PAIRS,  # ``a`` pairs of different faces (``alike``: or of one face), the highest: the sum of those ``2a`` dice
    K_HOUSE,  # ``a`` dice of one face and ``b`` of another (``alike``: or of the same), the highest: their sum
    K_FULL_HOUSE,  # exactly three alike and two alike: ``points`` (Penta's full house; a joker scores it)
    K_RUN,  # ``a`` faces in a row among the dice: ``points`` (a joker scores it)
    K_STRAIGHT,  # every face of the bit set ``a`` (bit f: face f + 1) among the dice: ``points``
    K_CHANCE,  # the sum of all the dice
    K_ALL_ALIKE,  # every die alike: ``points``
    K_PENTA,  # every die alike: ``points``; the state remembers whether it holds them (bonus, joker, Kiriki)
) = range(11)
# Each kind's name as files and metadata write it (``K_KIND_TOTAL``: ``kind_total``).
KIND_NAMES: dict[int, str] = {v: k[2:].lower() for k, v in tuple(globals().items()) if k.startswith("K_")}
UPPER_KINDS = (K_FACE,)
FIXED_KINDS = (K_FULL_HOUSE, K_RUN, K_STRAIGHT)  # the boxes a joker fills at their points


ALIKE_KINDS = (K_PAIRS, K_HOUSE)  # the kinds whose groups may show one face where a sheet says so (Box.alike)


@dataclasses.dataclass(frozen=True)
class Box:
    """One box of a score sheet: its id and how it scores (a ``K_*`` kind with its arguments).

    ``alike`` (pairs and house boxes only): the groups may show the same face, so four alike are two pairs and
    five alike a full house (a Scandinavian house rule); by default they need different faces."""

    id: str
    kind: int
    a: int = 0
    b: int = 0
    points: int = 0
    alike: bool = False


def _faces(*faces: int) -> int:
    return sum(1 << (f - 1) for f in faces)


UPPER_IDS = ("ones", "twos", "threes", "fours", "fives", "sixes")  # the upper box of face f is UPPER_IDS[f - 1]
_UPPER = tuple(Box(box, K_FACE, f) for f, box in enumerate(UPPER_IDS, 1))
# The sheets (bit ``i`` of a box mask stands for the sheet's box ``i``).
PENTA_SHEET: tuple[Box, ...] = (
    *_UPPER,
    Box("three_of_a_kind", K_KIND_TOTAL, 3),
    Box("four_of_a_kind", K_KIND_TOTAL, 4),
    Box("full_house", K_FULL_HOUSE, points=25),
    Box("small_straight", K_RUN, 4, points=30),
    Box("large_straight", K_RUN, 5, points=40),
    Box("chance", K_CHANCE),
    Box("penta", K_PENTA, points=50),
)
# The Scandinavian sheets' straights: the five faces 1-5 and 2-6 (Maxi Yatzy adds 1-6).
_STRAIGHTS = (
    Box("small_straight", K_STRAIGHT, _faces(1, 2, 3, 4, 5), points=15),
    Box("large_straight", K_STRAIGHT, _faces(2, 3, 4, 5, 6), points=20),
)
YATZY_SHEET: tuple[Box, ...] = (
    *_UPPER,
    Box("one_pair", K_PAIRS, 1),
    Box("two_pairs", K_PAIRS, 2),
    Box("three_of_a_kind", K_KIND_SUM, 3),
    Box("four_of_a_kind", K_KIND_SUM, 4),
    *_STRAIGHTS,
    Box("full_house", K_HOUSE, 3, 2),
    Box("chance", K_CHANCE),
    Box("yatzy", K_ALL_ALIKE, points=50),
)
MAXI_YATZY_SHEET: tuple[Box, ...] = (
    *_UPPER,
    Box("one_pair", K_PAIRS, 1),
    Box("two_pairs", K_PAIRS, 2),
    Box("three_pairs", K_PAIRS, 3),
    Box("three_of_a_kind", K_KIND_SUM, 3),
    Box("four_of_a_kind", K_KIND_SUM, 4),
    Box("five_of_a_kind", K_KIND_SUM, 5),
    *_STRAIGHTS,
    Box("full_straight", K_STRAIGHT, _faces(1, 2, 3, 4, 5, 6), points=21),
    Box("full_house", K_HOUSE, 3, 2),
    Box("super_house", K_HOUSE, 3, 3),
    Box("tower", K_HOUSE, 4, 2),
    Box("chance", K_CHANCE),
    Box("maxi_yatzy", K_ALL_ALIKE, points=100),
)
SHEETS = (PENTA_SHEET, YATZY_SHEET, MAXI_YATZY_SHEET)
# Every box id any sheet uses, in the order of first use: what names are understood.
BOX_IDS: tuple[str, ...] = tuple(dict.fromkeys(b.id for s in SHEETS for b in s))

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
    "one_pair": N_("One pair"),
    "two_pairs": N_("Two pairs"),
    "three_pairs": N_("Three pairs"),
    "five_of_a_kind": N_("Five of a kind"),
    "full_straight": N_("Full straight"),
    "super_house": N_("Super house"),
    "tower": N_("Tower"),
    "yatzy": N_("Yatzy"),
    "maxi_yatzy": N_("Maxi Yatzy"),
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
    "one_pair": ("pair", "1p", "onepair"),
    "two_pairs": ("2p", "twopair"),
    "three_pairs": ("3p", "threepair"),
    "five_of_a_kind": ("5k", "5ok", "5oak", "5kind", "fivekind"),
    "full_straight": ("fs", "full_run"),
    "super_house": ("sh", "villa"),
    "tower": ("tw",),
    "yatzy": ("y",),
    "maxi_yatzy": ("maxi", "my"),
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

# Layout of the integer parameter vector that the compiled code reads (see RuleSet.params): these scalars, then
# the box of each face (-1: none; 6 entries from P_FACE_BOX), then BOX_FIELDS entries per box of the sheet from
# P_BOX_DATA: its kind, arguments ``a`` and ``b``, points, first successor row (see pentadice.solver.turn), and
# whether its groups may show one face (Box.alike).
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
    P_PENTA_REPEAT,
    P_N_BOXES,
    P_PENTA_BOX,
    P_UPPER_MASK,
    P_LOWER_MASK,
    P_N_ROWS,
    P_FACE_BOX,
) = range(16)
P_BOX_DATA = P_FACE_BOX + 6
BOX_FIELDS = 6
F_KIND, F_A, F_B, F_POINTS, F_ROW, F_ALIKE = range(BOX_FIELDS)
MAX_DICE = 6
MAX_BOXES = 20  # the largest sheet, Maxi Yatzy's: the page gives each box of a sheet a shortcut letter


@dataclasses.dataclass(frozen=True)
class RuleSet:
    """One rule set: a definition with switches, never special cases in code.

    ``sheet`` is the score sheet: its boxes (:class:`Box`, each a scoring kind with its arguments) in order; bit
    ``i`` of a box mask stands for ``sheet[i]``. ``boxes`` are the ids of the boxes in play (all of the sheet's
    unless a reduced game leaves some out; the masks keep the sheet's bits).
    The Penta box (kind ``K_PENTA``, at most one) is the one the state remembers as holding points or not:
    ``penta_bonus`` is paid for each further five of a kind while it holds points (50).
    ``joker`` (:class:`Joker`; its text is accepted) is ``forced`` (the Penta placement order: upper box of
    the face, else a lower box, else an upper box at 0), ``free`` (the lower-box scores apply when the upper
    box of the face is filled, and the roll may go in any open box) or ``none``. ``joker_needs_full`` (a name
    kept for the tables' metadata) makes the joker apply only while the Penta box holds points (Penta);
    otherwise any filled Penta box (even at 0) is enough.
    ``penta_repeat`` (Kiriki): while the Penta box holds points, each further five of a kind may be added to
    it (its points more) instead of filling a box; that turn fills nothing, so the game gains a turn.
    ``dice``, ``rolls`` and ``boxes`` shrink the game for the brute-force cross-checks. ``source``: the file a
    rule set of house rules was read from (:mod:`pentadice.game.rule_files`), which messages name.
    """

    name: str
    title: str
    dice: int = 5
    rolls: int = 3
    boxes: tuple[str, ...] = ()
    upper_threshold: int = 63
    upper_bonus: int = 35
    penta_bonus: int = 100
    joker: Joker = Joker.FORCED
    joker_needs_full: bool = True
    penta_repeat: bool = False
    box_names: tuple[tuple[str, str], ...] = ()
    sheet: tuple[Box, ...] = PENTA_SHEET
    source: str = dataclasses.field(default="", compare=False)  # the file house rules were read from ("": built in)

    def __post_init__(self) -> None:
        if not 1 <= self.dice <= MAX_DICE:
            raise ValueError(f"dice must be 1..{MAX_DICE}, not {self.dice}")
        if not 1 <= self.rolls <= 3:
            raise ValueError(f"rolls must be 1..3, not {self.rolls}")
        if not 0 <= self.upper_threshold <= 6 * MAX_DICE * 6:
            raise ValueError(f"upper_threshold must be 0..{6 * MAX_DICE * 6}, not {self.upper_threshold}")
        if self.joker not in JOKER_MODES:
            raise ValueError(f"joker must be one of {sorted(JOKER_MODES)}, not {self.joker!r}")
        object.__setattr__(self, "joker", Joker(self.joker))  # "free" given as text is Joker.FREE
        ids = [b.id for b in self.sheet]
        if len(set(ids)) != len(ids) or any(b not in BOX_NAMES_EN for b in ids) or not 1 <= len(ids) <= MAX_BOXES:
            raise ValueError(f"a sheet has 1 to {MAX_BOXES} boxes of distinct known ids, not {ids}")
        if sum(b.kind == K_PENTA for b in self.sheet) > 1:
            raise ValueError("a sheet has at most one Penta box")
        for b in self.sheet:  # an upper box's id names its face, on every sheet (a sheet's totals rely on it)
            if (b.kind == K_FACE) != (b.id in UPPER_IDS) or (b.kind == K_FACE and UPPER_IDS[b.a - 1] != b.id):
                raise ValueError(f"box {b.id!r}: the upper boxes are {', '.join(UPPER_IDS)}, of faces 1 to 6")
            if b.alike and b.kind not in ALIKE_KINDS:
                raise ValueError(f"box {b.id!r}: only a pairs or house box may let its groups show one face")
        if not self.boxes:
            object.__setattr__(self, "boxes", tuple(ids))
        unknown = [b for b in self.boxes if b not in ids]
        if unknown:
            raise ValueError(f"unknown box ids: {unknown}")
        if not self.box_names:
            object.__setattr__(self, "box_names", tuple((b, BOX_NAMES_EN[b]) for b in ids))

    @functools.cached_property
    def box_ids(self) -> tuple[str, ...]:
        """The sheet's box ids in order: bit ``i`` of a mask stands for ``box_ids[i]``."""
        return tuple(b.id for b in self.sheet)

    @property
    def rules_option(self) -> str:
        """What ``--rules`` takes for this rule set, for a command a message suggests: its name, or the file its
        house rules were read from (quoted for a shell)."""
        return shlex.quote(self.source) if self.source else self.name

    @property
    def n_boxes(self) -> int:
        """Boxes on the sheet: a table has ``2 ** n_boxes`` masks."""
        return len(self.sheet)

    @functools.cached_property
    def box_index(self) -> dict[str, int]:
        """Box id -> its bit."""
        return {b: i for i, b in enumerate(self.box_ids)}

    @functools.cached_property
    def box_mask(self) -> int:
        """Bit mask of the boxes this game has."""
        return sum(1 << self.box_index[b] for b in self.boxes)

    @functools.cached_property
    def upper_mask(self) -> int:
        """Bit mask of the upper boxes (one per face: their points count toward the upper bonus)."""
        return sum(1 << i for i, b in enumerate(self.sheet) if b.kind in UPPER_KINDS)

    @functools.cached_property
    def penta_box(self) -> int:
        """The bit of the Penta box (whose points the state remembers), or -1 when the sheet has none."""
        return next((i for i, b in enumerate(self.sheet) if b.kind == K_PENTA), -1)

    @property
    def penta_id(self) -> str | None:
        """The Penta box's id (``penta``), or None when the sheet has none."""
        return self.box_ids[self.penta_box] if self.penta_box >= 0 else None

    @property
    def all_alike_box(self) -> str:
        """The id of the box that all dice alike score (Penta, Yatzy, Maxi Yatzy)."""
        return next(b.id for b in self.sheet if b.kind in (K_PENTA, K_ALL_ALIKE))

    @functools.cached_property
    def unbounded(self) -> str | None:
        """Why a game of these rules has no bound on its turns nor its score, in words, or None (every rule set
        but Kiriki). What follows a game to its end needs that bound: the score distribution, the chances table
        and the win player's end game, which such a game does not have; the other modules ask this, not why."""
        if not self.penta_repeat or self.penta_box < 0 or self.penta_id is None:
            return None
        return (
            f"a five of a kind added to a filled {self.box_name(self.penta_id)} box repeats the turn, so the number"
            " of turns and the score have no bound"
        )

    @functools.cached_property
    def joker_boxes(self) -> tuple[tuple[str, int], ...]:
        """The boxes in play that a joker fills at their points (full house and straights: ``FIXED_KINDS``), in
        sheet order, each with those points: what the joker's note names, from the sheet itself."""
        return tuple((b.id, b.points) for b in self.sheet if b.kind in FIXED_KINDS and b.id in self.boxes)

    @property
    def penta_points(self) -> int:
        """The Penta box's points (0 without one)."""
        return self.sheet[self.penta_box].points if self.penta_box >= 0 else 0

    @property
    def n_flags(self) -> int:
        """2 when the state remembers whether the Penta box holds points, else 1: a table's first dimension."""
        return 2 if self.penta_box >= 0 else 1

    @property
    def table_shape(self) -> tuple[int, int, int]:
        """The value table's shape: ``(n_flags, 2 ** n_boxes, upper_threshold + 1)``."""
        return (self.n_flags, 1 << self.n_boxes, self.upper_threshold + 1)

    @property
    def lanes(self) -> int:
        """The solver's lanes: the capped subtotals 0..threshold, rounded up to whole blocks of 16, and at least
        64 (so that reduced games share the compiled code of the full ones: 64 lanes, or 80 for Maxi Yatzy)."""
        return max(64, -(-(self.upper_threshold + 1) // 16) * 16)

    def face_box(self, face: int) -> str | None:
        """The id of the upper box of ``face`` (1-6), or None."""
        return next((b.id for b in self.sheet if b.kind == K_FACE and b.a == face), None)

    def mask_of(self, boxes: Iterable[str]) -> int:
        """Bit mask of a collection of this sheet's box ids."""
        mask = 0
        for b in boxes:
            if b not in self.box_index:
                raise ValueError(f"unknown box id {b!r}; box ids: {' '.join(self.box_ids)}")
            mask |= 1 << self.box_index[b]
        return mask

    def boxes_of(self, mask: int) -> list[str]:
        """Box ids whose bits are set in ``mask``, in sheet order."""
        return [b for i, b in enumerate(self.box_ids) if (mask >> i) & 1]

    def box_name(self, box: str) -> str:
        """Display name of a box under this rule set (Kiriki calls the Penta box Kiriki)."""
        return dict(self.box_names).get(box) or BOX_NAMES_EN[box]

    @property
    def bonus_name(self) -> str:
        """The bonus for further five of a kinds in words: "Penta bonus", "Yahtzee bonus"."""
        return f"{self.box_name(self.penta_id or self.all_alike_box)} bonus"

    @functools.cached_property
    def _names(self) -> dict[str, str]:
        """Every accepted name (see :func:`name_key`) -> box id, or :data:`BONUS_ID` for the bonus."""
        names: dict[str, str] = {}
        for box in BOX_IDS:
            if box in self.box_index:
                continue
            for name in (box, BOX_NAMES_EN[box], *BOX_ALIASES[box]):
                names[name_key(name)] = box
        for box in self.box_ids:  # this sheet's own names win over another sheet's short forms
            for name in (box, BOX_NAMES_EN[box], self.box_name(box), *BOX_ALIASES[box]):
                names[name_key(name)] = box
        if self.penta_bonus and self.penta_box >= 0:
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
        has_bonus = self.penta_bonus and self.penta_box >= 0
        if box is None and bonus and not has_bonus and key in (name_key(BONUS_ID), "bonus"):
            raise UnknownBox(f"{self.title} pays no bonus for further {self.box_name(self.all_alike_box)}s")
        if box is None:
            also = f" (and {BONUS_ID})" if bonus and has_bonus else ""
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
    def n_rows(self) -> int:
        """Successor rows of a turn (see :mod:`pentadice.solver.turn`): one per dice count of each upper box, two for
        the Penta box (at 0 and with its points), one for each other box."""
        return int(self._params[P_N_ROWS])

    @functools.cached_property
    def _params(self) -> np.ndarray:
        n = self.n_boxes
        p = np.zeros(P_BOX_DATA + BOX_FIELDS * n, dtype=np.int64)
        p[P_DICE] = self.dice
        p[P_ROLLS] = self.rolls
        p[P_BOXES] = self.box_mask
        p[P_UPPER_THRESHOLD] = self.upper_threshold
        p[P_UPPER_BONUS] = self.upper_bonus
        p[P_PENTA_POINTS] = self.penta_points
        p[P_PENTA_BONUS] = self.penta_bonus if self.penta_box >= 0 else 0
        p[P_JOKER] = self.joker.code if self.penta_box >= 0 else JOKER_NONE
        p[P_JOKER_NEEDS_FULL] = int(self.joker_needs_full)
        p[P_PENTA_REPEAT] = int(self.penta_repeat and self.penta_box >= 0)
        p[P_N_BOXES] = n
        p[P_PENTA_BOX] = self.penta_box
        p[P_UPPER_MASK] = self.upper_mask
        p[P_LOWER_MASK] = ((1 << n) - 1) & ~self.upper_mask & ~(1 << self.penta_box if self.penta_box >= 0 else 0)
        p[P_FACE_BOX : P_FACE_BOX + 6] = -1
        row = 0
        for i, box in enumerate(self.sheet):
            o = P_BOX_DATA + BOX_FIELDS * i
            p[o + F_KIND], p[o + F_A], p[o + F_B], p[o + F_POINTS], p[o + F_ROW], p[o + F_ALIKE] = (
                box.kind,
                box.a,
                box.b,
                box.points,
                row,
                int(box.alike),
            )
            if box.kind == K_FACE:
                p[P_FACE_BOX + box.a - 1] = i
            row += self.dice + 1 if box.kind == K_FACE else 2 if box.kind == K_PENTA else 1
        p[P_N_ROWS] = row
        return p

    def reduced(self, **changes: Any) -> RuleSet:
        """A smaller game with the same rules (fewer dice, rolls or boxes), for cross-checks."""
        return dataclasses.replace(self, **changes)


PENTA_RULES = RuleSet("penta", "Penta")
YAHTZEE_NAMES = (("penta", "Yahtzee"),)
REGISTRY: dict[str, RuleSet] = {
    rs.name: rs
    for rs in (
        PENTA_RULES,
        RuleSet(
            "yahtzee", N_("Yahtzee, free joker"), joker=Joker.FREE, joker_needs_full=False, box_names=YAHTZEE_NAMES
        ),
        RuleSet(
            "yahtzee+forced-joker",
            N_("Yahtzee, forced joker"),
            joker=Joker.FORCED,
            joker_needs_full=False,
            box_names=YAHTZEE_NAMES,
        ),
        RuleSet("yahtzee+no-joker", N_("Yahtzee without joker"), joker=Joker.NONE, box_names=YAHTZEE_NAMES),
        RuleSet(
            "yahtzee+no-bonus",
            N_("Yahtzee without joker or bonus"),
            joker=Joker.NONE,
            penta_bonus=0,
            box_names=YAHTZEE_NAMES,
        ),
        RuleSet(
            "kiriki",
            "Kiriki",
            joker=Joker.NONE,
            penta_bonus=0,
            penta_repeat=True,
            box_names=(("penta", "Kiriki"),),
        ),
        RuleSet(
            "yatzy",
            N_("Yatzy (Scandinavian)"),
            sheet=YATZY_SHEET,
            upper_bonus=50,
            penta_bonus=0,
            joker=Joker.NONE,
        ),
        RuleSet(
            "maxi-yatzy",
            N_("Maxi Yatzy"),
            dice=6,
            sheet=MAXI_YATZY_SHEET,
            upper_threshold=75,
            upper_bonus=50,
            penta_bonus=0,
            joker=Joker.NONE,
        ),
    )
}
DEFAULT_RULES = "penta"
BUILT_IN: tuple[str, ...] = tuple(REGISTRY)  # the rule sets that ship; house rules (rule_files) join them by name


class UnknownRules(ValueError):
    """A rule-set name that the registry does not hold."""


def get_rules(name: str) -> RuleSet:
    """The rule set registered under ``name``."""
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(REGISTRY)
        raise UnknownRules(f"unknown rule set {name!r}; known: {known}") from None


def register(rs: RuleSet) -> RuleSet:
    """Add ``rs`` (house rules) to :data:`REGISTRY`, so that every command, table and game finds it by name as it
    finds a built-in rule set. A name already held by other rules is refused (UnknownRules): one process never
    means two games by one name."""
    held = REGISTRY.get(rs.name)
    if held is not None and held != rs:
        kind = "a built-in rule set" if rs.name in BUILT_IN else "other house rules"
        raise UnknownRules(f"the rule set name {rs.name!r} is already {kind}'s: give these rules their own name")
    REGISTRY.setdefault(rs.name, rs)
    return REGISTRY[rs.name]


def penta_filled(p: np.ndarray, open_mask: int) -> bool:
    """Whether the game has a Penta box and it is filled (with any score)."""
    b = p[P_PENTA_BOX]
    return b >= 0 and (open_mask >> b) & 1 == 0 and (p[P_BOXES] >> b) & 1 == 1


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
    own = p[P_FACE_BOX + face]
    return p[P_JOKER] == JOKER_FORCED or own < 0 or (open_mask >> own) & 1 == 0


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
    present = 0
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
            present |= 1 << f
            run += 1
            if run > longest:
                longest = run
        else:
            run = 0
    all_same = top == n
    scored_and_filled = penta_scored == 1 and penta_filled(p, open_mask)

    bonus = p[P_PENTA_BONUS] if all_same and scored_and_filled else 0
    joker = joker_applies(p, counts, open_mask, penta_scored)

    # Normal scores, box by box as the sheet defines them (a joker fills the fixed-point boxes at their points).
    for b in range(p[P_N_BOXES]):
        o = P_BOX_DATA + BOX_FIELDS * b
        kind = p[o + F_KIND]
        a = p[o + F_A]
        fixed = p[o + F_POINTS]
        v = 0
        if kind == K_FACE:
            v = a * counts[a - 1]
        elif kind == K_KIND_TOTAL:
            v = total if top >= a else 0
        elif kind == K_KIND_SUM:
            for f in range(6):
                if counts[f] >= a:
                    v = a * (f + 1)  # the highest such face wins: faces rise
        elif kind == K_PAIRS:
            found = 0
            for f in range(5, -1, -1):  # the highest pairs first; one per face unless they may be alike
                n_pairs = counts[f] // 2 if p[o + F_ALIKE] == 1 else min(counts[f] // 2, 1)
                while n_pairs > 0 and found < a:
                    v += 2 * (f + 1)
                    found += 1
                    n_pairs -= 1
            if found < a:
                v = 0
        elif kind == K_HOUSE:
            bb = p[o + F_B]
            for x in range(6):
                if counts[x] >= a:
                    for y in range(6):
                        fits = counts[y] >= bb if y != x else p[o + F_ALIKE] == 1 and counts[x] >= a + bb
                        if fits and a * (x + 1) + bb * (y + 1) > v:
                            v = a * (x + 1) + bb * (y + 1)
        elif kind == K_FULL_HOUSE:
            v = fixed if (triples == 1 and pairs == 1) or joker else 0
        elif kind == K_RUN:
            v = fixed if longest >= a or joker else 0
        elif kind == K_STRAIGHT:
            v = fixed if present & a == a or joker else 0
        elif kind == K_CHANCE:
            v = total
        else:  # K_ALL_ALIKE, K_PENTA
            v = fixed if all_same else 0
        points[b] = v

    allowed = open_mask
    if joker and p[P_JOKER] == JOKER_FORCED:
        own = p[P_FACE_BOX + face]
        if own >= 0 and (open_mask >> own) & 1 == 1:
            allowed = 1 << own
        elif open_mask & p[P_LOWER_MASK] != 0:
            allowed = open_mask & p[P_LOWER_MASK]
        else:
            allowed = open_mask & p[P_UPPER_MASK]  # they score 0: the face's own box is filled
    if all_same and scored_and_filled and p[P_PENTA_REPEAT] == 1:
        allowed |= 1 << p[P_PENTA_BOX]  # Kiriki: add this five of a kind to the box, filling nothing
    for b in range(p[P_N_BOXES]):
        if (allowed >> b) & 1 == 0:
            points[b] = -1
    return bonus


def successor_row(p: np.ndarray, b: int, pts: int) -> int:
    """The turn's successor row (see :func:`pentadice.solver.turn.successor_rows`) of filling box ``b`` with ``pts``
    points: an upper box's row for its count of dice, the Penta box's at 0 or with points, any other box's one
    row (compilable). The score table holds it for the hands whose points do not depend on the state; every
    kernel asks here for the rest."""
    o = P_BOX_DATA + BOX_FIELDS * b
    kind = p[o + F_KIND]
    if kind == K_FACE:
        return p[o + F_ROW] + pts // p[o + F_A]
    if kind == K_PENTA and pts > 0:
        return p[o + F_ROW] + 1
    return p[o + F_ROW]


def box_successor(p: np.ndarray, b: int, pts: int, open_mask: int, penta_scored: int) -> tuple[int, int, int]:
    """Filling box ``b`` with ``pts`` points: the next state's open boxes and Penta flag, and the upper points it
    adds to the subtotal (an upper box's points, else 0) (compilable)."""
    added = pts if p[P_BOX_DATA + BOX_FIELDS * b + F_KIND] == K_FACE else 0
    flag = penta_scored if b != p[P_PENTA_BOX] else (1 if pts > 0 else 0)
    return open_mask & ~(1 << b), flag, added


def comes_back(p: np.ndarray, open_mask: int, penta_scored: int) -> bool:
    """Whether a turn in this state can lead back to it (Kiriki: five of a kind added to the Penta box)."""
    return p[P_PENTA_REPEAT] == 1 and penta_scored == 1 and penta_filled(p, open_mask) and open_mask != 0


# Columns of :func:`successors`' rows: the successor row, and the next state's open boxes, Penta flag and the upper
# points the way to fill a box adds to the subtotal.
S_ROW, S_MASK, S_FLAG, S_ADD = range(4)


def successors(p: np.ndarray, n_dice: int, open_mask: int, penta_scored: int) -> tuple[np.ndarray, int]:
    """Where each successor row of a state leads (compilable; the rows of :func:`successor_row`): ``(succ,
    own)``, one row of ``succ`` per way to fill an open box: its successor row ``S_ROW``, the next state's open
    boxes ``S_MASK`` and Penta flag ``S_FLAG``, the upper points added ``S_ADD``. An upper box has one successor
    row per count of its face (0 to all the dice), the Penta box two (filled at 0, with points), any other box
    one. Where a turn can come back to the state (:func:`comes_back`), the Penta box's second row, free since
    the box is filled, is the state itself: ``own`` is that row (listed first), else -1.

    The one place that knows how a box fills; every pass reads a successor's value as ``table[flag, mask,
    min(subtotal + added, threshold)]`` plus :func:`upper_bonus` ``(subtotal, added)``.
    """
    succ = np.empty((p[P_N_ROWS], 4), dtype=np.int64)
    n = 0
    own = -1
    if comes_back(p, open_mask, penta_scored):
        own = p[P_BOX_DATA + BOX_FIELDS * p[P_PENTA_BOX] + F_ROW] + 1
        succ[0, S_ROW] = own
        succ[0, S_MASK] = open_mask
        succ[0, S_FLAG] = penta_scored
        succ[0, S_ADD] = 0
        n = 1
    for b in range(p[P_N_BOXES]):
        if (open_mask >> b) & 1 == 0:
            continue
        o = P_BOX_DATA + BOX_FIELDS * b
        kind = p[o + F_KIND]
        for c in range(n_dice + 1 if kind == K_FACE else (2 if kind == K_PENTA else 1)):
            succ[n, S_ROW] = p[o + F_ROW] + c
            succ[n, S_MASK] = open_mask & ~(1 << b)
            succ[n, S_FLAG] = c if kind == K_PENTA else penta_scored
            succ[n, S_ADD] = c * p[o + F_A] if kind == K_FACE else 0
            n += 1
    return succ[:n], own


def hand_options(
    p: np.ndarray, counts: np.ndarray, scores: np.ndarray, open_mask: int, penta_scored: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The legal boxes of each hand ``h`` (``counts[h]``, ``scores[h]``) in a state, in sheet order (compilable):
    ``(opt_box, opt_row, opt_points, n_opt, bonus)``: ``n_opt[h]`` boxes, ``opt_box[h, i]``, its successor row
    ``opt_row[h, i]`` and its points ``opt_points[h, i]`` (Penta bonus included, upper bonus not), and the Penta
    bonus of the roll ``bonus[h]``. Hands whose points do not depend on the state are read from the score
    table (:func:`score_table`); the others ask :func:`score_options`.

    The one builder of a hand's options in compiled code: every pass takes them from here, for all the hands of a
    state in one call (a compiled call per hand, with its arrays, would cost more than the options).
    """
    n_hands = counts.shape[0]
    n_boxes = p[P_N_BOXES]
    opt_box = np.empty((n_hands, n_boxes), dtype=np.int64)
    opt_row = np.empty((n_hands, n_boxes), dtype=np.int64)
    opt_points = np.empty((n_hands, n_boxes))
    n_opt = np.empty(n_hands, dtype=np.int64)
    hand_bonus = np.empty(n_hands, dtype=np.int64)
    points = np.empty(n_boxes, dtype=np.int64)
    open_boxes = np.empty(n_boxes, dtype=np.int64)
    n_open = 0
    for b in range(n_boxes):
        if (open_mask >> b) & 1 == 1:
            open_boxes[n_open] = b
            n_open += 1
    for h in range(counts.shape[0]):
        n = 0
        hand_bonus[h] = 0
        if scores[h, n_boxes] == 1:  # every open box, at its points and successor row from the score table
            for i in range(n_open):
                b = open_boxes[i]
                opt_box[h, i] = b
                opt_row[h, i] = scores[h, n_boxes + 1 + b]
                opt_points[h, i] = float(scores[h, b])
            n = n_open
        else:
            bonus = score_options(p, counts[h], open_mask, penta_scored, points)
            hand_bonus[h] = bonus
            for b in range(n_boxes):
                pts = points[b]
                if pts < 0:
                    continue
                opt_box[h, n] = b
                opt_row[h, n] = successor_row(p, b, pts)
                opt_points[h, n] = float(pts + bonus)
                n += 1
        n_opt[h] = n
    return opt_box, opt_row, opt_points, n_opt, hand_bonus


def upper_bonus(p: np.ndarray, subtotal: int, added: int) -> int:
    """The upper bonus paid when ``added`` upper points take the upper subtotal to the threshold (compilable)."""
    if subtotal < p[P_UPPER_THRESHOLD] and subtotal + added >= p[P_UPPER_THRESHOLD]:
        return p[P_UPPER_BONUS]
    return 0


def score_table(rs: RuleSet) -> np.ndarray:
    """Per hand (``dice.tables(rs.dice)`` order): its points in every box with all boxes open, and in the last
    column ``rs.n_boxes`` 1 when those points hold in every state, i.e. the game has no Penta box or the dice
    are not all alike (only a roll of all alike dice meets the Penta box's bonus and joker), then each box's
    successor row for those points (see :mod:`pentadice.solver.turn`). The turn code reads such hands from here.
    """
    return _score_table(rs).copy()


@functools.cache
def _score_table(rs: RuleSet) -> np.ndarray:
    from pentadice.game import dice

    t = dice.tables(rs.dice)
    p = rs.params()
    n = rs.n_boxes
    out = np.zeros((t.n_hands, 2 * n + 1), dtype=np.int64)
    for h in range(t.n_hands):
        score_options(p, t.counts[h], rs.box_mask, 0, out[h, :n])
        out[h, n] = 0 if t.counts[h].max() == rs.dice and rs.penta_box >= 0 else 1
        for b in range(n):
            out[h, n + 1 + b] = successor_row(p, b, max(int(out[h, b]), 0))
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


# The functions above that Numba compiles (with the turn functions): they call only each other.
COMPILED = (
    penta_filled,
    joker_applies,
    score_options,
    successor_row,
    upper_bonus,
    box_successor,
    comes_back,
    successors,
    hand_options,
)


def legal_scores(
    rules: RuleSet, dice: Sequence[int], open_boxes: Iterable[str], penta_scored: bool
) -> tuple[dict[str, int], int]:
    """The boxes that may take ``dice`` and their points, and the Penta bonus the roll earns.

    ``open_boxes`` are the boxes still open, ``penta_scored`` whether the Penta box holds points (not open, not 0).
    """
    if len(dice) != rules.dice:
        raise ValueError(f"{rules.title} uses {rules.dice} dice, got {len(dice)}")
    points = np.empty(rules.n_boxes, dtype=np.int64)
    open_mask = rules.mask_of(open_boxes) & rules.box_mask
    bonus = score_options(rules.params(), dice_counts(dice), open_mask, int(penta_scored), points)
    return {rules.box_ids[b]: int(points[b]) for b in range(rules.n_boxes) if points[b] >= 0}, int(bonus)


def upper_bonus_earned(rules: RuleSet, subtotal: int, added: int) -> int:
    """The upper bonus paid when ``added`` upper points take the subtotal from ``subtotal`` to the threshold."""
    return int(upper_bonus(rules._params, subtotal, added))
