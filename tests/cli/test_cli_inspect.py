"""``python -m core inspect``: JSON output, tables, errors, and the perplexity acceptance check."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from core.cli import main
from core.config import PROJECT_ROOT
from core.stats.finding import LEVELS

REPO = PROJECT_ROOT
GETTYSBURG = (
    "Four score and seven years ago our fathers brought forth on this continent, a new nation, conceived "
    "in Liberty, and dedicated to the proposition that all men are created equal."
)
# Written for this test suite; no model can have trained on it.
FRESH = (
    "The ferry to Kallisholm left forty minutes late because the harbour cat refused to leave the ramp, "
    "and nobody aboard minded: the ticket seller handed out plums while the captain argued politely with "
    "a gull about the weather over the eastern reefs."
)


def run_json(capsys, *args: str, stderr: list[str] | None = None) -> dict:
    assert main(["inspect", *args, "--json"]) == 0
    captured = capsys.readouterr()
    if stderr is not None:
        stderr.append(captured.err)
    return json.loads(captured.out)


@pytest.mark.usefixtures("tiny_calibration")
def test_json_output_has_tokens_and_every_score(capsys):
    payload = run_json(capsys, "--model", "tiny-random", "--text", "Hello <b>world</b>, again.")
    assert payload["model"] == "tiny-random"
    assert payload["n_tokens"] == len(payload["tokens"]) > 3
    assert payload["n_dropped"] == 0
    assert "".join(t["token"] for t in payload["tokens"]) == "Hello <b>world</b>, again."
    assert len(payload["scores"]) == 16
    assert payload["perplexity"] > 1


@pytest.mark.usefixtures("tiny_calibration")
def test_methods_and_max_tokens_options(capsys):
    err: list[str] = []
    payload = run_json(
        capsys,
        "--model",
        "tiny-random",
        "--text",
        "one two three four five six seven eight nine ten",
        "--methods",
        "loss",
        "min_k:k=50",
        "--max-tokens",
        "4",
        stderr=err,
    )
    assert set(payload["scores"]) == {"loss", "min_k_50"}
    assert payload["n_tokens"] == 4
    assert payload["n_dropped"] > 0
    assert "tokens were dropped" in err[0]


@pytest.mark.usefixtures("tiny_calibration")
def test_the_finding_comes_first_and_is_written_with_the_placement_and_the_extraction(capsys, tmp_path):
    out = tmp_path / "passage.json"
    assert main(["inspect", "--model", "tiny-random", "--text", FRESH, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    document = json.loads(out.read_text(encoding="utf-8"))
    finding = document["finding"]
    assert printed.startswith(f"finding ({finding['level']}): {finding['headline']}")
    assert finding["level"] in LEVELS
    assert document["placement"]["n_calibration"] >= 300
    extraction = document["extraction"]
    assert extraction["prompt_tokens"] + extraction["continuation_tokens"] <= document["n_tokens"]
    assert len(extraction["matched"]) == extraction["continuation_tokens"]
    assert extraction["against_fresh"]["n_compared"] > 100
    assert "model wrote:" in printed
    skipped = run_json(capsys, "--model", "tiny-random", "--text", FRESH, "--no-extract")
    assert skipped["extraction"] is None
    assert skipped["finding"]["level"] in LEVELS


@pytest.mark.usefixtures("tiny_calibration")
def test_a_passage_too_short_to_split_gets_a_note_not_an_error(capsys):
    payload = run_json(capsys, "--model", "tiny-random", "--text", "Too short.")
    assert payload["extraction"] is None
    assert payload["extraction_note"].startswith("Too short for the extraction test")
    assert payload["extraction_note"] in payload["finding"]["caveats"]


@pytest.mark.usefixtures("tiny_calibration")
def test_text_table_output(capsys, tmp_path):
    passage = tmp_path / "passage.txt"
    passage.write_text("A short passage read from a file.", encoding="utf-8")
    assert main(["inspect", "--model", "tiny-random", "--file", str(passage), "--methods", "loss"]) == 0
    out = capsys.readouterr().out
    assert "perplexity:" in out
    assert "Log-likelihood" in out
    assert "passage" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--text", "   "], "empty or whitespace"),
        (["--file", "/no/such/file.txt"], "Could not read"),
        (["--text", "fine", "--methods", "bogus"], "Unknown method"),
        (["--text", "fine", "--model", "./missing-model-dir"], "does not exist"),
    ],
)
def test_bad_input_is_a_one_line_error_with_exit_2(capsys, args, message):
    model = [] if "--model" in args else ["--model", "tiny-random"]
    assert main(["inspect", *model, *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert message in err
    assert "Traceback" not in err


@pytest.mark.slow
@pytest.mark.usefixtures("tiny_calibration")
def test_real_entry_point_runs_as_a_module():
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "core", "inspect", "--model", "tiny-random", "--text", "Hi there.", "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["n_tokens"] > 0


@pytest.mark.slow
def test_a_first_inspect_with_the_bundled_model_compares_with_400_fresh_passages_and_scores_none(capsys):
    """README step 1 on a fresh store: the bundled model's fresh scores ship with LeakLens, so the finding
    comes with no model pass over the fresh set, among enough passages of similar length for `strong`."""
    err: list[str] = []
    payload = run_json(capsys, "--model", "smollm2-135m", "--text", GETTYSBURG, stderr=err)
    assert payload["calibration"]["source"] == "shipped"
    assert payload["calibration"]["scored_now"] == 0
    assert payload["calibration"]["scored"] == payload["calibration"]["set_size"] >= 1000
    assert payload["placement"]["group_matched"]
    assert len(payload["placement"]["similar_ids"]) >= 400
    assert payload["finding"]["level"] in LEVELS
    assert "Scoring" not in err[0]


@pytest.mark.slow
def test_a_one_time_step_is_announced_in_plain_lines_when_stderr_is_not_a_terminal(tmp_path):
    """A log file, CI or a pipe sees what the wait is for, how many passages and about how long, then a
    line at each tenth; the passages of the passage's length only, and a later run scores none again."""
    passages = (REPO / "assets" / "calibration" / "fresh_passages.jsonl").read_text().splitlines()
    small = tmp_path / "fresh.jsonl"
    own = passages[:100] + passages[606:806]  # a set of one's own, smaller for speed, with short passages
    small.write_text("\n".join(own) + "\n")
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "LEAKLENS_FRESH_PASSAGES": str(small),
        "LEAKLENS_STORE": str(tmp_path / "results.sqlite"),
    }
    command = [sys.executable, "-m", "core", "inspect", "--model", "tiny-random", "--text", GETTYSBURG, "--json"]
    runs = [subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300) for _ in "ab"]
    first, second = runs
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    payload = json.loads(first.stdout)
    scored = payload["calibration"]["scored_now"]
    assert 160 <= scored < len(own) == payload["calibration"]["set_size"]
    lines = first.stderr.splitlines()
    announce = [line for line in lines if line.startswith("Scoring ")]
    assert announce == [announce[0]] and announce[0].startswith(
        f"Scoring {scored} fresh passages of similar length once for this model, about "
    ), first.stderr
    assert announce[0].endswith("; later runs reuse them.")
    tenths = [line for line in lines if line.startswith("fresh passages: ")]
    assert len(tenths) >= 5 and tenths[-1] == f"fresh passages: {scored} of {scored} passages (100%), done"
    assert "\r" not in first.stderr
    assert json.loads(second.stdout)["calibration"]["scored_now"] == 0
    assert "Scoring" not in second.stderr and "fresh passages: " not in second.stderr


