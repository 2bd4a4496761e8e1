"""The compiled passes stay the same bits: SHA-256 of what each pass gives, taken at commit 116af9c before the
value, second-moment, utility, target and forward-distribution passes became one shared traversal.
The rewrite must give every one of these tables to the bit; a change of one unit in the last place fails here.

What is here, beside what other files check already (tests/test_checksums.py: the values of every rule set but
Maxi Yatzy; tests/test_moments.py: the second moments of Penta, Yahtzee and Kiriki; tests/test_distribution.py:
Penta's distribution from the start):

- Maxi Yatzy's values (the 80-lane build on its full sheet; two minutes on two cores: on request);
- the second moments of the other four registered rule sets;
- the utility tables of the win strategy's thetas (its grid, both signs, and the variance's +-0.0005) for Penta,
  a few for Kiriki (its fixed point; 0.05 is its cap) and Yatzy;
- the end-game tables (2 boxes open) of Penta and Yatzy (Kiriki's is refused by the code);
- the target tables of games with 8 of the sheet's boxes (Penta, Kiriki, Yatzy): every array of ``Built`` and
  the float64 rows before they are rounded to uint16 (a digest of each state's row, in table order); the full
  games' tables take ten minutes each: on request;
- forward distributions: Yatzy and Yahtzee from the start, Penta from a sheet and mid-turn (Kiriki's is refused;
  ``distribution --target`` adds the target table's probability, plain Python, no pass of its own);
- a 6-dice game of 8 of Maxi Yatzy's boxes at its threshold of 75 (80 lanes, the kernels' other compiled build):
  values, second moments, utility, end-game and target tables and distributions.

Every digest is of ``np.ascontiguousarray(array).data`` (C order; NaN where a state cannot occur); the passes
gave the same bits with 1 and 2 threads when they were taken. Long checks run only when asked:
``PENTADICE_MAXI_CHECKSUM=1`` (Maxi Yatzy's values) and ``PENTADICE_TARGETS_CHECKSUM=1`` (the full target
tables of Penta and Kiriki: 3.5 GB of memory, about ten minutes each on two cores).

Should a deliberate change of the method alter a table, check it against the brute-force tests first, then
replace the digest and say why in the commit.
"""

import functools
import hashlib
import os

import numpy as np
import pytest
import reduced_games
from solutions import solved, with_second_moments

from pentadice import solver
from pentadice.advisor import distribution
from pentadice.game import rules
from pentadice.game.sheet import Sheet
from pentadice.solver import moments, targets, utility

THREADS = 2  # the digests do not depend on it (checked with 1 and 2 threads when they were taken)

BOXES_OF_PENTA = ("ones", "threes", "fives", "sixes", "full_house", "large_straight", "chance", "penta")
# Small games of full-size dice and rolls: their target tables take seconds, not minutes. The Maxi Yatzy one
# keeps its threshold 75 (80 lanes) and can reach it (fours, fives and sixes: up to 90).
SMALL = reduced_games.pick(
    "penta, 8 boxes",
    "kiriki, 8 boxes",
    "yatzy, 8 boxes",
    "maxi boxes, 80 lanes",
)


def digest(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).data).hexdigest()


def rules_of(name: str) -> rules.RuleSet:
    return SMALL[name] if name in SMALL else rules.get_rules(name)


@functools.cache
def values_of(name: str) -> np.ndarray:
    """The value table (as ``solver.solve`` gives it) of a registered rule set or a small game, once a session."""
    return solved(name).values if name in rules.REGISTRY else solver.solve(SMALL[name]).values


def need(variable: str, what: str) -> None:
    if os.environ.get(variable) != "1":
        pytest.skip(f"{what}: set {variable}=1 to check it")


# Maxi Yatzy's values: SHA-256 of ``solver.solve(rules.get_rules("maxi-yatzy")).values``, float64 shaped
# (1, 1048576, 76).
MAXI_VALUES = "cba3d784a536583e9d4683630abd68dbe610a911d93d439aac413e71b4fd540b"


@pytest.mark.slow
def test_maxi_yatzy_values_are_the_same_bits():
    need("PENTADICE_MAXI_CHECKSUM", "Maxi Yatzy's values take about two minutes to solve (two cores)")
    values = values_of("maxi-yatzy")
    assert values.shape == (1, 1 << 20, 76) and values.dtype == np.float64
    assert digest(values) == MAXI_VALUES


