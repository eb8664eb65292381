"""``python -m core audit``: the plan printed before any work (and alone with ``--plan-only``), one combined verdict
stored as one audit run that names its parts, read back by ``report``, and bad input in one ``error:`` line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.cli import main
from core.data.problems import builtin_problems
from core.results.overview import story_runs
from core.store.results import ResultStore

WHY_NOT = (
    "Loss delta: needs solutions and a reference set (this benchmark's answers only pick an option)",
    "Dataset inference: needs a validation set of held-out texts from the same source",
    "Overlap: needs a training-data index to search",
)


def _code_benchmark(path: Path) -> Path:
    rows = sorted(builtin_problems().problems, key=lambda p: len(p.prompt))[:8]
    path.write_text(
        "".join(
            json.dumps({"task_id": p.task_id, "prompt": p.prompt, "canonical_solution": p.solution}) + "\n"
            for p in rows
        )
    )
    return path


def test_a_benchmark_with_options_plans_order_mcq_and_extraction_and_says_why_not_the_rest(tmp_path, capsys):
    out = tmp_path / "plan.json"
    argv = ["audit", "--model", "tiny-random", "--benchmark", "demo:mcq", "--plan-only", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    assert lines[0] == "Audit of demo:mcq (24 rows): 4 tests"
    assert [line.split(":")[0].strip() for line in lines[1:5]] == [
        "1. Benchmark order",
        "2. Multiple-choice memorisation",
        "3. Option order",
        "4. Extraction",
    ]
    assert all("(about " in line for line in lines[1:5])  # each test's expected time
    for why in WHY_NOT:
        assert f"  {why}" in lines
    plan = json.loads(out.read_text())["plan"]
    assert [p["test"] for p in plan["parts"] if p["applies"]] == [
        "benchmark-order",
        "mcq",
        "mcq-option-order",
        "extraction",
    ]
    assert ResultStore().list_runs() == []  # nothing ran


def test_a_builtin_reference_adds_loss_delta_to_a_code_benchmark(tmp_path, capsys):
    code = _code_benchmark(tmp_path / "code.jsonl")
    assert main(["audit", "--model", "tiny-random", "--benchmark", str(code), "--plan-only"]) == 0
    without = capsys.readouterr().out
    assert "Loss delta: needs a reference set of fresh problems of the same kind" in without
    argv = ["audit", "--model", "tiny-random", "--benchmark", str(code), "--reference", "builtin", "--plan-only"]
    assert main(argv) == 0
    with_reference = capsys.readouterr().out
    assert "Loss delta: Are the benchmark's solutions easier" in with_reference
    assert "Loss delta: needs" not in with_reference


def test_the_audit_runs_its_plan_stores_one_run_and_reports_it(tmp_path, capsys, tiny_calibration):
    store = tmp_path / "store.sqlite"
    shutil.copyfile(tiny_calibration, store)
    out = tmp_path / "audit.json"
    argv = ["audit", "--model", "tiny-random", "--benchmark", "demo:mcq", "--store", str(store), "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert printed.index("Audit of demo:mcq") < printed.index("finding (")  # the plan first, then the verdict
    document = json.loads(out.read_text())
    assert [p["test"] for p in document["parts"]] == ["benchmark-order", "mcq", "mcq-option-order", "extraction"]
    assert document["finding"]["level"] in ("none", "inconclusive")
    assert all(0 <= p["p_value"] <= 1 for p in document["parts"])
    assert document["provenance"]["command"] == "audit"
    runs = ResultStore(store).list_runs()
    audit = next(r for r in runs if r.run_id == document["run_id"])
    assert audit.kind == "audit" and audit.finished
    assert set(audit.key["part_runs"].values()) <= {r.run_id for r in runs}
    # The Results page's list holds the audit once, never its parts as cards of their own.
    assert [r.run_id for r in story_runs(runs)] == [audit.run_id]
    report = tmp_path / "report.html"
    assert main(["report", audit.run_id, "--store", str(store), "--out", str(report)]) == 0
    html = report.read_text()
    assert html.index("Counts as evidence?") < html.index("What would change the conclusion")
    assert "Not run, and why" in html and "Benchmark order · " in html


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--benchmark", "demo:nope"], "error: "),
        (["--benchmark", "demo:mcq", "--model", "tiny-random", "--endpoint", "http://127.0.0.1:9/v1"], "not both"),
    ],
)
def test_bad_input_is_one_error_line(argv, message, capsys):
    assert main(["audit", *argv]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0], err


def test_held_out_texts_and_an_index_add_dataset_inference_and_overlap(tmp_path, capsys, tiny_calibration):
    """A plain-text benchmark with every source given: dataset inference gives its p-value to the combination;
    overlap is shown beside it and never counted (a match is a fact, not a test)."""
    store = tmp_path / "store.sqlite"
    shutil.copyfile(tiny_calibration, store)
    indexes = tmp_path / "indexes"
    build = ["overlap", "index", "--name", "demo", "--dataset", "demo:overlap-train", "--index-dir", str(indexes)]
    assert main(build) == 0
    out = tmp_path / "audit.json"
    argv = ["audit", "--model", "tiny-random", "--benchmark", "demo:overlap-test", "--store", str(store)]
    sources = ["--validation", "demo:overlap-train", "--index", "demo", "--index-dir", str(indexes)]
    assert main([*argv, *sources, "--out", str(out)]) == 0
    document = json.loads(out.read_text())
    parts = {p["test"]: p for p in document["parts"]}
    assert list(parts) == ["benchmark-order", "extraction", "dataset-inference", "overlap"]
    assert 0 <= parts["dataset-inference"]["p_value"] <= 1
    assert parts["dataset-inference"]["adjusted_p_value"] is not None
    assert parts["overlap"]["p_value"] is None and parts["overlap"]["adjusted_p_value"] is None
    assert parts["overlap"]["finding"]["level"] in ("strong", "moderate", "weak", "none", "inconclusive")
    assert "Shown but not counted in the combined verdict (no p-value): Overlap." in document["finding"]["caveats"]
    printed = capsys.readouterr().out
    assert "not run: Multiple-choice memorisation: needs questions with options" in printed
