"""Every sentence a player reads, in one place: options ("Keep 4 and reroll four dice", "Score Fours: 20
points + 100 Penta bonus"), dice, scoring, the advice's text. Box and bonus names follow the rule set, so a
translated or renamed rule set (Yahtzee, Kiriki) speaks its own words. Front ends call these; they do not
write their own.

Every sentence is in the language spoken now (:mod:`pentadice.support.i18n`: English, or Indonesian from the
catalogue); the rules' box names and messages are translated here, where they are shown."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from pentadice.game import rules
from pentadice.game.moves import Keep, Score
from pentadice.support import i18n
from pentadice.support.i18n import N_, _, ngettext
from pentadice.support.inputs import clean

if TYPE_CHECKING:
    from pentadice.advisor.explain import Why
    from pentadice.game.situation import Situation
    from pentadice.players.engine import Game

NUMBERS = (N_("no"), N_("one"), N_("two"), N_("three"), N_("four"), N_("five"), N_("six"))  # up to rules.MAX_DICE


def box_name(rs: rules.RuleSet, box: str) -> str:
    """A box's display name under ``rs``, in the language spoken now (``Fours``, ``Empat``)."""
    return _(rs.box_name(box))


def bonus_name(rs: rules.RuleSet) -> str:
    """The bonus for further five of a kinds: "Penta bonus", "bonus Penta" (named after the box of all dice
    alike on a sheet without a Penta box, which pays none)."""
    return _("{box} bonus").format(box=box_name(rs, rs.penta_id or rs.all_alike_box))


def title(rs: rules.RuleSet) -> str:
    """The rule set's title (``Penta``, ``Yahtzee, free joker``)."""
    return _(rs.title)


def message(text: str | None) -> str | None:
    """One of the rules' messages (the sacrifice warning), translated; None stays None."""
    return None if text is None else _(text)


def parse_box(rs: rules.RuleSet, text: str) -> str:
    """A box as a player names it: what the rule set reads (ids, English names, short forms), or the box's
    name in the language spoken now (``empat``, ``Straight kecil``); :class:`rules.UnknownBox` otherwise."""
    try:
        return rs.parse_box(text)
    except rules.UnknownBox:
        key = rules.name_key(text)
        for box in rs.boxes:
            if rules.name_key(box_name(rs, box)) == key:
                return box
        raise


def dice_count(n: int) -> str:
    return ngettext("{number} die", "{number} dice", n).format(number=_(NUMBERS[n]))


def dice_text(dice) -> str:
    """Dice as a player sees them: ``[1] [3] [4]``."""
    return " ".join(f"[{d}]" for d in dice)


def points_text(points: int) -> str:
    return ngettext("{n} point", "{n} points", points).format(n=points)


def keep_text(keep, rs: rules.RuleSet) -> str:
    """Keeping some dice in words: ``Keep 4 and reroll four dice``."""
    rerolled = rs.dice - len(keep)
    if not keep:
        return _("Keep nothing and reroll all {dice}").format(dice=dice_count(rerolled))
    return _("Keep {kept} and reroll {dice}").format(kept=" ".join(map(str, keep)), dice=dice_count(rerolled))


def _extras(rs: rules.RuleSet, penta_bonus: int, upper_bonus: int) -> str:
    """`` + 100 Penta bonus + 35 upper bonus``, as earned."""
    text = f" + {penta_bonus} {bonus_name(rs)}" if penta_bonus else ""
    if upper_bonus:
        text += " + " + _("{points} upper bonus").format(points=upper_bonus)
    return text


def describe(option, rs: rules.RuleSet) -> str:
    """An option (advisor's :class:`~pentadice.advisor.Option`) as a recommendation."""
    match option.move:
        case Keep(dice=keep):
            return keep_text(keep, rs)
        case Score(box=box):
            text = _("Score {box}: {points}").format(box=box_name(rs, box), points=points_text(option.points))
            text += _extras(rs, option.penta_bonus, option.upper_bonus)
            if option.points == 0 and not option.penta_bonus:
                text += " " + _("(sacrifice)")
            return text
    raise TypeError(option.move)


def short(option, rs: rules.RuleSet) -> str:
    """An option in a table cell."""
    match option.move:
        case Keep(dice=keep):
            kept = " ".join(map(str, keep)) or _("nothing")
            return _("keep {kept}, reroll {dice}").format(kept=kept, dice=dice_count(rs.dice - len(keep)))
        case Score(box=box):
            extra = f" +{option.penta_bonus}" if option.penta_bonus else ""
            extra += " " + _("+{points} bonus").format(points=option.upper_bonus) if option.upper_bonus else ""
            return _("score {box} {points}").format(box=box_name(rs, box), points=option.points) + extra
    raise TypeError(option.move)


def scored_text(rs: rules.RuleSet, player: str, box: str, points: int, penta_bonus: int, upper_bonus: int) -> str:
    """What a scoring move earned: ``Ana scores Fours: 20 points + 100 Penta bonus``."""
    text = _("{player} scores {box}: {points}").format(player=player, box=box_name(rs, box), points=points_text(points))
    return text + _extras(rs, penta_bonus, upper_bonus)