@pytest.mark.usefixtures("smollm2_calibration")  # the fresh passages scored once per session
def test_smollm2_recognises_gettysburg_but_not_a_fresh_paragraph(capsys, smollm2):
    famous = run_json(capsys, "--model", "smollm2-135m", "--text", GETTYSBURG, "--methods", "loss")
    fresh = run_json(capsys, "--model", "smollm2-135m", "--text", FRESH, "--methods", "loss")
    assert famous["perplexity"] < 30
    assert fresh["perplexity"] > 60


@pytest.mark.usefixtures("tiny_calibration")
def test_detectors_with_extra_passes_score_one_passage(capsys):
    payload = run_json(
        capsys,
        "--model",
        "tiny-random",
        "--methods",
        "loss",
        "recall",
        "--text",
        "A passage long enough for a prefix comparison to mean something.",
    )
    assert set(payload["scores"]) == {"loss", next(k for k in payload["scores"] if k.startswith("recall"))}
    assert all(isinstance(v, float) for v in payload["scores"].values())


@pytest.mark.usefixtures("tiny_calibration")
def test_zlib_of_a_truncated_passage_compresses_the_scored_tokens_only(capsys):
    """`inspect --max-tokens` on a long text: zlib = −loss / compressed size of exactly the scored tokens."""
    import zlib

    text = FRESH * 20
    payload = run_json(
        capsys, "--model", "tiny-random", "--text", text, "--methods", "loss", "zlib", "--max-tokens", "50"
    )
    assert payload["n_tokens"] == 50
    assert payload["n_dropped"] > 0
    scored = "".join(t["token"] for t in payload["tokens"])
    assert text.startswith(scored)
    assert len(scored) < len(text) // 10
    expected = payload["scores"]["loss"] / len(zlib.compress(scored.encode("utf-8")))
    assert payload["scores"]["zlib"] == pytest.approx(expected, rel=1e-9)
