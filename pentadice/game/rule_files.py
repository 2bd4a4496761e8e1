"""House rules: a rule set read from a TOML or JSON file, validated, then registered beside the built-in ones.

A file starts from a built-in rule set (``base``, Penta unless given) and changes what it names: the dice, the
rolls, the upper bonus, the five-of-a-kind bonus and joker, the sheet (its boxes in order, each a known box taken
from a built-in sheet or defined by its kind), a box's points or arguments, the boxes' names. What it leaves out
is the base's. Every command and the server read such a file where they read a rule set's name
(``--rules house.toml``); the tables solved for it carry its definition, so a changed file is solved again,
never read from the old tables. The format, with an example, is in ``docs/house-rules.md``.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import stat
import tomllib
from typing import Any

from pentadice.game import rules
from pentadice.support import inputs

FILE_LIMIT = 64 * 1024  # a sheet of 20 boxes with every argument is about 2 KB
# The most points a box or a bonus may give: twice Maxi Yatzy's 100. The tables that follow the game to its end
# (the score distribution, the chances table) hold a probability per possible score: their size grows with it.
MAX_POINTS = 200
SUFFIXES = (".toml", ".json")
NAME = re.compile(r"[a-z0-9][a-z0-9+-]{0,39}")  # a table file's name: safe on every file system, in a URL
# A box's kind by name, with the arguments that kind takes beside ``points`` (a face's box takes its face from
# its id): how they are written in a file, and the Box field each fills.
KINDS = {name: kind for kind, name in rules.KIND_NAMES.items()}
ARGUMENTS = {  # kind -> (the file's arguments it needs, the ones it may have)
    rules.K_FACE: ((), ()),
    rules.K_KIND_TOTAL: (("count",), ()),
    rules.K_KIND_SUM: (("count",), ()),
    rules.K_PAIRS: (("count",), ("alike",)),
    rules.K_HOUSE: (("sizes",), ("alike",)),
    rules.K_FULL_HOUSE: (("points",), ()),
    rules.K_RUN: (("length", "points"), ()),
    rules.K_STRAIGHT: (("faces", "points"), ()),
    rules.K_CHANCE: ((), ()),
    rules.K_ALL_ALIKE: (("points",), ()),
    rules.K_PENTA: (("points",), ()),
}


class RulesFileError(ValueError):
    """A house-rules file that cannot be read or does not define a rule set: the problem in one line."""


def is_rules_file(text: str) -> bool:
    """Whether ``--rules`` names a file (it ends in ``.toml`` or ``.json``, or holds a path separator) rather than
    a registered rule set."""
    return text.endswith(SUFFIXES) or os.sep in text or (os.altsep is not None and os.altsep in text)


@functools.cache
def _schema():
    """The file's schema (pydantic, imported on first use: only a command given a file pays for it)."""
    from typing import Annotated, Literal

    from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

    small = Annotated[StrictInt, Field(ge=0, le=MAX_POINTS)]
    die = Annotated[StrictInt, Field(ge=1, le=rules.MAX_DICE)]
    face = Annotated[StrictInt, Field(ge=1, le=6)]

    class BoxFile(BaseModel):
        model_config = ConfigDict(extra="forbid")
        id: StrictStr | None = None
        kind: Literal[tuple(KINDS)] | None = None  # type: ignore[valid-type]
        points: small | None = None
        count: die | None = None
        length: face | None = None
        sizes: Annotated[list[die], Field(min_length=2, max_length=2)] | None = None
        faces: Annotated[list[face], Field(min_length=1, max_length=6)] | None = None
        alike: StrictBool | None = None

    class RulesFile(BaseModel):
        model_config = ConfigDict(extra="forbid")
        name: StrictStr
        title: Annotated[StrictStr, Field(min_length=1, max_length=80)] | None = None
        base: StrictStr = rules.DEFAULT_RULES
        dice: die | None = None
        rolls: Annotated[StrictInt, Field(ge=1, le=3)] | None = None
        upper_threshold: Annotated[StrictInt, Field(ge=1, le=6 * rules.MAX_DICE * 6)] | None = None
        upper_bonus: small | None = None
        bonus: small | None = None
        joker: Literal["none", "free", "forced"] | None = None
        joker_needs_points: StrictBool | None = None
        repeat: StrictBool | None = None
        sheet: Annotated[list[StrictStr | BoxFile], Field(min_length=1, max_length=rules.MAX_BOXES)] | None = None
        boxes: dict[StrictStr, BoxFile] = {}
        names: dict[StrictStr, Annotated[StrictStr, Field(min_length=1, max_length=40)]] = {}

    return RulesFile


