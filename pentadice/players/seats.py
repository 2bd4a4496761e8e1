"""Who plays a game, and how long a person has: a :class:`Player` (a name, human or computer, the score sheet,
the turns played, a computer's strategy), the ``--players`` text (:func:`parse_players`), the checks every
way of setting up a game shares (printable names that look different, known strategies; a new name has no
invisible character either: :func:`valid_name`), and the auto-commit
time (``--auto-commit``, or as saved). Pure Python, no I/O.

:class:`GameError` is the engine's one error (:mod:`pentadice.players.engine` raises it too): it is here, in
the lowest of the engine's modules, so that every one of them can raise it.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pentadice.game.sheet import Sheet
from pentadice.players import strategies
from pentadice.support.inputs import unsafe_char

MAX_PLAYERS = 6
MAX_NAME = 32  # characters in a player's name
MAX_MARKS = 4  # combining marks in a row on a new name's letter (a pointed Hebrew or a Tibetan letter has 3)
MAX_NAME_NFKC = 2 * MAX_NAME  # characters of a new name's NFKC form (a few ligatures or squared words spelt out)
MAX_AUTO_COMMIT = 86400.0  # seconds: a day; longer is "off"


class GameError(ValueError):
    """A move the rules do not allow now, or a saved game that cannot be loaded."""


def check_name(name: object) -> str:
    """A player's name: 1 to :data:`MAX_NAME` printable characters, no surrounding spaces; GameError if not."""
    if not isinstance(name, str):
        raise GameError(f"a player's name is text, not {name!r}")
    if not name.strip():
        raise GameError("empty player name")
    if not any(unicodedata.category(c)[0] in "LNPS" for c in name):  # letters, digits, marks of punctuation
        raise GameError(f"player name {name!r} has no visible character")
    if any(unsafe_char(c) for c in name):
        raise GameError(f"player name {name!r} holds a control character: names are printable text")
    if name != name.strip():
        raise GameError(f"player name {name!r} starts or ends with spaces")
    if len(name) > MAX_NAME:
        raise GameError(f"player name {name[:MAX_NAME]!r}... is longer than {MAX_NAME} characters")
    return name


def valid_name(name: object) -> str:
    """A new player's name, where a name enters (a game set up, a seat, a name asked for): :func:`check_name`'s
    rules, and no invisible character either (what :func:`name_key` drops: format characters such as a
    zero-width space, joiner or mark, variation selectors, fillers), in the name or its NFKC form, so that no
    two names a screen shows alike are told apart only by what cannot be seen. An emoji's own joiners and
    selectors (a zero-width joiner between two symbols, a variation selector after a symbol, the tags of a
    region's flag) are part of what it shows, and pass. GameError naming the character otherwise. A name read
    back from a save or the games database is checked by :func:`check_name` alone: what was accepted once is
    read again. Its NFKC form (what names are compared by) is at most :data:`MAX_NAME_NFKC` characters: a
    ligature of a phrase (U+FDFA, eighteen characters) thirty-two times over is not a name."""
    name = check_name(name)
    nfkc = unicodedata.normalize("NFKC", name)
    if len(nfkc) > MAX_NAME_NFKC:
        raise GameError(
            f"player name {short(name)} is {len(nfkc)} characters written out (its ligatures and squared words "
            f"as their letters), more than {MAX_NAME_NFKC}"
        )
    marks = _most_marks(unicodedata.normalize("NFC", name))
    if marks > MAX_MARKS:
        raise GameError(
            f"player name {short(name)} stacks {marks} combining marks on one letter, more than {MAX_MARKS}: "
            "they would write over the lines around it"
        )
    for text in dict.fromkeys((name, nfkc)):
        if any(unsafe_char(c) for c in text):
            raise GameError(f"player name {name!r} holds a control character: names are printable text")
        for i, c in enumerate(text):
            # An emoji's joiners and tags are checked in the name itself (NFKC makes none: ‼ before a selector
            # is !! in the NFKC form).
            emoji = _in_emoji(text, i) or (text is not name and (c in _EMOJI_JOINERS or _is_tag(c)))
            if _invisible(c) and not emoji:
                shown = "".join(_escaped(x) if _invisible(x) else x for x in name)
                raise GameError(
                    f"player name '{shown}' holds an invisible character (U+{ord(c):04X}): names are what they show"
                )
    return name


def _escaped(c: str) -> str:
    """A character as Python writes it escaped: ``\\u200b``, ``\\U000e0041``."""
    return f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}"


def _most_marks(text: str) -> int:
    """The longest run of combining marks (nonspacing or enclosing) in ``text``."""
    most = run = 0
    for c in text:
        run = run + 1 if unicodedata.category(c) in ("Mn", "Me") else 0
        most = max(most, run)
    return most