# Second moments: ``moments.second_moments(rs, values)`` (float64, the values' shape).
MOMENTS = {
    "yahtzee+forced-joker": "efea1902989ad2214704434830eff25905f659976960c101bb6080a7c4cb7585",
    "yahtzee+no-joker": "2671cf91d9d42cc9879991dd4d9909d91236fedec1cb0647280447c82cefb09a",
    "yahtzee+no-bonus": "69a472bc15c50902c5bb4cf4dc5fbf2c54433a95dae1e7052f2711bb2912e7b4",
    "yatzy": "42146e5aaf953bc691220e784951cec6cc8411bd21ee499a379ea8183db1b7f4",
    "maxi boxes, 80 lanes": "463244f19b66ca6eba32d1b7c2a7a8b935ce7c97c5e80dde75f0dadb828eaf31",
}


def test_every_rule_set_but_maxi_yatzy_has_its_second_moments_checked():
    in_test_moments = {"penta", "yahtzee", "kiriki"}
    assert (set(MOMENTS) - set(SMALL)) | in_test_moments == set(rules.REGISTRY) - {"maxi-yatzy"}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MOMENTS))
def test_second_moments_are_the_same_bits(name):
    rs = rules_of(name)
    if name in rules.REGISTRY:  # the session's, computed once for the files that check them
        m2 = with_second_moments(name)[2]
    else:
        m2 = moments.second_moments(rs, values_of(name), threads=THREADS)
    assert m2.shape == rs.table_shape and m2.dtype == np.float64
    assert digest(m2) == MOMENTS[name]


# Utility tables: ``utility.solve_theta(rs, theta)``, float64 shaped (n_flags, 2**n_boxes, rs.lanes).
THETAS = {
    "penta": {
        0.002: "d89e04f52d87be95cfdda5b8e50ef39282173d75af85e273a3b09be883adcc70",
        0.004: "319b2f4b7a2bec294744aa8a3c587f7f14b78878ff230e418e2be02e2ed5c27c",
        0.007: "0d7e48e3accb162e25b535dcf815c1c717b2df774ab4b975cf7883e920ddade3",
        0.01: "ecb6fc7d97819c933dae87f9d08b2dd6c9636676b396a63532c22d657e77ba59",
        0.015: "b4eab6a93a07bbadca6a31b82a9b128b913d298d5c0e0afaddaa559ecbb8e9ea",
        0.02: "e3876e08cdeb9f0f08c3a157067ff35917f7edabdf4b138cf56aa2c7b46b730e",
        0.03: "cdfe891836dd5f5b42545d7bb24692e04bd12d9ea9ecb164e406b71e0ed77eca",
        0.05: "0d64272b953b353e2883ed91e469c7cadd8b8333f68408ae8c997b36a647a87a",
        -0.002: "e0f902c091427b687e1af9b1b7c493c4e9402cc1ef949c6288cf826d732d3d81",
        -0.004: "fb9d0dab2c73590793b212f2a6c71d103dae875fb817275fe93e04564b7bda64",
        -0.007: "add798f3aea41716e5e865a0db3914ccf2139427de7c13079a8e922698f95019",
        -0.01: "b6d8609906dd8b2ceff5581349e2479a8bacbd37e4dc5498dae9e2777d2b5f0e",
        -0.015: "8e51c3d2341a5f63ff285b8e089bd19e169059b74cf1f1a0dd3ef18541eece60",
        -0.02: "07b245ffacca8bfcf911efaa2689079a62045efba7fa85a0718e3fe776e04b59",
        -0.03: "c15df5b280e56fdca9efa1093c9aaffa1b87b247e2e551ffce195d89f844aaf8",
        -0.05: "e5e1d43de159f0e4606737752798fc1fc63501f66bd1199b740eeeb795f7f10c",
        0.0005: "ff7eb8ff199f0589bb3c9198908686cf98cb41142d569246d72ba47386996f73",
        -0.0005: "3236639523df058e95532afd618976a526afa9a6bf57720aed9c308da94ee68c",
    },
    "kiriki": {
        0.02: "6a197ce3d5344fdc653542d6061979210406995a1c5d2bd98c5d9092524e5adb",
        -0.02: "f79415c5d98268ae0b480277a7c9c66fd283402f61a44bb03ad1ef2ed2ffddd1",
        0.05: "38d4e27c1c17f0c2f0ed27df9c92d16642c8e71018faab93d4867fc731afa663",
        -0.05: "ab499918eaa663e13b01933a4cb61393e819671931433f28999e1dd2b7e28f2b",
    },
    "yatzy": {
        0.02: "b76b63fe5144b4db69cacc3025aa18c47b80f8d5ba6ee470a893ede4d502aa75",
        -0.02: "7a11cf8a9fc0aa5a7777be08a0f5f9ce696aed99e5c72af421d9426f2746aac1",
    },
    "maxi boxes, 80 lanes": {
        0.02: "9e4bbcd42d483f01530e382d58a1e8fcb100c3df717753e482a924b93fa23415",
        -0.02: "b6be097a0f89ddf2553637ea2db1d1058fec747557e8ea4d28d9a9b745d6cdaa",
    },
}


