"""How the Overlap search page hands a picked dataset to ``core.overlap``: the training sets as paths or ids (an
upload kept on disk), the test set's name in the verdict, and the one call that loads the test set."""

from __future__ import annotations

import ui.overlap as overlap
from ui.dataset_picker import DatasetChoice
from ui.overlap import eval_set_label, load_test_set, training_datasets


def test_training_sets_are_paths_or_ids_and_an_upload_is_kept_on_disk(monkeypatch):
    kept = []
    monkeypatch.setattr(overlap, "keep_upload", lambda data, name: kept.append((data, name)) or f"/cache/{name}")
    assert training_datasets(None) == []
    assert training_datasets(DatasetChoice("/data/a.jsonl, org/b ,")) == ["/data/a.jsonl", "org/b"]
    assert training_datasets(DatasetChoice("train.csv", data=b"text\nx\n")) == ["/cache/train.csv"]
    assert kept == [(b"text\nx\n", "train.csv")]


def test_the_test_set_is_named_by_a_demos_title_else_as_the_inputs_name_it():
    assert eval_set_label(DatasetChoice("demo:overlap-test")) == "Test set with planted copies (demo)"
    assert eval_set_label(DatasetChoice("/data/eval.jsonl")) == "eval.jsonl"
    assert eval_set_label(DatasetChoice("cais/mmlu", "test", "all")) == "cais/mmlu (split test, config all)"
    assert eval_set_label(DatasetChoice("eval.csv", data=b"x")) == "upload eval.csv"


def test_the_test_set_is_loaded_in_one_call_with_the_pickers_fields(monkeypatch):
    calls = []
    monkeypatch.setattr(overlap, "load_eval_set", lambda *args, **kwargs: calls.append((args, kwargs)) or "set")
    assert load_test_set(DatasetChoice("demo:overlap-test"), "text", None) == "set"
    assert load_test_set(DatasetChoice("cais/mmlu", "test", "all"), None, "id") == "set"
    assert calls == [
        (
            ("demo:overlap-test", "text"),
            {
                "id_field": None,
                "split": None,
                "config": None,
                "data": None,
                "name": "Test set with planted copies (demo)",
            },
        ),
        (("cais/mmlu", None), {"id_field": "id", "split": "test", "config": "all", "data": None, "name": None}),
    ]
