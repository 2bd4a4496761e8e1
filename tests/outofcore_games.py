"""What the out-of-core tests share (tests/test_outofcore*.py): the reduced games they build, a progress that
stops a build midway as Ctrl-C does, and a byte flipped on disk."""

from __future__ import annotations

import reduced_games

from pentadice.cluster import engine

# The games named after a rule set: a few MB of tables each (2**6 to 2**8 box masks).
GAMES = {
    # Yatzy's scoring, no Penta box (one flag), the upper bonus reachable.
    "yatzy": reduced_games.GAMES["yatzy, 7 boxes"],
    # Maxi Yatzy: six dice, its 80-subtotal bonus replaced by a smaller one (64 lanes).
    "maxi-yatzy": reduced_games.GAMES["maxi-yatzy, 8 boxes"],
    # Penta: the Penta box (two flags: a layer of states whose box holds 50), its bonus and joker.
    "penta": reduced_games.GAMES["penta, 6 boxes"],
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
