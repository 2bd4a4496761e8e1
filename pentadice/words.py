"""Every sentence a player reads, in one place: options ("Keep 4 and reroll four dice", "Score Fours: 20
points + 100 Penta bonus"), dice, scoring, the advice's text. Box and bonus names follow the rule set, so a
translated or renamed rule set (Yahtzee, Kiriki) speaks its own words. Front ends call these; they do not
write their own."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from pentadice import rules
from pentadice.inputs import clean
from pentadice.moves import Keep, Score

if TYPE_CHECKING:
    from pentadice.play.engine import Game

NUMBERS = ("no", "one", "two", "three", "four", "five")


def dice_count(n: int) -> str:
    return f"{NUMBERS[n]} {'die' if n == 1 else 'dice'}"


def dice_text(dice) -> str:
    """Dice as a player sees them: ``[1] [3] [4]``."""
    return " ".join(f"[{d}]" for d in dice)


def points_text(points: int) -> str:
    return f"{points} point{'s' if points != 1 else ''}"


def keep_text(keep, rs: rules.RuleSet) -> str:
    """Keeping some dice in words: ``Keep 4 and reroll four dice``."""
    rerolled = rs.dice - len(keep)
    if not keep:
        return f"Keep nothing and reroll all {dice_count(rerolled)}"
    return f"Keep {' '.join(map(str, keep))} and reroll {dice_count(rerolled)}"


def describe(option, rs: rules.RuleSet) -> str:
    """An option (advisor's :class:`~pentadice.advisor.Option`) as a recommendation."""
    match option.move:
        case Keep(dice=keep):
            return keep_text(keep, rs)
        case Score(box=box):
            text = f"Score {rs.box_name(box)}: {points_text(option.points)}"
            if option.penta_bonus:
                text += f" + {option.penta_bonus} {rs.bonus_name}"
            if option.upper_bonus:
                text += f" + {option.upper_bonus} upper bonus"
            if option.points == 0 and not option.penta_bonus:
                text += " (sacrifice)"
            return text
    raise TypeError(option.move)


def short(option, rs: rules.RuleSet) -> str:
    """An option in a table cell."""
    match option.move:
        case Keep(dice=keep):
            kept = " ".join(map(str, keep)) or "nothing"
            return f"keep {kept}, reroll {dice_count(rs.dice - len(keep))}"
        case Score(box=box):
            extra = f" +{option.penta_bonus}" if option.penta_bonus else ""
            extra += f" +{option.upper_bonus} bonus" if option.upper_bonus else ""
            return f"score {rs.box_name(box)} {option.points}{extra}"
    raise TypeError(option.move)


def scored_text(rs: rules.RuleSet, player: str, box: str, points: int, penta_bonus: int, upper_bonus: int) -> str:
    """What a scoring move earned: ``Ana scores Fours: 20 points + 100 Penta bonus``."""
    text = f"{player} scores {rs.box_name(box)}: {points_text(points)}"
    if penta_bonus:
        text += f" + {penta_bonus} {rs.bonus_name}"
    if upper_bonus:
        text += f" + {upper_bonus} upper bonus"
    return text


def advice_text(advice, rs: rules.RuleSet, top: int, why: str | None = None) -> str:
    """The advice for people: the recommendation, the rules' notes, the explanation, the ranked options."""
    best = advice.best
    lines = [advice.situation.describe(rs), ""]
    lines.append(f"Best: {describe(best, rs)} (expected final score {best.value:.3f})")
    if advice.joker:
        lines.append(advice.joker + ".")
    if advice.warning:  # the last roll: the best option is then the best sacrifice, shown just above
        lines.append(advice.warning + ".")
    elif isinstance(best.move, Keep):
        box = advice.best_box
        lines.append(f"Best box if you score now: {describe(box, rs)} (expected {box.value:.3f})")
    if why:
        lines.append(f"Why: {why}.")
    lines += ["", f"{'rank':>4}  {'option':<34}{'expected':>10}{'loss':>9}"]
    for i, o in enumerate(advice.options[:top], 1):
        lines.append(f"{i:>4}  {short(o, rs):<34}{o.value:>10.3f}{o.loss:>9.3f}")
    if len(advice.options) > top:
        lines.append(f"      ({len(advice.options) - top} more options: --top {len(advice.options)} shows them all)")
    return "\n".join(lines)


SCREEN = 80  # columns the sheet fits in, whatever the number of players and the length of their names


def sheet_text(game: Game) -> str:
    """All players' sheets side by side, with the totals, within :data:`SCREEN` columns (long names cut)."""
    rs = game.rules
    names = [clean(p.name) for p in game.players]
    width = max(6, min(max(10, *(len(n) + 2 for n in names)), (SCREEN - 18) // len(names)))
    names = [n if len(n) < width else n[: width - 2] + "~" for n in names]
    head = f"{'':<18}" + "".join(f"{n:>{width}}" for n in names)
    lines = [head, "-" * len(head)]

    def row(label: str, cells: list[str]) -> None:
        lines.append(f"{label:<18}" + "".join(f"{c:>{width}}" for c in cells))

    totals = [game.totals(p) for p in game.players]
    for box in rs.boxes:
        if box == "three_of_a_kind":
            row("Upper", [str(t["upper"]) for t in totals])
            row(f"Bonus ({rs.upper_threshold}+)", [str(t["upper_bonus"]) for t in totals])
        row(rs.box_name(box), [str(p.boxes[box]) if box in p.boxes else "." for p in game.players])
    row("Lower", [str(t["lower"]) for t in totals])
    if rs.penta_bonus:  # Kiriki has no such bonus: no row for it
        row(rs.bonus_name, [str(t["penta_bonus"]) for t in totals])
    row("TOTAL", [str(t["total"]) for t in totals])
    if game.dice is not None:
        lines += ["", roll_scores_text(game)]
    return "\n".join(lines)


def roll_scores_text(game: Game) -> str:
    """What the dice showing would score now in each box that may take them."""
    rs = game.rules
    legal, bonus = game.legal_boxes()
    cells = ", ".join(f"{rs.box_name(b)} {p}" for b, p in legal.items())
    extra = f" (+{bonus} {rs.bonus_name})" if bonus else ""
    text = f"{clean(game.player.name)}'s roll {dice_text(game.dice)} would score: {cells}{extra}"
    return textwrap.fill(text, SCREEN, subsequent_indent="  ", break_on_hyphens=False)