_BLANK = frozenset("\u2800\u3164\uffa0")  # shown as nothing though not spaces (a blank braille cell, fillers)


def _invisible(c: str) -> bool:
    return c in _INVISIBLE or c in _BLANK or unicodedata.category(c) == "Cf"


_EMOJI_JOINERS = frozenset("\u200d\ufe0e\ufe0f")
# Emoji that are not symbols to Unicode's categories (marks of punctuation, a letter, mathematical symbols),
# which a variation selector shows as their emoji: the double exclamation mark, the information source, the left
# right arrow, the white and black squares, the curved arrows, the wavy dash...
_EMOJI_NOT_SYMBOLS = frozenset("\u203c\u2049\u2139\u2194\u25fb\u25fc\u25fd\u25fe\u2934\u2935\u3030\u303d")
_BLACK_FLAG = "\U0001f3f4"  # the base of a subdivision's flag: its tag characters spell the region (gbsct)
_TAG_SPEC = frozenset(map(chr, [*range(0xE0030, 0xE003A), *range(0xE0061, 0xE007B)]))  # tag digits, letters
_CANCEL_TAG = "\U000e007f"  # ends a flag's tag sequence
_TAG_SPEC_MOST = 7  # tag characters of a region's code (gbeng: five)


def _in_emoji(text: str, i: int) -> bool:
    """Whether the invisible character ``text[i]`` is part of an emoji: a zero-width joiner between two symbols
    (their modifiers and selectors between), a variation selector after a symbol or before a keycap's
    enclosing mark, or a tag character of a flag's tag sequence (the black flag, a region's code in tag letters
    and digits, the cancel tag: the flag of Scotland); tags anywhere else are text no screen shows."""
    c = text[i]
    if _is_tag(c):
        return _in_flag_tags(text, i)
    if c not in _EMOJI_JOINERS:
        return False
    before = text[i - 1] if i > 0 else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    symbol = bool(before) and (unicodedata.category(before) in ("So", "Sk") or before in _EMOJI_NOT_SYMBOLS)
    if c == "\u200d":
        joined = symbol or before in "\ufe0e\ufe0f" or (before == _CANCEL_TAG and _in_flag_tags(text, i - 1))
        return joined and bool(after) and unicodedata.category(after) == "So"
    return symbol or after == "\u20e3"


def _is_tag(c: str) -> bool:
    return "\U000e0020" <= c <= _CANCEL_TAG


def _in_flag_tags(text: str, i: int) -> bool:
    """Whether the tag character ``text[i]`` lies in a flag's tag sequence: U+1F3F4, 1 to
    :data:`_TAG_SPEC_MOST` tag digits or small letters, the cancel tag."""
    start = i
    while start > 0 and text[start - 1] in _TAG_SPEC:
        start -= 1
    end = i if text[i] == _CANCEL_TAG else i + 1
    if text[i] != _CANCEL_TAG:
        if text[i] not in _TAG_SPEC:
            return False
        while end < len(text) and text[end] in _TAG_SPEC:
            end += 1
    return (
        start > 0
        and text[start - 1] == _BLACK_FLAG
        and 1 <= end - start <= _TAG_SPEC_MOST
        and end < len(text)
        and text[end] == _CANCEL_TAG
    )


def check_auto_commit(seconds: object) -> float | None:
    """The auto-commit time: a finite number of seconds from 0 (at once) to :data:`MAX_AUTO_COMMIT`, or None
    (off); GameError if not."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise GameError(f"the auto-commit time is a number of seconds or off, not {short(seconds)}")
    # The comparisons come first: an integer too large for a float must not reach float().
    if not (0 <= seconds <= MAX_AUTO_COMMIT and math.isfinite(seconds)):
        raise GameError(f"the auto-commit time is 0 to {MAX_AUTO_COMMIT:g} seconds or off, not {short(seconds)}")
    return abs(float(seconds))  # -0.0 is 0


def parse_auto_commit(text: str) -> float | None:
    """``--auto-commit``: seconds (0: at once) or ``off``; GameError for anything else (inf, nan, negative,
    more than a day)."""
    word = text.strip().lower()
    if word == "off":
        return None
    seconds = float(word) if re.fullmatch(r"[0-9]{1,9}(\.[0-9]*)?|\.[0-9]+", word) else math.nan
    if not 0 <= seconds <= MAX_AUTO_COMMIT:  # NaN too
        raise GameError(f"{short(text)} is not a number of seconds from 0 to {MAX_AUTO_COMMIT:g}, or off")
    return seconds


@dataclass
class Player:
    """One player: a name, human or computer, the score sheet so far and the turns played (Kiriki gives extra
    turns), and a computer's strategy (:mod:`pentadice.players.strategies`; a person's is ``optimal``, the
    computer's choice a person may ask for). The sheet is replaced, never edited, as boxes are filled."""

    name: str
    computer: bool = False
    sheet: Sheet = field(default_factory=Sheet)
    turns: int = 0
    strategy: str = strategies.DEFAULT

    @property
    def boxes(self) -> Mapping[str, int]:
        return self.sheet.boxes

    @property
    def penta_bonus(self) -> int:
        return self.sheet.penta_bonus


