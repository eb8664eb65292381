"""``python -m core mcq``: the JSON layout of the issue, the Chinese sample end to end, exports, errors."""

from __future__ import annotations

import json

from core.cli import main
from core.config import SHARED_DATA_DIR
from core.data.questions import load_mcq
from core.mcq.shuffle import shuffle_questions
from core.store.results import ResultStore

DATA = SHARED_DATA_DIR


def test_chinese_sample_end_to_end_json(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("LEAKLENS_STORE", str(tmp_path / "results.sqlite"))
    export = tmp_path / "shuffled.jsonl"
    code = main(
        [
            "mcq",
            "--dataset",
            str(DATA / "chinese_mcq_sample.jsonl"),
            "--model",
            "tiny-random",
            "--shuffle-seed",
            "5",
            "--export-shuffled",
            str(export),
            "--save",
            "--json",
        ]
    )
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["model"] == "tiny-random"
    assert payload["n"] == 15
    for which in ("original", "shuffled"):
        for kind in ("next_token", "completion"):
            block = payload[which][kind]
            assert len(block["distribution"]) == 5
            assert sum(block["distribution"]) == 15
            mean = sum(score * count for score, count in enumerate(block["distribution"])) / 15
            assert block["mean"] == mean
    assert payload["permutation"] is None
    stored = ResultStore(tmp_path / "results.sqlite").get_run(payload["run_id"])
    assert stored.finished
    assert stored.kind == "mcq"
    assert stored.summary["shuffled"] == payload["shuffled"]
    assert len(payload["questions"]) == 15
    for kind in ("next_token", "completion"):
        scores = [row[kind] for row in payload["questions"]]
        assert [scores.count(k) for k in range(5)] == payload["original"][kind]["distribution"]
        shuffled = [row[f"{kind}_shuffled"] for row in payload["questions"]]
        assert [shuffled.count(k) for k in range(5)] == payload["shuffled"][kind]["distribution"]
    assert (
        payload["mitigation"]["completion"]
        == payload["original"]["completion"]["mean"] - payload["shuffled"]["completion"]["mean"]
    )
    exported = load_mcq(str(export)).questions
    expected = shuffle_questions(load_mcq(str(DATA / "chinese_mcq_sample.jsonl")).questions, seed=5)
    assert [q.options for q in exported] == [q.options for q in expected]


def test_permutation_json_and_table_output(capsys):
    args = [
        "mcq",
        "--dataset",
        str(DATA / "mmlu_sample.jsonl"),
        "--model",
        "tiny-random",
        "--limit",
        "2",
        "--cut",
        "words",
    ]
    assert main([*args, "--permutation-test", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    perm = payload["permutation"]
    assert perm["n_orders"] == 24
    assert len(perm["ranks"]) == 2
    assert 0 <= perm["mean_percentile"] <= 1
    assert [row["order_rank"] for row in payload["questions"]] == perm["ranks"]
    assert payload["cut"] == "words"
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "original" in out
    assert "shuffled" in out
    assert "mitigation" in out
    assert "order test" not in out


def test_bad_input_is_a_clear_error(capsys, tmp_path):
    missing = tmp_path / "nope.jsonl"
    assert main(["mcq", "--dataset", str(missing), "--model", "tiny-random"]) == 2
    assert "error:" in capsys.readouterr().err
    bad = tmp_path / "cols.jsonl"
    bad.write_text(json.dumps({"question": "?", "a": 1}) + "\n")
    assert main(["mcq", "--dataset", str(bad), "--model", "tiny-random"]) == 2
    err = capsys.readouterr().err
    assert "error:" in err
    assert "Traceback" not in err
    assert main(["mcq", "--dataset", str(bad), "--model", "tiny-random", "--option-template", "{letter}"]) == 2
    assert "{text}" in capsys.readouterr().err


def test_answers_outside_the_options_are_reported_and_never_exported(capsys, tmp_path):
    """Rows whose answer names no option are left out with their lines; the export never holds a null answer."""
    rows = [json.loads(line) for line in (DATA / "mmlu_sample.jsonl").read_text().splitlines()[:5]]
    rows[1]["answer"], rows[3]["answer"] = "E", 7
    source = tmp_path / "bad.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    export = tmp_path / "shuffled.jsonl"
    assert (
        main(
            [
                "mcq",
                "--dataset",
                str(source),
                "--model",
                "tiny-random",
                "--no-store",
                "--export-shuffled",
                str(export),
                "--json",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert json.loads(captured.out)["n"] == 3
    assert "2 rows skipped (lines 2, 4: answer 'E' is not one of the options" in captured.err
    exported = [json.loads(line) for line in export.read_text().splitlines()]
    assert len(exported) == 3
    assert all(row["answer"] in "ABCD" and row["answer"] for row in exported)