@pytest.mark.slow
@pytest.mark.parametrize(("name", "theta"), [(n, t) for n, by in THETAS.items() for t in by], ids=str)
def test_utility_tables_are_the_same_bits(name, theta):
    rs = rules_of(name)
    table = utility.solve_theta(rs, theta, THREADS)
    assert table.shape == (rs.n_flags, 1 << rs.n_boxes, rs.lanes) and table.dtype == np.float64
    assert digest(table) == THETAS[name][theta]


# End-game tables: ``utility.solve_endgame(rs, max_open)``, both arrays ``(Wt, rowix)``.
ENDGAME = {
    "penta": {
        2: {
            "Wt": "b736df9142aaad73c105c2b2195fb86f27d7d4efe5646b098e90ef7d3f4d3415",
            "rowix": "f7bd684564a27df9faf151718f9e8d47fcacdd5a79fe2efcd31fed8dae35be12",
        },
    },
    "yatzy": {
        2: {
            "Wt": "ef3bc2acdfb3a899dec4fd5124a74f6a316f8108eb4bda3bb7ec4acfe7e81c7a",
            "rowix": "6b4a42d230ec52a952b06519a41d78a7cf509273985cf45ebce48efcdb821a09",
        },
    },
    "maxi boxes, 80 lanes": {
        2: {
            "Wt": "f12f6536ae89c83a11e3eecfabfb012622da498e73841166c88a7561b9e04472",
            "rowix": "323427cb820910b5e890a49c56b3e32721eef243654946df344c1905aae209ff",
        },
    },
}


@pytest.mark.slow
@pytest.mark.parametrize(("name", "max_open"), [(n, k) for n, by in ENDGAME.items() for k in by], ids=str)
def test_endgame_tables_are_the_same_bits(name, max_open):
    wt, rowix = utility.solve_endgame(rules_of(name), max_open, THREADS)
    assert {"Wt": digest(wt), "rowix": digest(rowix)} == ENDGAME[name][max_open]


