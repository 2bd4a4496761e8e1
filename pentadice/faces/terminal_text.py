"""What the terminal game says and how it reads what is typed, apart from the game's flow: the help, a box or
the dice to keep as a player types them (:func:`parse_box`, :func:`parse_keep`), what a box earned with the
running total (:func:`scored_text`), each player's chance of winning (:func:`chances_text`), and where a resumed
game stands (:func:`resumed_text`). In the language spoken now; names and paths printed without control
characters (see :func:`pentadice.support.inputs.clean`).
"""

from __future__ import annotations

from pentadice.faces import words
from pentadice.game import rules
from pentadice.players.engine import Game, GameError, Scored
from pentadice.support.i18n import N_, _
from pentadice.support.inputs import clean

HELP = N_("""Commands:
  keep 1 1 4   keep these dice and reroll the others (also: k 1 1 4, or just 1 1 4)
  roll         reroll all the dice (also: r)
  score fours  fill a box (also: s fours, or just the box: fours, "full house", ...)
               a box that scores 0 while rerolls are left asks first: type it again, or yes
  best         play the computer's choice (its best keep or box)
  sheet        show the score sheets
  chances      show each player's chance of winning, from the sheets as they stand
  save [FILE]  save the game (to FILE, or to the --save file), to resume it with `pentadice play --resume FILE`;
               the game is saved there after every box from then on
  quit         stop playing (the game is saved if it has a file; Ctrl-D and Ctrl-C too)
After the last roll the box is filled for you if you choose nothing within the auto-commit time
(at a terminal the prompt counts down; typing pauses it).""")


def parse_box(rs: rules.RuleSet, text: str) -> str:
    """A box as the player names it (ids, names in English or the language spoken, short forms); GameError
    otherwise."""
    try:
        return words.parse_box(rs, text)
    except rules.UnknownBox as e:
        raise GameError(str(e)) from None


def names_box(rs: rules.RuleSet, text: str) -> bool:
    """Whether ``text`` names a box (``3k``, ``4k`` start with a digit, as kept dice do)."""
    try:
        words.parse_box(rs, text)
    except rules.UnknownBox:
        return False
    return True


def shown(text: str, limit: int = 40) -> str:
    """Typed text in a message: quoted, escaped, cut short."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


def percent_text(p: float) -> str:
    """A probability as a whole percentage, never rounded to a certainty it is not: ``<1 %``, ``>99 %``."""
    if 0 < p < 0.005:
        return _("<1 %")
    if 0.995 <= p < 1:
        return _(">99 %")
    return _("{percent} %").format(percent=round(100 * p))


def chances_text(game: Game, shares: list[float]) -> str:
    """``Chances: Ana 41 %, cpu 59 %``: each player's probability of finishing first (see
    :mod:`pentadice.advisor.chances`)."""
    parts = ", ".join(f"{clean(p.name)} {percent_text(c)}" for p, c in zip(game.players, shares, strict=True))
    return _("Chances: {players}").format(players=parts)


def scored_text(game: Game, s: Scored) -> str:
    """What a box earned, as :func:`pentadice.faces.words.scored_text` says it, with the player's running total."""
    text = words.scored_text(game.rules, clean(s.player), s.box, s.points, s.penta_bonus, s.upper_bonus)
    text += " " + _("(auto-commit)") if s.auto else ""
    player = next(p for p in game.players if p.name == s.player)
    return text + "; " + _("total {points}").format(points=game.totals(player)["total"])


def parse_keep(text: str, dice: tuple[int, ...] | None) -> tuple[int, ...]:
    """Faces to keep: single digits, separated by spaces or commas (``dice``: those showing, for the message
    refusing anything else)."""
    typed = text.replace(",", " ").split()
    for w in typed:
        if len(w) != 1 or w not in "0123456789":
            showing = " ".join(map(str, dice or ()))
            split = (
                " "
                + _("(to keep {n} dice, type them apart: {command})").format(n=len(w), command=f"'keep {' '.join(w)}'")
                if w.isascii() and w.isdigit()
                else ""
            )
            raise GameError(
                _("{text} is not a die: a die shows 1 to 6{split}; the dice show {dice}").format(
                    text=shown(w), split=split, dice=showing
                )
            )
    return tuple(int(w) for w in typed)


def resumed_text(game: Game, path: object, recorded: str | None) -> str:
    """Where a game resumed from ``path`` stands, and where it is saved from now on if not where it was
    (``recorded``: the save file the saved game names)."""
    where = clean(str(path))
    if game.over:
        return _("Resumed the game saved in {path}: it is over.").format(path=where)
    player = clean(game.player.name)
    if game.dice is not None:
        text = _("Resumed the game saved in {path}: {player} to play, roll {roll} of {rolls}.").format(
            path=where, player=player, roll=game.rolls_made, rolls=game.rules.rolls
        )
    else:
        text = _("Resumed the game saved in {path}: {player} to play.").format(path=where, player=player)
    now = game.save_path
    if recorded is not None and now is not None and recorded != now:
        text += " " + _("It was saved to {old}; from now on it is saved to {new}.").format(
            old=clean(recorded), new=clean(now)
        )
    return text
