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
