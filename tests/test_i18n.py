"""Two languages, one catalogue: the commands speak Indonesian with the rules text's own box names and
messages (``--lang id`` or the locale), English stays as it was, and the committed catalogue is complete and
compiled (``make messages``)."""

import io
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from pentadice.faces import words
from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.support import i18n

ROOT = Path(__file__).resolve().parent.parent
RULES_TEXT = ROOT.parent / "shared" / "rules"  # the rules texts the project was given (next to the checkout)
LOCALE = ROOT / "pentadice" / "support" / "locale"
PO = LOCALE / "id" / "LC_MESSAGES" / "pentadice.po"
MO = PO.with_suffix(".mo")
SACRIFICE_ID = "Tidak ada kotak terbuka yang menghasilkan poin: salah satu harus dikorbankan"
NO_LOCALE = {"LC_ALL": None, "LC_MESSAGES": None, "LANG": None, "LANGUAGE": None}
# 1 1 3 4 6 on the last roll, the boxes where they score filled: every open box scores 0.
SACRIFICE = ["1", "1", "3", "4", "6", "--rolls-left", "0", "--sheet", "ones=2 threes=3 fours=4 sixes=6 chance=15"]


@pytest.fixture(autouse=True)
def english_after():
    """Each test leaves the process speaking English, as the other tests expect."""
    yield
    i18n.use("en")


def advise(data, *args, env=None):
    return CliRunner().invoke(main, ["advise", "--data", str(data), *args], env={**NO_LOCALE, **(env or {})})


def rules_table(lang: str) -> list[str]:
    """The box names of the rules text's score sheet, in order."""
    path = RULES_TEXT / f"penta-rules.{lang}.txt"
    if not path.exists():
        pytest.skip(f"the rules texts are not next to this checkout ({path})")
    rows = [line.split("|")[1].strip() for line in path.read_text().splitlines() if line.startswith("| ")]
    return rows[1:]  # the header row left out


def test_the_box_names_are_those_of_the_rules_texts():
    english, indonesian = rules_table("en"), rules_table("id")
    penta = rules.PENTA_RULES.box_ids  # the rules texts are Penta's
    assert english == [rules.BOX_NAMES_EN[b] for b in penta]
    i18n.use("id")
    assert [words.box_name(rules.PENTA_RULES, b) for b in penta] == indonesian


def test_the_sacrifice_message_is_the_rules_texts():
    text = (RULES_TEXT / "penta-rules.id.txt").read_text() if RULES_TEXT.exists() else f'"{SACRIFICE_ID}"'
    assert f'"{SACRIFICE_ID}"' in text
    assert i18n.translations("id").gettext(rules.NO_SCORE_MESSAGE) == SACRIFICE_ID


def test_advise_in_indonesian(penta_table_dir):
    result = advise(penta_table_dir, *SACRIFICE, "--lang", "id")
    assert result.exit_code == 0, result.output
    out = result.output.splitlines()
    assert out[0] == "Penta: dadu 1 1 3 4 6, lemparan 3 dari 3 (lemparan terakhir); 5 kotak terisi, 30 poin sejauh ini"
    assert out[2].startswith("Terbaik: Isi Dua: 0 poin (dikorbankan) (perkiraan skor akhir ")
    assert out[3] == SACRIFICE_ID + "."
    assert out[5].split() == ["urut", "pilihan", "perkiraan", "rugi", "SB"]
    shown = {line[6:].rsplit(None, 3)[0] for line in out[6:] if line[:4].strip().isdigit()}  # less value, loss, SD
    assert {"isi Dua 0", "isi Lima 0", "isi Full 0", "isi Straight besar 0", "isi Four of a kind 0"} <= shown


@pytest.mark.parametrize("variable", ["LANG", "LC_MESSAGES", "LC_ALL", "LANGUAGE"])
def test_the_locale_chooses_the_language(penta_table_dir, variable):
    spoken = advise(penta_table_dir, *SACRIFICE, env={variable: "id_ID.UTF-8"})
    assert spoken.exit_code == 0 and SACRIFICE_ID + "." in spoken.output.splitlines()
    assert spoken.output == advise(penta_table_dir, *SACRIFICE, "--lang", "id").output


