"""Writes the tables the package ships (pentadice/tables/shipped/: Penta's values, their Parquet export and
metadata, and the second moments) from a table directory where `pentadice solve` wrote them, after checking them
(every chunk, the second moments against the values). Run it when the solver's values change:
`.venv/bin/python tools/ship_tables.py [DATA]` (default: the checkout's data/). tests/test_shipped_tables.py fails
while the shipped files and a fresh solve disagree."""

import shutil
import sys
from pathlib import Path

from pentadice.game import rules
from pentadice.tables import moment_files, shipped, table


def main(source: Path) -> int:
    rs = rules.get_rules("penta")
    loaded = table.verify(rs, source)
    if moment_files.verify_moments(loaded) is None:
        sys.exit(f"no second moments of {rs.name} in {source}: run pentadice solve --rules {rs.name} --data {source}")
    shipped.SHIPPED.mkdir(exist_ok=True)
    files, target = table.TableFiles(source, rs.name), table.TableFiles(shipped.SHIPPED, rs.name)
    for kind in shipped.KINDS:
        shutil.copyfile(getattr(files, kind), getattr(target, kind))
    print(f"wrote the shipped {rs.name} tables to {shipped.SHIPPED}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "data"))