def parse_players(spec: str) -> list[Player]:
    """Players from ``"Ana,cpu:win,cpu"``: a name is a human; ``cpu`` a computer playing ``optimal``,
    ``cpu:STRATEGY`` one playing that strategy, ``cpu:NAME`` a named one playing ``optimal`` and
    ``cpu:STRATEGY:NAME`` a named one playing that strategy (see :func:`strategies.parse_computer`)."""
    players = []
    unnamed = []  # computers without a name: "cpu" alone, "cpu 1", "cpu 2"... when there are several
    for raw in spec.split(","):
        item = raw.strip()
        if not item:
            raise GameError(f"empty player name in {spec!r}")
        kind, colon, name = item.partition(":")
        if kind.strip().lower() == "cpu":
            try:
                strategy, name = strategies.parse_computer(name, item) if colon else (strategies.DEFAULT, "")
            except strategies.StrategyError as e:
                raise GameError(str(e)) from None
            players.append(Player(name, computer=True, strategy=strategy))
            if not name:
                unnamed.append(players[-1])
        elif ":" in item:
            raise GameError(
                f"unknown player kind {kind!r} in {item!r}: a player is NAME, cpu, cpu:STRATEGY, cpu:NAME or "
                f"cpu:STRATEGY:NAME"
            )
        else:
            players.append(Player(item))
    for number, player in enumerate(unnamed, 1):
        player.name = "cpu" if len(unnamed) == 1 else f"cpu {number}"
    check_players(players)
    for player in players:
        valid_name(player.name)
    return players


def check_players(players: Sequence[Player]) -> None:
    """1 to :data:`MAX_PLAYERS` players with distinct, printable names (see :func:`check_name`)."""
    if not 1 <= len(players) <= MAX_PLAYERS:
        raise GameError(f"a game has 1 to {MAX_PLAYERS} players, not {len(players)}")
    for p in players:
        check_name(p.name)
        if p.strategy not in strategies.STRATEGIES:
            raise GameError(f"unknown strategy {p.strategy!r}: strategies are {', '.join(strategies.STRATEGIES)}")
        if not p.computer and p.strategy != strategies.DEFAULT:
            raise GameError(f"{p.name!r} is a person: a strategy ({p.strategy}) is for computer players")
    names = [p.name for p in players]
    twice = [n for n, c in Counter(names).items() if c > 1]
    if twice:
        raise GameError(f"two players are called {twice[0]!r}")
    seen: dict[str, str] = {}
    for name in names:
        other = seen.setdefault(name_key(name), name)
        if other != name:
            raise GameError(f"two players' names look the same: {other!r} and {name!r}; give names that differ")


# Unicode's default-ignorable characters that are not format characters (those are all invisible): the
# combining grapheme joiner, fillers, Khmer's inherent vowels, Mongolian's free variation selectors, the
# variation selectors and their supplement (U+E0100...), and the code points kept for more (U+2065,
# U+FFF0...U+FFF8, the rest of the U+E0000 block): a screen shows none of them.
_INVISIBLE = (
    frozenset("\u034f\u115f\u1160\u17b4\u17b5\u2065\u3164\uffa0")
    | frozenset(map(chr, range(0x180B, 0x1810)))
    | frozenset(map(chr, range(0xFE00, 0xFE10)))
    | frozenset(map(chr, range(0xFFF0, 0xFFF9)))
    | frozenset(map(chr, range(0xE0000, 0xE1000)))
)


def name_key(name: str) -> str:
    """What a name looks like, to tell players apart: its NFKC form (full-width letters, ligatures, a
    no-break space as their plain forms) without invisible characters (format characters such as a zero-width
    space or joiner, variation selectors, fillers: Unicode's default-ignorable characters) and with each run of
    spaces as one."""
    text = unicodedata.normalize("NFKC", name)
    text = "".join(c for c in text if c not in _INVISIBLE and unicodedata.category(c) != "Cf")
    return " ".join(text.split())


def short(value: object) -> str:
    """A value in a message: its ``repr``, cut short after 37 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
