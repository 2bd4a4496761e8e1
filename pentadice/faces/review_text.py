"""The review of a game in words, for the terminal (``pentadice review``): lines of at most 80 columns, the names
from the saved file without control characters (:func:`pentadice.support.inputs.clean`).

First the decisions that cost points, each with the option chosen, the best one and the expected points lost;
then each player: decisions, total and mean loss, whether that is expert play, and the worst mistakes.
"""

from __future__ import annotations

from pentadice.faces import words
from pentadice.game import rules
from pentadice.players.review import EXPERT_MEAN_LOSS, LOSS_SHOWN, Decision, PlayerReview, Review
from pentadice.support.i18n import _, ngettext
from pentadice.support.inputs import clean


def review_lines(review: Review, rs: rules.RuleSet) -> list[str]:
    """The review as lines of text."""
    n = len(review.decisions)
    lines = [
        ngettext("Review of a {title} game: {n} decision.", "Review of a {title} game: {n} decisions.", n).format(
            title=words.title(rs), n=n
        )
    ]
    if not n:
        return [*lines, _("The saved game holds no decisions to review (it was saved by an earlier version).")]
    costly = [d for d in review.decisions if d.loss is None or d.loss > LOSS_SHOWN]
    lines.append("")
    if costly:
        lines.append(_("Decisions that cost points (expected points lost against the best option):"))
        for d in costly:
            lines += _decision_lines(d, rs)
    else:
        lines.append(_("Every decision was the best one."))
    for p in review.players:
        lines += ["", *_player_lines(p, rs)]
    return lines


def option_text(option: dict, rs: rules.RuleSet, dice: int | None = None) -> str:
    """An option in words: ``keep 1 3 4``, ``reroll all``, ``keep all``, or ``Chance (22)``."""
    if option["action"] == "keep":
        keep = option["keep"]
        if not keep:
            return _("reroll all")
        if dice is not None and len(keep) == dice:
            return _("keep all")
        return _("keep {dice}").format(dice=" ".join(map(str, keep)))
    name = words.box_name(rs, option["box"])
    if "points" not in option:
        return name
    bonus = f" +{option['penta_bonus']}" if option.get("penta_bonus") else ""
    return f"{name} ({option['points']}{bonus})"


def _moment(d: Decision, rs: rules.RuleSet) -> str:
    s = d.step
    if s.rolls_left == 0:
        roll = _("last roll")
    else:
        roll = _("roll {roll} of {rolls}").format(roll=rs.rolls - s.rolls_left, rolls=rs.rolls)
    return _("turn {turn}, {roll}").format(turn=s.turn, roll=roll)


def _decision_lines(d: Decision, rs: rules.RuleSet) -> list[str]:
    s = d.step
    who = clean(s.player) + (" " + _("(auto-commit)") if s.auto else "")
    chosen, best = option_text(d.chosen, rs, len(s.dice)), option_text(d.best, rs, len(s.dice))
    lost = _("not an option here") if d.loss is None else _("lost {loss}").format(loss=f"{d.loss:.2f}")
    dice = " ".join(map(str, s.dice))
    return [
        _("{player}, {moment}: dice {dice}").format(player=who, moment=_moment(d, rs), dice=dice),
        "  " + _("chose {chosen}, best {best}: {lost}").format(chosen=chosen, best=best, lost=lost),
    ]


def _player_lines(p: PlayerReview, rs: rules.RuleSet) -> list[str]:
    name = clean(p.name)  # a name from the saved file: never a control character to the terminal
    who = _("{name} (computer)").format(name=name) if p.computer else name
    n = len(p.decisions)
    if not n:
        return [_("{player}: no decisions recorded.").format(player=who)]
    head = ngettext(
        "{player}: {n} decision, {loss} points lost", "{player}: {n} decisions, {loss} points lost", n
    ).format(player=who, n=n, loss=f"{p.total_loss:.2f}")
    lines = [head, "  " + _("{loss} points lost a decision").format(loss=f"{p.mean_loss:.3f}")]
    if p.expert:
        lines[-1] += ": " + _("expert play (under {limit})").format(limit=f"{EXPERT_MEAN_LOSS:g}")
    if p.first_turn is not None and p.first_turn > 1:
        lines.append("  " + _("(decisions recorded from turn {turn} on)").format(turn=p.first_turn))
    if p.worst:
        lines.append("  " + _("worst:"))
        for d in p.worst:
            chosen = option_text(d.chosen, rs, len(d.step.dice))
            best = option_text(d.best, rs, len(d.step.dice))
            lines.append(
                f"  {d.loss:6.2f}  "
                + _("{moment}: {chosen}, best {best}").format(moment=_moment(d, rs), chosen=chosen, best=best)
            )
    return lines
