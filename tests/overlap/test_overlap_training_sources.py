"""What the Overlap page and the overlap command share: training sources from user choices, kept uploads,
test sets from any input (text field detected), and one search end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.data.tables import SkippedRow, Table
from core.errors import DataError
from core.overlap.backends import get_backend
from core.overlap.indexing import build_index
from core.overlap.matching import SearchSettings
from core.overlap.run import match_location, run_search
from core.overlap.sources import (
    TrainingReader,
    eval_set_from_table,
    eval_text_field,
    keep_upload,
    load_eval_set,
    skipped_note,
    training_sources,
)


def test_training_sources_apply_one_set_of_options_to_every_dataset(corpus):
    sources = training_sources(
        [str(corpus.plain_path), " ", str(corpus.chat_path)],
        text_field="text",
        split="validation",
        config="en",
    )
    assert [s.name for s in sources] == ["train_plain", "train_chat"]
    assert {(s.text_field, s.messages_field, s.query_filter, s.split, s.config) for s in sources} == {
        ("text", None, None, "validation", "en")
    }


def test_blank_fields_count_as_not_given(corpus):
    (source,) = training_sources(
        [str(corpus.plain_path)],
        text_field=" ",
        messages_field="  ",
        query_filter="",
        query_field="",
        split="",
        config=" ",
    )
    assert (source.text_field, source.messages_field, source.query_filter, source.query_field) == (
        "text",
        None,
        None,
        "content",
    )
    assert source.split is None
    assert source.config is None


def test_turn_filter_applies_only_to_a_messages_field_but_is_always_checked(corpus):
    (chat,) = training_sources([str(corpus.chat_path)], messages_field="messages", query_filter="role:user")
    assert chat.query_filter == ("role", "user")
    assert len(list(TrainingReader(chat).documents())) == 60  # user turns only
    (plain,) = training_sources([str(corpus.plain_path)], query_filter="role:user")
    assert plain.query_filter is None
    with pytest.raises(DataError, match="FIELD:VALUE"):
        training_sources([str(corpus.plain_path)], query_filter="role")


def test_mixer_datasets_follow_the_named_ones_with_the_same_options(corpus, tmp_path):
    mixer = tmp_path / "mixer.yaml"
    mixer.write_text(f"dataset_mixer:\n  {corpus.chat_path}: 0.5\n", encoding="utf-8")
    sources = training_sources(
        ["owner/chat-set"], messages_field="messages", query_filter="role:user", split="train", mixer_config=mixer
    )
    assert [s.name for s in sources] == ["owner__chat-set", "train_chat"]
    assert [s.proportion for s in sources] == [None, 0.5]
    assert all(
        s.messages_field == "messages" and s.query_filter == ("role", "user") and s.split == "train" for s in sources
    )
    only_mixer = training_sources([], mixer_config=str(corpus.mixer_path))
    assert [s.name for s in only_mixer] == ["train_plain", "train_chat"]


def test_nothing_to_index_is_a_clear_error():
    with pytest.raises(DataError, match="No training set given.*dataset-mixer YAML"):
        training_sources([], mixer_config="  ")
    with pytest.raises(DataError, match="No training set given"):
        training_sources(["", " "])


def test_kept_upload_is_a_readable_training_file(tmp_path, monkeypatch):
    monkeypatch.setenv("LEAKLENS_CACHE", str(tmp_path / "cache"))
    rows = [{"text": "first document here"}, {"text": "second document here"}]
    path = keep_upload("\n".join(json.dumps(r) for r in rows).encode(), "../../evil/train.jsonl")
    # The name only, never a path outside; in a folder named by the content (issue 16, item 3).
    assert Path(path).name == "train.jsonl"
    assert Path(path).parent.parent == tmp_path / "cache" / "uploads"
    (source,) = training_sources([path])
    assert [d.text for d in TrainingReader(source).documents()] == [r["text"] for r in rows]


def test_skipped_note_names_lines_and_the_first_reason():
    assert skipped_note("train", []) == ""
    rows = [SkippedRow(n, "not valid JSON (Expecting value)") for n in range(1, 35)]
    note = skipped_note("train", rows)
    assert note.startswith("train: skipped 34 rows (lines 1, 2, 3,")
    assert "30 and 4 more)" in note
    assert note.endswith(": not valid JSON (Expecting value).")


def test_test_text_field_is_detected_when_not_named():
    assert eval_text_field(["id", "question", "text"]) == "question"
    assert eval_text_field(["id", "text"]) == "text"
    with pytest.raises(DataError, match="fields found: 'id', 'body'"):
        eval_text_field(["id", "body"])
    table = Table([{"id": "a", "text": "some words"}, {"id": "b", "text": ""}], ["id", "text"], "t.jsonl")
    test_set = eval_set_from_table(table, None, name="t", id_field="id")
    assert [i.id for i in test_set.instances] == ["a"]
    assert [(s.line, s.row_id) for s in test_set.skipped] == [(2, "b")]  # 1-based, with its id


def test_uploaded_test_set_loads_like_a_file(corpus):
    data = corpus.test_path.read_bytes()
    uploaded = load_eval_set("eval_mmlu.jsonl", None, id_field="id", data=data)
    from_file = load_eval_set(str(corpus.test_path), "question", id_field="id")
    assert uploaded.name == from_file.name == "eval_mmlu"
    assert uploaded.instances == from_file.instances


def test_run_search_writes_the_report_and_lists_the_best_matches_first(corpus, tmp_path):
    backend = get_backend("embedded", root=tmp_path / "indexes")
    build_index(backend, "plain", training_sources([str(corpus.plain_path)]))
    test_set = load_eval_set(str(corpus.test_path), None, id_field="id")
    outcome = run_search(backend, ["plain"], [test_set], SearchSettings(), tmp_path / "out", clean=True)
    assert len(outcome.matches) == len(test_set)
    assert [p.name for p in outcome.paths][0] == "contamination_report.tsv"
    assert all(p.exists() for p in outcome.paths)
    assert len(outcome.cleaned) == 1
    assert outcome.cleaned[0].n_removed >= len(corpus.exact_in_plain)
    best = outcome.best(5)
    values = [m.value for m in best]
    assert values == sorted(values, reverse=True)
    assert values[0] == 1.0
    assert outcome.n_matching >= len(corpus.exact_in_plain) + len(corpus.near_in_plain)
    assert len(outcome.best(1000)) == outcome.n_matching  # pairs without overlap are never listed
    assert match_location(best[0]).startswith("train_plain row ")
    assert outcome.skipped == test_set.skipped


def test_shipped_demo_sets_show_planted_copies(tmp_path):
    backend = get_backend("embedded", root=tmp_path / "indexes")
    build_index(backend, "demo", training_sources(["demo:overlap-train"]))
    test_set = load_eval_set("demo:overlap-test", None, id_field="id")
    outcome = run_search(backend, ["demo"], [test_set], SearchSettings(), tmp_path / "out")
    assert outcome.best(1)[0].value == 1.0  # a verbatim copy is found
    assert outcome.n_matching < len(test_set)  # and the fresh items are not
