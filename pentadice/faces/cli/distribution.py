"""``pentadice distribution``: the exact distribution of the final score under optimal play
(:mod:`pentadice.advisor.distribution` computes it), its summary as text or JSON, the whole of it to a file."""

from __future__ import annotations

import json

import click

from pentadice.faces.cli import loading, options
from pentadice.faces.cli.options import (
    BOX_NAMES_HELP,
    DATA_OPTION,
    RULES_OPTION,
    given_sheet,
    rolls_left_option,
    sheet_option,
)
from pentadice.game import rules
from pentadice.support import exits, interrupts


@click.command(epilog=BOX_NAMES_HELP)
@click.argument("dice", nargs=-1)
@rolls_left_option("Rerolls left with DICE showing")
@sheet_option("ones=3 full house=25")
@click.option("--sheet-file", metavar="FILE", default=None, help="The sheet as box=points text or JSON ('-': stdin).")
@RULES_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--out", "out_path", metavar="FILE", default=None, help="Write the whole distribution (.parquet or .json)."
)
@options.target_option(
    "target_score", help="Also the highest chance of finishing with at least T points (needs `solve --targets`)."
)
@DATA_OPTION
def distribution(dice, rolls_left, sheet_text, sheet_file, rules_name, as_json, out_path, data, target_score) -> None:
    """The exact distribution of the final score under optimal play: mean, SD, percentiles and P(final >= t).

    From the start of a game, a sheet between turns (--sheet), or mid-turn with DICE showing
    (`pentadice distribution 1 1 3 4 6 --rolls-left 1 --sheet "ones=3"`). Exact: forward propagation, no sampling.
    """
    from pentadice.advisor import distribution as dist
    from pentadice.advisor import distribution_report as dist_report

    rs = rules.get_rules(rules_name)
    try:
        dist.check_rules(rs)
    except dist.DistributionError as e:
        raise click.UsageError(str(e)) from None
    sheet, dice_list, rolls_left = _distribution_input(rs, dice, rolls_left, sheet_text, sheet_file)
    target, kind = _distribution_target(out_path)
    if target_score is not None:
        loading.target_table(rs, data)  # missing or damaged: say so before any work
    try:  # too large (Maxi Yatzy from its first turns): refused before its value table is loaded or solved
        dist.check_size(rs, sheet)
    except dist.DistributionTooLarge as e:
        raise click.UsageError(str(e)) from None
    values = loading.load_advisor(rules_name, data, compiled=False).table.values
    if dist.needs_compiling(rs):  # a first run: say why nothing moves for a few seconds
        click.echo(dist.COMPILING_MESSAGE, err=True)
    try:
        result = dist.final_distribution(rs, values, sheet, dice_list, rolls_left)
    except dist.DistributionTooLarge as e:  # Maxi Yatzy from its first turns: refused as Kiriki is, with the sizes
        raise click.UsageError(str(e)) from None
    report = dist_report.report(rs, result, sheet, dice_list, rolls_left)
    if target_score is not None:
        report.update(_p_target_max(rs, data, sheet, dice_list, rolls_left, target_score))
    if target is not None:
        _distribution_write(target, rs, result, report, kind)
    if as_json:
        click.echo(json.dumps(report))
    else:
        for line in _distribution_lines(rs, report, out_path if target is not None else None):
            click.echo(line)
        if target_score is not None:
            click.echo(f"Target {target_score}: at most {100 * report['p_target_max']:.4f}% (playing for it)")


def _distribution_input(rs, dice, rolls_left, sheet_text, sheet_file):
    """``(sheet, dice or None, rolls_left or None)`` of ``distribution``, parsed as ``advise`` parses them."""
    from pentadice.game.situation import Situation, parse_dice

    if sheet_text is not None and sheet_file is not None:
        raise click.UsageError("give the sheet with --sheet or --sheet-file, not both")
    if rolls_left is not None and not dice:
        raise click.UsageError("--rolls-left goes with the DICE showing: give them, or leave --rolls-left out")
    sheet = given_sheet(rs, sheet_text, sheet_file)
    try:
        if not dice:
            return sheet.validate(rs), None, None
        rolls_left = rs.rolls - 1 if rolls_left is None else rolls_left
        situation = Situation.make(rs, parse_dice(rs, " ".join(dice)), rolls_left, sheet)
    except ValueError as e:  # a bad situation or sheet
        raise click.UsageError(str(e)) from None
    return situation.sheet, list(situation.dice), situation.rolls_left