def test_lang_overrides_the_locale_and_english_is_as_before(penta_table_dir):
    english = advise(penta_table_dir, *SACRIFICE, "--lang", "en", env={"LANG": "id_ID.UTF-8"})
    assert english.exit_code == 0
    assert english.output == advise(penta_table_dir, *SACRIFICE).output  # no locale: English
    assert english.output.splitlines()[3] == rules.NO_SCORE_MESSAGE + "."
    assert "Best: Score Twos: 0 points (sacrifice) (expected final score " in english.output


def test_the_joker_and_the_explanation_in_indonesian(penta_table_dir):
    joker = advise(penta_table_dir, "4", "4", "4", "4", "4", "--sheet", "penta=50", "--lang", "id").output.splitlines()
    assert joker[2].startswith("Terbaik: Isi Empat: 20 poin + 100 bonus Penta (perkiraan skor akhir ")
    assert (
        joker[3]
        == "Joker: Penta baru dengan kotak Penta berisi 50; kotak Empat masih kosong, jadi kotak itu wajib dipakai."
    )
    why = advise(penta_table_dir, "1", "2", "3", "3", "4", "--lang", "id").output
    assert "Alasannya: Menyimpan 3 3 menghasilkan rata-rata " in why and "(paling sering di Tiga: " in why


def test_json_is_the_same_in_every_language(penta_table_dir):
    en = advise(penta_table_dir, *SACRIFICE, "--json", "--lang", "en").output
    assert advise(penta_table_dir, *SACRIFICE, "--json", "--lang", "id").output == en
    assert rules.NO_SCORE_MESSAGE in en


def test_an_unknown_language_is_a_usage_error(penta_table_dir):
    result = advise(penta_table_dir, *SACRIFICE, "--lang", "xx")
    assert result.exit_code == 2
    assert "Invalid value for '--lang': 'xx' is not one of 'en', 'id'" in result.output
    assert "Traceback" not in result.output


def test_a_game_played_in_indonesian_through_a_pipe(penta_table_dir):
    script = "help\nempat\n" + "best\n" * 120

    def play(*lang):
        args = ["play", "--data", str(penta_table_dir), "--players", "Ana,cpu", "--seed", "3", *lang]
        return CliRunner().invoke(main, args, input=script, env=NO_LOCALE)

    result = play("--lang", "id")
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.startswith("Penta: Ana, cpu. Ketik 'help' untuk melihat perintah.")
    assert "Perintah:\n  keep 1 1 4   simpan dadu ini" in out
    assert out.count("== Ana, giliran ") == 13 and "== cpu, giliran 13 dari 13 ==" in out
    assert "Ana, simpan, lempar atau isi? " in out and "\nLemparan 1: " in out
    assert "Empat bernilai 0 di sini" in out or "Ana mengisi Empat: " in out  # the Indonesian box name is read
    for row in ("As", "Bagian atas", "Bonus (63+)", "Straight kecil", "Bagian bawah", "bonus Penta", "TOTAL"):
        assert f"\n{row:<18}" in out
    last = out.strip().splitlines()[-1]
    assert " menang dengan " in last or last.startswith("Seri dengan ")
    english = play("--lang", "en").output

    def totals(text: str) -> str:
        return next(line for line in text.splitlines() if line.startswith("TOTAL"))

    assert totals(out) == totals(english) and "Ana, keep, roll or score? " in english  # the same game


def test_language_from_the_environment():
    env = i18n.from_environment
    assert env({"LANG": "id_ID.UTF-8"}) == "id"
    assert env({"LANG": "en_US.UTF-8", "LC_MESSAGES": "id_ID"}) == "id"
    assert env({"LANG": "id_ID.UTF-8", "LC_ALL": "en_GB.UTF-8"}) == "en"  # LC_ALL before LANG
    assert env({"LANG": "fr_FR.UTF-8"}) == env({"LANG": "C.UTF-8"}) == env({}) == "en"
    assert env({"LANGUAGE": "fr:id", "LANG": "en_US.UTF-8"}) == "id"  # GNU: LANGUAGE is a list, first
    assert env({"LANGUAGE": "id", "LANG": "C"}) == "en"  # ... ignored in the C locale
    assert env({"LANGUAGE": "id"}) == "id"
    assert i18n.choose("id", {"LANG": "en_US"}) == "id" and i18n.choose(None, {"LANG": "id_ID"}) == "id"
    with pytest.raises(i18n.UnknownLanguage, match="unknown language 'xx'"):
        i18n.choose("xx")