# Target tables: ``targets.build(rs)``: its arrays ``first``, ``count``, ``offset`` (int64, the table's shape)
# and ``data`` (uint16), its counts, and ``rows``: the digest of each state's float64 row (``build``'s ``rows``),
# 32 bytes a state in an array of the table's shape (zeros where no state), before the rows are rounded.
TARGETS = {
    "penta": {
        "first": "aa7a6d61306eec515280c6f603453331316cb59d1fafed9cc7e73cb7368cbda7",
        "count": "8a831190aecc47f279d8e84d2030af542ee14876b921cb3cbdda23501d75a145",
        "offset": "d0abbfd0547d68386291ac0b69fe516efa6eb2dd371bae554f02916660f5d4d6",
        "data": "560c1963f4198267ce4fc0ba6ef804b7a46c77adf84e58954a549f7ee475f83f",
        "rows": "41aba3cc8e653d4bee7f03c90ce1aff17b98aaa16ea7a14e3ad9a43b3c17f403",
        "lanes": 282163866,
        "longest": 1183,
        "stored": 195385869,
    },
    "kiriki": {
        "first": "aa7a6d61306eec515280c6f603453331316cb59d1fafed9cc7e73cb7368cbda7",
        "count": "1f82138af4029ae350685f6b97b021b182e74b85ee432f435d938bdfd3a89bae",
        "offset": "397e5040fc6d089bea382d9ea13566f7fcdf4c6c87b3dd0c67b639df587474e1",
        "data": "849ef6115d725857d49b11370cc7874e4c6f6df8e66aafbe06e93be977339fb4",
        "rows": "883b0bbd2f67ee90f6d489e235fd52a47c0d7c2ee3e459ceb02bf73077b99715",
        "lanes": 228241631,
        "longest": 786,
        "stored": 138388364,
    },
    "penta, 8 boxes": {
        "first": "71206462b6da8afb5e191f757d7ea18cfd20b916a50a3349852b8e879ad9ef77",
        "count": "e45eeabae29a4cfea6a856251f52ea90e595a624d66ab413b138662433c6937e",
        "offset": "253257259b750cb135c70a90e076d64bdb0721e33a105e0bd17c0e4a7f6a26d6",
        "data": "34d1002ebc41efec663a14bff23e541b488c68a3550d8a73bb99be9202682434",
        "rows": "ff6e3a558f61f4202451a93dd0b1a74caf254de7a0e76fecabd5525ed904fbd6",
        "lanes": 3307375,
        "longest": 901,
        "stored": 2761086,
    },
    "kiriki, 8 boxes": {
        "first": "71206462b6da8afb5e191f757d7ea18cfd20b916a50a3349852b8e879ad9ef77",
        "count": "c3b67f5ce45f444d4dea5b6b8f19e8b2c131ca9ad51212313febdeb3bda49533",
        "offset": "7fb3c7e3a9d1d65725c891ca633ae006da9be53c85fa4a54f1822d464af07a9b",
        "data": "399ff5184a30e44710597be4fdc70d0c460667e6cc213fa29680ceb2ba3ab155",
        "rows": "f8c3385d41545277f4626623c185c6a2d564de3e7e136cd4777885eaa47c6186",
        "lanes": 3727582,
        "longest": 591,
        "stored": 2107360,
    },
    "yatzy, 8 boxes": {
        "first": "86fdf4eebe303486ccf3b83494813b266158281d4dbdb6e30b418ff73da2796e",
        "count": "70109d535bca8608db15cc2716d8f0f0b5b0aa79b0fc9c1f1215df2157f214de",
        "offset": "e3b9943e33f220c1163d08548c587a9204b13fb34f6e7efef160e7ef488fb111",
        "data": "336dd1c89f42546d0b840ec3d07ceee2c691681efb049c66347806876bc4ec1b",
        "rows": "a87d46d8bd26c16b9f0df8609f0a2c5f4aa19a2ff143219375ee891bdc3b28fb",
        "lanes": 814560,
        "longest": 246,
        "stored": 775603,
    },
    "maxi boxes, 80 lanes": {
        "first": "21ecaf7ad9f72bad7cb76a42df8081b8012e9ec1dd12c4f30651dc20b0173023",
        "count": "da3a2c97b5eadd01a5503e35e8a3054310f4b07077822f57baeb13411c675cd6",
        "offset": "384ed9fc3f8a03d2e0d463ae6201c3c24b3a627fee1ec74533e780aaf919b82e",
        "data": "bff28f31f6bcc66773b652bad347a8b4ebaf3863777d41b6f150780d927017d7",
        "rows": "88948d9b77a1d4931b12cd682692823215a40cec531be3df41399d85cd5a78ee",
        "lanes": 1015050,
        "longest": 370,
        "stored": 893990,
    },
}
LONG_TARGETS = ("penta", "kiriki")  # ten minutes each: on request


