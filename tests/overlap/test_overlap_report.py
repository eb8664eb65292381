import json

import pytest

from core.overlap.matching import SearchSettings, search
from core.overlap.report import build_contamination_report, write_outputs
from tests.overlap.conftest import TEXT_INDEX


def test_report_means_and_files(embedded, test_set, tmp_path):
    matches = search(embedded, [TEXT_INDEX], [test_set], SearchSettings())
    report, files = write_outputs(matches, tmp_path)
    plain = [m.score for m in matches if m.train_dataset == "train_plain"]
    chat = [m.score for m in matches if m.train_dataset == "train_chat"]
    assert report.scores[("eval_mmlu", f"{TEXT_INDEX}/train_plain")] == pytest.approx(sum(plain) / len(plain))
    assert report.scores[("eval_mmlu", f"{TEXT_INDEX}/train_chat")] == pytest.approx(sum(chat) / len(chat))
    assert report.matched[("eval_mmlu", f"{TEXT_INDEX}/train_chat")] == sum(s > 0 for s in chat)
    tsv = (tmp_path / "contamination_report.tsv").read_text(encoding="utf-8").splitlines()
    assert tsv[0] == f"eval_dataset\t{TEXT_INDEX}/train_plain\t{TEXT_INDEX}/train_chat"
    assert tsv[1] == f"eval_mmlu\t{sum(plain) / len(plain):.4f}\t{sum(chat) / len(chat):.4f}"
    assert sorted(p.name for p in files) == [
        "contamination_report.tsv",
        f"eval_mmlu__{TEXT_INDEX}_train_chat.jsonl",
        f"eval_mmlu__{TEXT_INDEX}_train_plain.jsonl",
    ]
    plain_file = tmp_path / f"eval_mmlu__{TEXT_INDEX}_train_plain.jsonl"
    rows = [json.loads(line) for line in plain_file.read_text().splitlines()]
    assert len(rows) == len(test_set)
    first = rows[0]
    assert first["test_id"] == "q0"
    assert first["score"] == 1.0
    assert first["best_doc_text"][first["train_spans"][0][0] : first["train_spans"][0][1]].startswith(
        test_set.instances[0].text[:30]
    )
    assert "eval_mmlu" in report.format()


def test_two_indexes_with_same_dataset_names_get_prefixed_columns(embedded, test_set, corpus):
    from core.overlap.indexing import build_index
    from tests.overlap.conftest import training_sources

    build_index(embedded, "second", training_sources(corpus), overwrite=True)
    try:
        matches = search(embedded, [TEXT_INDEX, "second"], [test_set], SearchSettings())
        report = build_contamination_report(matches)
        assert report.trains == [
            f"{TEXT_INDEX}/train_plain",
            f"{TEXT_INDEX}/train_chat",
            "second/train_plain",
            "second/train_chat",
        ]
        assert (
            report.scores[("eval_mmlu", "second/train_plain")]
            == report.scores[("eval_mmlu", f"{TEXT_INDEX}/train_plain")]
        )
    finally:
        embedded.delete("second")
