"""``pentadice verify``: check a table's files whole (:func:`pentadice.tables.table.verify`), and those beside
it: the second moments, the target table, the chances table, the win strategy's tables."""

from __future__ import annotations

import click

from pentadice.faces.cli.options import DATA_OPTION, RULES_OPTION
from pentadice.game import rules
from pentadice.support import exits, paths


@click.command()
@RULES_OPTION
@DATA_OPTION
def verify(rules_name: str, data: str | None) -> None:
    """Check a table's files: the values against their SHA-256, the metadata against the values, and the
    Parquet export (each page's checksum, its SHA-256, and its rows against the values)."""
    from pentadice.tables import chance_tables, moment_files, table, targets, win_store, win_tables

    rs = rules.get_rules(rules_name)
    try:
        checked = table.verify(rs, paths.data_dir(data))
        spread = moment_files.verify_moments(checked)
        target_table = targets.verify_if_built(rs, checked.files.directory)
        saved_win_tables = win_tables.verify_saved(rs, checked.files.directory, checked.values)
        chance_table = chance_tables.verify(rs, checked.files.directory, checked.values)
        stored_win = win_store.verify(rs, checked.files.directory, checked.values)
    except table.TableError as e:
        raise exits.Failure(str(e)) from None
    target_files = targets.TargetFiles(checked.files.directory, rs.name)
    files, meta = checked.files, checked.meta
    click.echo(f"The {rs.name} table in {files.directory} is whole:")
    click.echo(f"  {files.values.name:<24}{meta['checksum']} (of the values)")
    click.echo(f"  {files.parquet.name:<24}{meta['parquet_checksum']} (of the file: compare with sha256sum)")
    click.echo(f"  {files.meta.name:<24}agrees with the values (expected score {meta['expected_score']:.10f})")
    if spread is None:
        from pentadice.solver import moments

        why = "the second moments (SDs) are computed when first needed"
        why = why if moments.automatic(rs) else moments.on_demand_message(rs)
        click.echo(f"  {files.moments.name:<24}missing: {why}")
    else:
        click.echo(f"  {files.moments.name:<24}{spread['checksum']} (second moments, SD {spread['sd_at_start']:.4f})")
    if target_table is None:
        click.echo(f"  {target_files.data.name:<24}not built (`pentadice solve --targets` builds the target table)")
    else:
        sums = f"{target_table.meta['data_checksum']} (target probabilities)"
        click.echo(f"  {target_files.data.name:<24}{sums}")
        click.echo(f"  {target_files.index.name:<24}{target_table.meta['index_checksum']} (their index)")
    if chance_table is not None:
        click.echo(f"  {chance_table[0].name:<24}{chance_table[1]} (the chances table)")
    if stored_win is not None:
        path, digest, current = stored_win
        whose = "built out of core" if current else "of another value table: build them again"
        click.echo(f"  {path.parent.name}/{path.name} {digest} (the win strategy's tables, {whose})")
    for path, digest, current in saved_win_tables:
        whose = "the win strategy's tables" if current else "win tables of another value table: built again when needed"
        click.echo(f"  {path.name:<24}{digest} ({whose})")
