"""What a user meets around the SDs and the distribution's text: a table solved on demand still gives every option
its SD (the second moments are computed once and saved, or said once to be unsavable), a damaged second-moment file
ends the command naming it, and the distribution's text never shows a certainty that is not one."""

import json
import shutil

import numpy as np
from click.testing import CliRunner

from pentadice.faces.cli import main
from pentadice.faces.cli.distribution import _probability_text
from pentadice.tables import moment_files


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_advise_on_a_table_solved_on_demand_carries_sd_and_saves_the_moments(tmp_path):
    result = run("advise", "1", "2", "3", "4", "5", "--rules", "yahtzee+no-bonus", "--data", tmp_path, "--json")
    assert result.exit_code == 0, result.output
    advice = json.loads(result.stdout)
    assert all(o["sd"] > 0 for o in advice["options"]) and advice["best"]["sd"] > 0
    assert (tmp_path / "yahtzee+no-bonus.m2.npy").is_file()
    # The next advise reads them from the file: the same SDs.
    again = json.loads(
        run("advise", "1", "2", "3", "4", "5", "--rules", "yahtzee+no-bonus", "--data", tmp_path, "--json").stdout
    )
    assert [o["sd"] for o in again["options"]] == [o["sd"] for o in advice["options"]]


def test_a_damaged_second_moment_file_is_named_not_silently_dropped(tmp_path):
    assert (
        run(
            "solve", "--skip", "chances,win,win-end", "--rules", "yahtzee+no-bonus", "--data", tmp_path, "--json"
        ).exit_code
        == 0
    )
    m2 = np.load(tmp_path / "yahtzee+no-bonus.m2.npy", mmap_mode="r+")
    m2[0, 100, 5] += 1.0
    m2.flush()
    del m2
    result = run("advise", "1", "2", "3", "4", "5", "--rules", "yahtzee+no-bonus", "--data", tmp_path, "--json")
    assert result.exit_code == 1
    assert "yahtzee+no-bonus.m2.npy (the second moments) does not match its checksum" in result.output
    assert "Traceback" not in result.output


def test_probability_text_never_shows_a_false_certainty():
    assert _probability_text(1.0) == "1"
    assert _probability_text(0.9999999987) == ">0.999999"
    assert _probability_text(0.0) == "0"
    assert _probability_text(1e-300) == "1e-300"
    assert _probability_text(0.4336745) == "0.433675"


def test_where_lists_what_lies_beside_a_table(tmp_path):
    assert (
        run(
            "solve", "--skip", "chances,win,win-end", "--rules", "yahtzee+no-bonus", "--data", tmp_path, "--json"
        ).exit_code
        == 0
    )
    listed = run("where", "--data", tmp_path)
    assert "yahtzee+no-bonus      solved: expected score 245.8707745141 (+ SDs 8 MB)" in listed.output


def test_second_moments_too_long_to_run_unasked_are_built_only_on_request(tmp_path, monkeypatch):
    """Maxi Yatzy's second-moment pass takes most of an hour: `solve` leaves it out and says how to build it,
    `advise` gives no SDs rather than starting it, and `solve --moments` builds it. Here every rule set is made
    such a one (solving Maxi Yatzy itself takes minutes)."""
    from pentadice.solver import moments

    monkeypatch.setattr(moments, "AUTOMATIC_WORK", 0)
    name = "yahtzee+no-bonus"
    result = run("solve", "--skip", "chances,win,win-end", "--rules", name, "--data", tmp_path, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.splitlines()[-1])
    assert summary["sd"] is None and summary["files"]["m2"] is None
    assert not (tmp_path / f"{name}.m2.npy").exists()
    human = run("solve", "--skip", "chances,win,win-end", "--rules", name, "--data", tmp_path)
    assert human.exit_code == 0 and f"solve --rules {name} --moments" in human.output, human.output
    advice = run("advise", "1", "2", "3", "4", "5", "--rules", name, "--data", tmp_path, "--json")
    assert advice.exit_code == 0, advice.output
    assert all(o.get("sd") is None for o in json.loads(advice.stdout)["options"])
    assert not (tmp_path / f"{name}.m2.npy").exists()  # nothing started behind the user's back
    forced = run("solve", "--skip", "chances,win,win-end", "--rules", name, "--data", tmp_path, "--json", "--moments")
    assert forced.exit_code == 0, forced.output
    assert json.loads(forced.output.splitlines()[-1])["sd"] > 0
    advice = run("advise", "1", "2", "3", "4", "5", "--rules", name, "--data", tmp_path, "--json")
    assert all(o["sd"] > 0 for o in json.loads(advice.stdout)["options"])


def test_second_moments_that_cannot_be_saved_are_said_once(tmp_path, penta_table_dir, monkeypatch):
    data = tmp_path / "ro"
    shutil.copytree(penta_table_dir, data)
    for f in data.glob("penta.m2.*"):
        f.unlink()

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(moment_files, "save_moments", refuse)  # a table directory that cannot be written (we are root)
    result = run("advise", "11346", "--data", str(data))
    assert result.exit_code == 0, result.output
    assert result.stderr.count("cannot be saved in") == 1, result.stderr
    assert "every run computes them again" in result.stderr and "--data" in result.stderr
