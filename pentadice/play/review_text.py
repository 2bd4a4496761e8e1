"""The review of a game in words, for the terminal (``pentadice review``): lines of at most 80 columns.

First the decisions that cost points, each with the option chosen, the best one and the expected points lost;
then each player: decisions, total and mean loss, whether that is expert play, and the worst mistakes.
"""

from __future__ import annotations

from pentadice import rules
from pentadice.play.review import EXPERT_MEAN_LOSS, LOSS_SHOWN, Decision, PlayerReview, Review


def review_lines(review: Review, rs: rules.RuleSet) -> list[str]:
    """The review as lines of text."""
    n = len(review.decisions)
    lines = [f"Review of a {rs.title} game: {n} decision{'s' if n != 1 else ''}."]
    if not n:
        return [*lines, "The saved game holds no decisions to review (it was saved by an earlier version)."]
    costly = [d for d in review.decisions if d.loss is None or d.loss > LOSS_SHOWN]
    lines.append("")
    if costly:
        lines.append("Decisions that cost points (expected points lost against the best option):")
        for d in costly:
            lines += _decision_lines(d, rs)
    else:
        lines.append("Every decision was the best one.")
    for p in review.players:
        lines += ["", *_player_lines(p, rs)]
    return lines


def option_text(option: dict, rs: rules.RuleSet, dice: int | None = None) -> str:
    """An option in words: ``keep 1 3 4``, ``reroll all``, ``keep all``, or ``Chance (22)``."""
    if option["action"] == "keep":
        keep = option["keep"]
        if not keep:
            return "reroll all"
        if dice is not None and len(keep) == dice:
            return "keep all"
        return "keep " + " ".join(map(str, keep))
    name = rs.box_name(option["box"])
    if "points" not in option:
        return name
    bonus = f" +{option['penta_bonus']}" if option.get("penta_bonus") else ""
    return f"{name} ({option['points']}{bonus})"


def _moment(d: Decision, rs: rules.RuleSet) -> str:
    s = d.step
    roll = "last roll" if s.rolls_left == 0 else f"roll {rs.rolls - s.rolls_left} of {rs.rolls}"
    return f"turn {s.turn}, {roll}"


def _decision_lines(d: Decision, rs: rules.RuleSet) -> list[str]:
    s = d.step
    who = f"{s.player}{' (auto-commit)' if s.auto else ''}"
    chosen, best = option_text(d.chosen, rs, len(s.dice)), option_text(d.best, rs, len(s.dice))
    lost = "not an option here" if d.loss is None else f"lost {d.loss:.2f}"
    return [f"{who}, {_moment(d, rs)}: dice {' '.join(map(str, s.dice))}", f"  chose {chosen}, best {best}: {lost}"]


def _player_lines(p: PlayerReview, rs: rules.RuleSet) -> list[str]:
    who = f"{p.name} (computer)" if p.computer else p.name
    n = len(p.decisions)
    if not n:
        return [f"{who}: no decisions recorded."]
    head = f"{who}: {n} decision{'s' if n != 1 else ''}, {p.total_loss:.2f} points lost"
    lines = [head, f"  {p.mean_loss:.3f} points lost a decision"]
    if p.expert:
        lines[-1] += f": expert play (under {EXPERT_MEAN_LOSS:g})"
    if p.first_turn is not None and p.first_turn > 1:
        lines.append(f"  (decisions recorded from turn {p.first_turn} on)")
    if p.worst:
        lines.append("  worst:")
        for d in p.worst:
            chosen = option_text(d.chosen, rs, len(d.step.dice))
            best = option_text(d.best, rs, len(d.step.dice))
            lines.append(f"  {d.loss:6.2f}  {_moment(d, rs)}: {chosen}, best {best}")
    return lines