def situation_text(situation: Situation, rs: rules.RuleSet) -> str:
    """One line for people: rule set, roll, dice, score so far."""
    left = situation.rolls_left
    rerolls = _("last roll") if left == 0 else ngettext("{n} reroll left", "{n} rerolls left", left).format(n=left)
    filled = len(situation.sheet.boxes)
    if filled == 0:
        when = _("start of the game")
    else:
        boxes = ngettext("{n} box filled", "{n} boxes filled", filled).format(n=filled)
        when = _("{boxes}, {points} points so far").format(boxes=boxes, points=situation.sheet.score(rs))
    return _("{title}: dice {dice}, roll {roll} of {rolls} ({rerolls}); {when}").format(
        title=title(rs),
        dice=" ".join(map(str, situation.dice)),
        roll=rs.rolls - left,
        rolls=rs.rolls,
        rerolls=rerolls,
        when=when,
    )


def advice_text(advice, rs: rules.RuleSet, top: int, why: Why | str | None = None) -> str:
    """The advice for people: the recommendation, the rules' notes, the explanation, the ranked options.
    ``why``: :func:`pentadice.advisor.explain.explain`'s answer (said in the language spoken now), or a text."""
    from pentadice.advisor.advice import joker_note
    from pentadice.advisor.explain import why_text

    tr = i18n.translations(i18n.current())
    best = advice.best
    lines = [situation_text(advice.situation, rs), ""]
    lines.append(
        _("Best: {option} (expected final score {value})").format(option=describe(best, rs), value=f"{best.value:.3f}")
    )
    if advice.joker:
        scoring = [o for o in advice.options if isinstance(o.move, Score)]
        lines.append((joker_note(rs, advice.situation, scoring, tr) or advice.joker) + ".")
    if advice.warning:  # the last roll: the best option is then the best sacrifice, shown just above
        lines.append(message(advice.warning) + ".")
    elif isinstance(best.move, Keep):
        box = advice.best_box
        lines.append(
            _("Best box if you score now: {option} (expected {value})").format(
                option=describe(box, rs), value=f"{box.value:.3f}"
            )
        )
    if why:
        text = why if isinstance(why, str) else why_text(why.best, why.obvious, rs, tr)
        lines.append(_("Why: {text}.").format(text=text))
    shown = [(o, short(o, rs)) for o in advice.options[:top]]
    width = max(34, *(len(text) + 1 for _o, text in shown))  # 34 fits English; longer words widen the column
    rank, option, expected, loss = _("rank"), _("option"), _("expected"), _("loss")
    spread = all(o.sd is not None for o, _text in shown)  # the SD column, when the advice has the spread
    sd_name = _("SD")  # the standard deviation of the final score
    sd_head = f"{sd_name:>8}" if spread else ""
    lines += ["", f"{rank:>4}  {option:<{width}}{expected:>10}{loss:>9}{sd_head}"]
    for i, (o, text) in enumerate(shown, 1):
        sd = f"{o.sd:>8.2f}" if spread else ""
        lines.append(f"{i:>4}  {text:<{width}}{o.value:>10.3f}{o.loss:>9.3f}{sd}")
    if len(advice.options) > top:
        more = len(advice.options) - top
        lines.append(
            "      "
            + ngettext(
                "({n} more option: --top {all} shows them all)", "({n} more options: --top {all} shows them all)", more
            ).format(n=more, all=len(advice.options))
        )
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

    def upper_rows() -> None:
        row(_("Upper"), [str(t["upper"]) for t in totals])
        row(_("Bonus ({points}+)").format(points=rs.upper_threshold), [str(t["upper_bonus"]) for t in totals])

    upper_done = False
    for box in rs.boxes:  # the upper section's sums after its last box (the first box of the lower section)
        if not upper_done and not (rs.upper_mask >> rs.box_index[box]) & 1:
            upper_rows()
            upper_done = True
        row(box_name(rs, box), [str(p.boxes[box]) if box in p.boxes else "." for p in game.players])
    if not upper_done:  # a reduced game of upper boxes only
        upper_rows()
    row(_("Lower"), [str(t["lower"]) for t in totals])
    if rs.penta_bonus and rs.penta_box >= 0:  # Kiriki and the Yatzy sheets have no such bonus: no row for it
        row(bonus_name(rs), [str(t["penta_bonus"]) for t in totals])
    row(_("TOTAL"), [str(t["total"]) for t in totals])
    if game.dice is not None:
        lines += ["", roll_scores_text(game)]
    return "\n".join(lines)


def roll_scores_text(game: Game) -> str:
    """What the dice showing would score now in each box that may take them."""
    rs = game.rules
    legal, bonus = game.legal_boxes()
    cells = ", ".join(f"{box_name(rs, b)} {p}" for b, p in legal.items())
    extra = f" (+{bonus} {bonus_name(rs)})" if bonus else ""
    text = _("{player}'s roll {dice} would score: {scores}").format(
        player=clean(game.player.name), dice=dice_text(game.dice), scores=cells + extra
    )
    return textwrap.fill(text, SCREEN, subsequent_indent="  ", break_on_hyphens=False)