class RowDigests(dict):
    """``build``'s ``rows``: keeps each row's SHA-256, not the row (Penta's rows are gigabytes)."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        super().__init__()
        self.digests = np.zeros((*shape, 32), dtype=np.uint8)

    def __setitem__(self, state, row) -> None:
        self.digests[state] = np.frombuffer(hashlib.sha256(np.ascontiguousarray(row).data).digest(), np.uint8)


def target_digests(rs: rules.RuleSet) -> dict:
    rows = RowDigests(rs.table_shape)
    built = targets.build(rs, threads=THREADS, rows=rows)
    out = {key: digest(getattr(built, key)) for key in ("first", "count", "offset", "data")}
    out.update(rows=digest(rows.digests), lanes=built.lanes, longest=built.longest, stored=len(built.data))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", list(TARGETS))
def test_target_tables_are_the_same_bits(name):
    if name in LONG_TARGETS:
        need("PENTADICE_TARGETS_CHECKSUM", f"the target table of {name} takes about ten minutes to build")
    assert target_digests(rules_of(name)) == TARGETS[name]


# Distributions: ``distribution.final_distribution(rs, values, sheet, dice, rolls_left)`` of each case (rule
# set, sheet, dice, rolls left): the offset, the number of scores and the digest of the probabilities.
PENTA_SHEET = "ones=3 twos=6 threes=9 fours=12 fives=15 chance=20 penta=50 full_house=25"
CASES = {
    "yatzy from the start": ("yatzy", None, None, None),
    "yahtzee from the start": ("yahtzee", None, None, None),
    "penta sheet": ("penta", PENTA_SHEET, None, None),
    "penta sheet, 1 2 3 4 6, 2 left": ("penta", PENTA_SHEET, (1, 2, 3, 4, 6), 2),
    "penta sheet, 6 6 6 6 1, 1 left": ("penta", PENTA_SHEET, (6, 6, 6, 6, 1), 1),
    "penta sheet, 5 5 5 5 5, 0 left": ("penta", PENTA_SHEET, (5, 5, 5, 5, 5), 0),
    "maxi boxes from the start": ("maxi boxes, 80 lanes", None, None, None),
    "maxi boxes, 1 3 3 5 6 6, 2 left": ("maxi boxes, 80 lanes", None, (1, 3, 3, 5, 6, 6), 2),
}
DISTRIBUTIONS = {
    "yatzy from the start": (10, 365, "79f98de2126451fe03b00678bded844a662e9bb160fd48f91bdd9ed8c145e30f"),
    "yahtzee from the start": (12, 1564, "6f711e17ec157baa1c39dfeac64abbab60662c8fb674e6dfd53e15775795e57d"),
    "penta sheet": (140, 696, "e52b39bf9c4f825bc3f02d4d8a067d9e95d22684cab39c665085926f925d488e"),
    "penta sheet, 1 2 3 4 6, 2 left": (170, 566, "e61ff3b7e1538a158fe7a2897f8c34d26d123ee0d38c09781821d4854f37def8"),
    "penta sheet, 6 6 6 6 1, 1 left": (199, 637, "888bb38460f0e6ba27012964461b5a6f47e25f7a4115d4c1caa2ad0b4c2635e6"),
    "penta sheet, 5 5 5 5 5, 0 left": (280, 556, "8449817fa04c7748c967db18543320bc51325941e2d5f0d8e1c12e8ec0ab96eb"),
    "maxi boxes from the start": (6, 368, "550ef7ebe06fd04939c463d2f8819a45af767b9f7e4fa3a2abf9a9dbb170493f"),
    "maxi boxes, 1 3 3 5 6 6, 2 left": (6, 368, "f75525cfdc627c0f1c2c979a6f734dbb7bd94525fd0499a593980155a6760fcd"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(DISTRIBUTIONS))
def test_distributions_are_the_same_bits(case):
    name, sheet, dice, rolls_left = CASES[case]
    rs = rules_of(name)
    dist = distribution.final_distribution(
        rs, values_of(name), Sheet.parse(sheet, rs) if sheet else None, dice, rolls_left, threads=THREADS
    )
    assert (dist.offset, len(dist.probs), digest(dist.probs)) == DISTRIBUTIONS[case]


# The 6-dice game's values (the 80-lane value kernel; everything else of it above starts from them).
SMALL_VALUES = {
    "maxi boxes, 80 lanes": "5e3b35b4ab609fc13f41a29d5a390678c8e75256cf07430072cc58733f74735c",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SMALL_VALUES))
def test_small_games_values_are_the_same_bits(name):
    values = values_of(name)
    assert values.shape == SMALL[name].table_shape
    assert digest(values) == SMALL_VALUES[name]
