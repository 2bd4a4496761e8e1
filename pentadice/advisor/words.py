"""Options in words a player understands: "Keep 4 and reroll four dice", "Score Fours: 20 points + 100 Penta
bonus". Box names follow the rule set, so a translated rule set speaks its own language."""

from __future__ import annotations

from pentadice import rules
from pentadice.advisor.advice import Option

NUMBERS = ("no", "one", "two", "three", "four", "five")


def dice_count(n: int) -> str:
    return f"{NUMBERS[n]} {'die' if n == 1 else 'dice'}"


def describe(option: Option, rs: rules.RuleSet) -> str:
    """The option as a recommendation."""
    if option.action == "keep":
        keep = option.keep or ()
        rerolled = rs.dice - len(keep)
        if not keep:
            return f"Keep nothing and reroll all {dice_count(rerolled)}"
        return f"Keep {' '.join(map(str, keep))} and reroll {dice_count(rerolled)}"
    text = f"Score {rs.box_name(option.box or '')}: {option.points} point{'s' if option.points != 1 else ''}"
    if option.penta_bonus:
        text += f" + {option.penta_bonus} {rs.bonus_name}"
    if option.upper_bonus:
        text += f" + {option.upper_bonus} upper bonus"
    if option.points == 0 and not option.penta_bonus:
        text += " (sacrifice)"
    return text


def short(option: Option, rs: rules.RuleSet) -> str:
    """The option in a table cell."""
    if option.action == "keep":
        keep = " ".join(map(str, option.keep or ())) or "nothing"
        return f"keep {keep}, reroll {dice_count(rs.dice - len(option.keep or ()))}"
    extra = f" +{option.penta_bonus}" if option.penta_bonus else ""
    extra += f" +{option.upper_bonus} bonus" if option.upper_bonus else ""
    return f"score {rs.box_name(option.box or '')} {option.points}{extra}"
