"""``python -m core order-test`` end to end on the shipped demo, with the tiny random model."""

from __future__ import annotations

import json

from core.cli import main
from core.store.results import ResultStore


def test_order_test_writes_its_finding_shards_and_provenance_and_resumes_from_the_store(tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["order-test", "--model", "tiny-random", "--dataset", "demo:mcq", "--shards", "8", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert printed.index("finding (") < printed.index("p-value")  # the verdict first
    document = json.loads(out.read_text())
    assert document["text_template"] == "{question} {A} {B} {C} {D} {answer}"
    assert document["n_shards"] == 8 and len(document["shards"]) == 8
    assert all(s["n_shuffled"] == 5 and s["exhaustive"] for s in document["shards"])  # 3 examples: every order
    assert 0 <= document["p_value"] <= 1 and document["finding"]["level"]
    assert document["provenance"]["command"] == "order-test"
    run = ResultStore().get_run(document["run_id"])
    assert run is not None and run.finished and run.kind == "benchmark-order"
    # A second call reads the stored shards back: the same numbers, no model needed for them.
    again = tmp_path / "again.json"
    assert main([*argv[:-1], str(again)]) == 0
    assert json.loads(again.read_text())["shards"] == document["shards"]


def test_a_template_picks_the_fields_and_the_limit_the_rows(tmp_path):
    out = tmp_path / "r.json"
    argv = ["order-test", "--model", "tiny-random", "--dataset", "demo:mcq", "--limit", "10", "--shards", "5"]
    assert main([*argv, "--text-template", "Q: {question} A: {answer}", "--no-store", "--out", str(out)]) == 0
    document = json.loads(out.read_text())
    assert document["n_examples"] == 10 and document["text_template"] == "Q: {question} A: {answer}"
    assert "run_id" not in document


def test_without_shards_the_file_gets_shards_of_four_and_says_so(tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["order-test", "--model", "tiny-random", "--dataset", "demo:mcq", "--no-store", "--out", str(out)]
    assert main(argv) == 0
    assert "shards: 6 (the default: 50, or as many shards of 4 examples as the file fills" in capsys.readouterr().out
    document = json.loads(out.read_text())
    assert document["n_shards"] == 6 and all(s["n_shuffled"] == 23 for s in document["shards"])


def test_shuffles_beyond_the_cap_are_refused_before_any_work(capsys):
    argv = ["order-test", "--model", "tiny-random", "--dataset", "demo:mcq", "--permutations", "1000000000"]
    assert main([*argv, "--no-store"]) == 2
    err = capsys.readouterr().err
    assert "--permutations 1,000,000,000 is above the cap of 10,000 shuffles per shard" in err


def test_a_file_whose_rows_are_all_skipped_says_why(tmp_path, capsys):
    path = tmp_path / "empty.jsonl"
    path.write_text("".join(json.dumps({"question": "Q?", "answer": " "}) + "\n" for _ in range(6)))
    argv = ["order-test", "--model", "tiny-random", "--dataset", str(path), "--text-template", "{question} {answer}"]
    assert main([*argv, "--no-store"]) == 2
    err = capsys.readouterr().err
    assert "No example to test: 6 rows skipped (lines 1, 2, 3, 4, 5, 6: no value for answer)" in err