def test_language_from_the_browser():
    accept = i18n.from_accept_language
    assert accept("id-ID,id;q=0.9,en-US;q=0.8,en;q=0.7") == "id"
    assert accept("fr-FR,en;q=0.5,id;q=0.4") == "en"
    assert accept("fr, de;q=0.9") == accept("") == accept(None) == "en"
    assert accept("en;q=0.2, id;q=0.8") == "id" and accept("id;q=0, en;q=0.1") == "en"


def test_box_names_in_the_language_spoken_are_read():
    rs = rules.PENTA_RULES
    i18n.use("id")
    assert words.parse_box(rs, "empat") == "fours" and words.parse_box(rs, "Straight kecil") == "small_straight"
    assert words.parse_box(rs, "fours") == "fours" and words.parse_box(rs, "fh") == "full_house"
    i18n.use("en")
    with pytest.raises(rules.UnknownBox):
        words.parse_box(rs, "empat")


def test_the_catalogue_for_the_page():
    en, id_ = i18n.catalogue("en"), i18n.catalogue("id")
    assert en.keys() == id_.keys() and all(k == v for k, v in en.items())
    assert id_[rules.NO_SCORE_MESSAGE] == SACRIFICE_ID and id_["Full house"] == "Full" and id_["Ones"] == "As"
    assert id_["{n} point"] == id_["{n} points"] == "{n} poin"  # a plural message under both its msgids
    assert all(v for v in id_.values()) and "" not in id_
    with pytest.raises(i18n.UnknownLanguage):
        i18n.catalogue("fr")


# The catalogue files: complete, translated, compiled.


def po_catalogue():
    pytest.importorskip("babel", reason="Babel (the dev extra: make install) checks the catalogue files")
    from babel.messages.pofile import read_po

    with PO.open("rb") as fh:
        return read_po(fh)


def test_the_mo_is_compiled_from_the_po():
    from babel.messages.mofile import read_mo, write_mo

    compiled = io.BytesIO()
    write_mo(compiled, po_catalogue())
    compiled.seek(0)
    with MO.open("rb") as fh:
        committed = read_mo(fh)
    fresh = read_mo(compiled)

    def messages(catalog) -> dict:
        def key(x):
            return tuple(x) if isinstance(x, list | tuple) else x

        return {key(m.id): key(m.string) for m in catalog if m.id}

    assert messages(committed) == messages(fresh), "pentadice.mo is stale: run `make messages`"


def test_every_message_of_the_code_is_translated():
    catalog = po_catalogue()
    from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
    from babel.messages.frontend import parse_mapping_cfg

    with (LOCALE / "babel.cfg").open() as fh:  # what `make messages` extracts, as it extracts it
        method_map, options_map = parse_mapping_cfg(fh)
    found = extract_from_dir(str(ROOT), method_map, options_map, keywords={**DEFAULT_KEYWORDS, "t": None})
    used = {message for _file, _line, message, _comments, _context in found}
    held = {m.id: m for m in catalog if m.id}
    missing = sorted(map(str, used - held.keys()))
    assert missing == [], "messages missing from the .po: run `make messages` and translate them"
    assert sorted(map(str, held.keys() - used)) == [], "messages no longer used: run `make messages`"
    untranslated = [
        str(m.id) for m in held.values() if not all(m.string if isinstance(m.string, tuple) else [m.string])
    ]
    assert untranslated == []
    assert [str(m.id) for m in held.values() if m.fuzzy] == []


def test_translations_keep_the_placeholders():
    fields = re.compile(r"\{(\w*)[^{}]*\}")
    wrong = []
    for m in po_catalogue():
        if not m.id:
            continue
        ids = m.id if isinstance(m.id, tuple) else (m.id,)
        strings = m.string if isinstance(m.string, tuple) else (m.string,)
        expected = set(fields.findall(ids[-1]))
        wrong += [(ids[0], s) for s in strings if set(fields.findall(s)) != expected]
    assert wrong == []


def test_review_takes_the_language_too(penta_table_dir, tmp_path):
    save = tmp_path / "game.json"
    args = ["play", "--data", str(penta_table_dir), "--players", "Ana", "--seed", "5", "--save", str(save)]
    CliRunner().invoke(main, args, input="chance\nquit\n", env=NO_LOCALE)

    def review(*lang):
        return CliRunner().invoke(main, ["review", str(save), "--data", str(penta_table_dir), *lang], env=NO_LOCALE)

    assert review("--lang", "id").exit_code == 0 and review("--lang", "en").output == review().output
    bad = review("--lang", "xx")
    assert bad.exit_code == 2 and "Invalid value for '--lang'" in bad.output