def _parse(text: str, path: str) -> dict[str, Any]:
    """The file's data: TOML, or JSON for a ``.json`` file."""
    json_file = path.endswith(".json")
    path = inputs.clean(path)  # a file name with a newline or an escape is shown as its escapes
    try:
        data = inputs.loads(text, path) if json_file else tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise RulesFileError(f"{path} is not TOML: {e}") from None
    except inputs.InputError as e:  # it names the file
        raise RulesFileError(str(e)) from None
    except RecursionError:
        raise RulesFileError(f"{path} is not a rules file: it is nested deeper than any rule set") from None
    except ValueError:  # an integer of thousands of digits (Python refuses to read it)
        raise RulesFileError(f"{path} is not a rules file: it holds a number too long to read") from None
    if not isinstance(data, dict):
        raise RulesFileError(f"{path} holds {inputs.json_kind(data)}, not a rule set's fields")
    return data


def _where(loc: tuple) -> str:
    """A pydantic error's location as the file writes it: ``sheet[3].points``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part not in ("str", "BoxFile") and not str(part).startswith(("constrained-", "list[")):
            out += f".{part}" if out else str(part)
    return out


def _known_box(box_id: str, base: rules.RuleSet) -> rules.Box:
    """A box given by its id alone: the base's own, else the first built-in sheet's that has it."""
    for sheet in (base.sheet, *rules.SHEETS):
        for box in sheet:
            if box.id == box_id:
                return box
    raise _unknown(box_id)


def _unknown(box_id: str) -> ValueError:
    """The refusal of a box id no sheet has."""
    return ValueError(f"unknown box {box_id!r}; the known boxes are {', '.join(rules.BOX_IDS)}")


def _box(given, base: rules.RuleSet, start: rules.Box | None = None) -> rules.Box:
    """A box of the file's sheet or ``boxes`` table: ``start`` (a known box) with the arguments given changed,
    or a box defined by its kind and arguments."""
    if isinstance(given, str):
        return _known_box(given, base)
    fields = given.model_dump(exclude_none=True)
    box_id = fields.pop("id", None) or (start.id if start else None)
    if box_id is None:
        raise ValueError("a box defined in the sheet needs its id")
    if box_id not in rules.BOX_NAMES_EN:
        raise _unknown(box_id)
    if start is None and "kind" not in fields:
        start = _known_box(box_id, base)
    kind = KINDS[fields.pop("kind")] if "kind" in fields else start.kind
    needed, optional = ARGUMENTS[kind]
    name = rules.KIND_NAMES[kind]
    if start is None or start.kind != kind:  # a box defined anew: every argument of its kind given
        missing = [a for a in needed if a not in fields]
        if missing:
            raise ValueError(f"box {box_id!r} of kind {name} needs {', '.join(missing)}")
        if (kind == rules.K_FACE) != (box_id in rules.UPPER_IDS):
            raise ValueError(f"box {box_id!r}: the upper boxes are {', '.join(rules.UPPER_IDS)}, of kind face")
        start = rules.Box(box_id, kind, a=rules.UPPER_IDS.index(box_id) + 1 if kind == rules.K_FACE else 0)
    extra = [a for a in fields if a not in (*needed, *optional)]
    if extra:
        raise ValueError(f"box {box_id!r} of kind {name} takes no {', '.join(extra)}")
    changes: dict[str, Any] = {"id": box_id}
    if "points" in fields:
        changes["points"] = fields["points"]
    if "count" in fields or "length" in fields:
        changes["a"] = fields.get("count", fields.get("length"))
    if "sizes" in fields:
        changes["a"], changes["b"] = fields["sizes"]
    if "faces" in fields:
        changes["a"] = sum(1 << (f - 1) for f in set(fields["faces"]))
    if "alike" in fields:
        changes["alike"] = fields["alike"]
    return dataclasses.replace(start, **changes)


def _at(where: str, make, *args, **kwargs):
    """``make(*args, **kwargs)``, its ValueError prefixed with where in the file it arose."""
    try:
        return make(*args, **kwargs)
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None


def rule_set(data: dict[str, Any], path: str = "the rules file") -> rules.RuleSet:
    """The rule set that a file's data (as parsed from TOML or JSON) defines; RulesFileError naming the field at
    fault otherwise."""
    from pydantic import ValidationError

    path = inputs.clean(path)  # a file name with a newline or an escape is shown as its escapes
    try:
        given = _schema().model_validate(data)
    except ValidationError as e:
        first = max(e.errors(), key=lambda err: len(err["loc"]))  # the deepest: a union's branch that fits best
        more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
        where = _where(first["loc"])
        raise RulesFileError(f"{path}: {where + ': ' if where else ''}{first['msg']}{more}") from None
    if not NAME.fullmatch(given.name):
        raise RulesFileError(
            f"{path}: name {given.name[:40]!r} is not a rule set's name: 1 to 40 of a-z, 0-9, '-' and '+', "
            "starting with a letter or digit"
        )
    texts = [("title", given.title or ""), *((f"names.{b}", n) for b, n in given.names.items())]
    for where, text in texts:
        if any(inputs.unsafe_char(c) for c in text):
            raise RulesFileError(f"{path}: {where}: a control or invisible character is not a name's")
    if given.name in rules.BUILT_IN:
        raise RulesFileError(f"{path}: name {given.name!r} is a built-in rule set's; give the house rules their own")
    if given.base not in rules.BUILT_IN:
        known = ", ".join(rules.BUILT_IN)
        raise RulesFileError(f"{path}: base {given.base[:40]!r} is not a built-in rule set: {known}")
    base = rules.REGISTRY[given.base]
    try:
        sheet = list(base.sheet)
        if given.sheet is not None:
            sheet = [_at(f"sheet[{i}]", _box, box, base) for i, box in enumerate(given.sheet)]
        ids = [b.id for b in sheet]
        for box_id, change in given.boxes.items():
            if box_id not in ids:
                raise ValueError(f"boxes.{box_id}: the sheet has no box {box_id!r}")
            if change.id not in (None, box_id):
                raise ValueError(f"boxes.{box_id}: a box changed here keeps its id")
            sheet[ids.index(box_id)] = _at(f"boxes.{box_id}", _box, change, base, start=sheet[ids.index(box_id)])
        unnamed = [b for b in given.names if b not in ids]
        if unnamed:
            raise ValueError(f"names: the sheet has no box {unnamed[0]!r}")
        names = {**dict(base.box_names), **given.names}
        if not any(b.kind == rules.K_PENTA for b in sheet):  # the bonus, the joker and repeat need a Penta box
            asked = [f for f, v in (("bonus", given.bonus), ("repeat", given.repeat)) if v]
            asked += ["joker"] if given.joker not in (None, "none") else []
            if asked:
                raise ValueError(f"{asked[0]}: the sheet has no box of kind penta for it to read")
            given = given.model_copy(update={"bonus": 0, "joker": "none", "repeat": False})
        switches = {
            "dice": given.dice,
            "rolls": given.rolls,
            "upper_threshold": given.upper_threshold,
            "upper_bonus": given.upper_bonus,
            "penta_bonus": given.bonus,
            "joker": given.joker,
            "joker_needs_full": given.joker_needs_points,
            "penta_repeat": given.repeat,
        }
        rs = dataclasses.replace(
            base,
            name=given.name,
            title=given.title or given.name,
            sheet=tuple(sheet),
            boxes=(),
            box_names=tuple((b, names[b]) for b in ids if b in names),
            **{k: v for k, v in switches.items() if v is not None},
        )
        _names_apart(rs, given.names)
        return rs
    except (ValueError, KeyError) as e:
        raise RulesFileError(f"{path}: {e}") from None


def _names_apart(rs: rules.RuleSet, given: dict[str, str]) -> None:
    """ValueError where a name the file gives a box is another box's (its id, name or a short form) or no name at
    all: ``--sheet "ones=3"`` must never fill another box."""
    for box, name in given.items():
        key = rules.name_key(name)
        if not key:
            raise ValueError(f"names.{box}: {name!r} is no name (only spaces, '-' or '_')")
        if key == rules.name_key(rules.BONUS_ID) or key == "bonus":
            raise ValueError(f"names.{box}: {name!r} is the bonus's name")
        for other in rs.box_ids:
            taken = (other, rules.BOX_NAMES_EN[other], rs.box_name(other), *rules.BOX_ALIASES[other])
            if other != box and key in {rules.name_key(t) for t in taken}:
                raise ValueError(f"names.{box}: {name!r} is already a name of the box {other!r}")


def resolve(text: str) -> rules.RuleSet:
    """The rule set that ``--rules`` names: a registered rule set's name, or a house-rules file, read, checked and
    registered under the name it gives (:func:`pentadice.game.rules.register`). UnknownRules or RulesFileError
    (both ValueErrors) otherwise."""
    if text in rules.REGISTRY:
        return rules.REGISTRY[text]
    if is_rules_file(text):
        return rules.register(read(text))
    raise rules.UnknownRules(
        f"unknown rule set {text[:60]!r}; known: {', '.join(rules.REGISTRY)}, or a house-rules file (.toml or .json)"
    )


def read(path: str | os.PathLike[str]) -> rules.RuleSet:
    """The rule set of a house-rules file (TOML, or JSON for a ``.json`` file): RulesFileError naming the file and
    its problem when it cannot be read, is not TOML or JSON, or does not define a rule set."""
    where = os.fspath(path)
    shown = inputs.clean(where)  # a file name with a newline or an escape is shown as its escapes
    try:
        mode = os.stat(where).st_mode
    except OSError as e:
        raise RulesFileError(f"cannot read the rules file {shown}: {e.strerror or e}") from None
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):  # a pipe or a device: it may never end, or never begin
        raise RulesFileError(f"the rules file {shown} is not a regular file")
    try:
        text = inputs.read_text(where, "the rules file", FILE_LIMIT)
    except inputs.InputError as e:
        raise RulesFileError(str(e).replace(where, shown)) from None
    return dataclasses.replace(rule_set(_parse(text, where), where), source=os.path.abspath(where))


def definition(rs: rules.RuleSet) -> dict[str, Any]:
    """``rs`` as a rules file's data (its sheet box by box) that reads back to the same rule set: what ``pentadice
    rules NAME`` prints for house rules to start from. ValueError for a reduced game that leaves boxes of its
    sheet out (a file plays its whole sheet)."""
    if rs.boxes != rs.box_ids:
        raise ValueError(f"{rs.name} leaves boxes of its sheet out of play, which a rules file cannot say")
    sheet = []
    for b in rs.sheet:
        box: dict[str, Any] = {"id": b.id, "kind": rules.KIND_NAMES[b.kind]}
        needed, optional = ARGUMENTS[b.kind]
        for arg in (*needed, *optional):
            value = {
                "points": b.points,
                "count": b.a,
                "length": b.a,
                "sizes": [b.a, b.b],
                "faces": [f for f in range(1, 7) if b.a >> (f - 1) & 1],
                "alike": b.alike,
            }[arg]
            box[arg] = value
        sheet.append(box)
    return {
        "name": rs.name,
        "title": rs.title,
        "dice": rs.dice,
        "rolls": rs.rolls,
        "upper_threshold": rs.upper_threshold,
        "upper_bonus": rs.upper_bonus,
        "bonus": rs.penta_bonus,
        "joker": rs.joker.value,
        "joker_needs_points": rs.joker_needs_full,
        "repeat": rs.penta_repeat,
        "sheet": sheet,
        "names": {b: rs.box_name(b) for b in rs.box_ids if rs.box_name(b) != rules.BOX_NAMES_EN[b]},
    }
