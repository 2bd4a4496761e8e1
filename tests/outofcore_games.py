"""What the out-of-core tests share (tests/test_outofcore*.py): the reduced games they build, a progress that
stops a build midway as Ctrl-C does, and a byte flipped on disk."""

from __future__ import annotations

from family_games import small_maxi

from pentadice.cluster import engine
from pentadice.game import rules


def small(name: str, ids: tuple[str, ...], threshold: int) -> rules.RuleSet:
    """A registered rule set on a sheet of the boxes ``ids`` (2**len masks: a few MB of tables)."""
    rs = rules.get_rules(name)
    sheet = tuple(b for b in rs.sheet if b.id in ids)
    return rs.reduced(sheet=sheet, boxes=tuple(b.id for b in sheet), upper_threshold=threshold)


GAMES = {
    # Yatzy's scoring, no Penta box (one flag), the upper bonus reachable.
    "yatzy": small("yatzy", ("fives", "sixes", "one_pair", "two_pairs", "full_house", "chance", "yatzy"), 25),
    # Maxi Yatzy: six dice, its 80-subtotal bonus replaced by a smaller one (64 lanes).
    "maxi-yatzy": small_maxi(),
    # Penta: the Penta box (two flags: a layer of states whose box holds 50), its bonus and joker.
    "penta": small("penta", ("fives", "sixes", "three_of_a_kind", "full_house", "chance", "penta"), 20),
}


def stop_after(n: int) -> engine.Progress:
    """A progress that raises KeyboardInterrupt (as Ctrl-C in the driver) once ``n`` tasks have run."""
    done = [0]

    def advance(k: int) -> None:
        done[0] += k
        if done[0] >= n:
            raise KeyboardInterrupt

    return engine.Progress(advance=advance)


def flip(path, offset: int, bits: int = 0x40) -> None:
    """Flip ``bits`` of the byte at ``offset`` of the file ``path``, in place."""
    with open(path, "r+b") as fh:
        fh.seek(offset)
        byte = fh.read(1)
        fh.seek(offset)
        fh.write(bytes([byte[0] ^ bits]))