def _distribution_target(out_path):
    """The checked ``--out`` file and its format (``parquet`` or ``json``), before any work; ``(None, None)``."""
    if out_path is None:
        return None, None
    from pentadice.advisor import distribution_report as dist_report
    from pentadice.tables import atomic

    try:
        kind = dist_report.file_kind(out_path)
        return atomic.target(out_path, replaces=dist_report.is_distribution_file), kind
    except (ValueError, atomic.TargetError) as e:  # TargetError is an OSError
        raise click.UsageError(str(e)) from None


def _distribution_write(target, rs, result, report, kind) -> None:
    from pentadice.advisor import distribution_report as dist_report

    meta = {k: v for k, v in report.items() if k != "tail"}
    try:
        dist_report.write(target, rs, result, meta, kind)
    except interrupts.CommittedInterrupt:
        raise exits.Interrupted(f"the distribution had been written to {target.given} already") from None
    except KeyboardInterrupt:
        raise exits.Interrupted(f"nothing was written; {target.given} is as it was") from None
    except OSError as e:
        raise exits.Failure(f"cannot write {target.given}: {e.strerror or e}") from None


def _distribution_lines(rs, report: dict, written: str | None) -> list[str]:
    """The human summary of ``distribution``."""
    filled = len(report["sheet"])
    where = "start of the game" if filled == 0 else f"{filled} boxes filled, {report['score_so_far']} points so far"
    if "dice" in report:
        left = report["rolls_left"]
        where += f"; dice {' '.join(map(str, report['dice']))}, {left} reroll{'' if left == 1 else 's'} left"
    pct = report["percentiles"]
    lines = [
        f"{rs.title}: {where}; optimal (expected-score) play",
        f"Mean:          {report['mean']:.4f}",
        f"SD:            {report['sd']:.4f}",
        f"Range:         {report['min']} to {report['max']}",
        "Percentiles:   " + "  ".join(f"{q}%: {s}" for q, s in pct.items()),
        "P(final >= t):",
    ]
    tail = dict((int(t), p) for t, p in report["tail"])
    shown = [t for t in (100, 150, 200, 250, 300, 350, 400, 500, 600, 800, 1000) if report["min"] < t <= report["max"]]
    lines += [f"  {t:>5}  {_probability_text(tail[t])}" for t in shown]
    if rs.upper_bonus:
        lines.append(
            f"Upper bonus:   {_probability_text(report['p_upper_bonus'])} (the upper boxes end at "
            f"{rs.upper_threshold} or more)"
        )
    if report["p_penta"] is not None:
        name = rs.box_name(rs.penta_id)
        lines.append(f"{name + ' box:':<15}{_probability_text(report['p_penta'])} (it ends with its {rs.penta_points})")
    lines.append(f"Computed exactly (forward propagation) in {report['seconds']:.2f} s")
    if written:
        lines.append(f"Whole distribution written to {written}")
    return lines


def _probability_text(p: float) -> str:
    """A probability to 6 significant digits that never shows a certainty (1 or 0) that is not one."""
    text = f"{p:.6g}"
    return ">0.999999" if text == "1" and p < 1.0 else text


def _p_target_max(rs, data, sheet, dice, rolls_left, target: int) -> dict:
    """``{"target": T, "p_target_max": P}`` for ``distribution --target T``."""
    from pentadice.advisor import reach
    from pentadice.tables import table

    try:
        return {"target": target, "p_target_max": reach.p_target_max(rs, data, sheet, dice, rolls_left, target)}
    except table.TableError as e:
        raise exits.Failure(str(e)) from None
