import json

import pytest

from core.errors import DataError
from core.overlap.sources import (
    TrainingReader,
    TrainingSource,
    dataset_name,
    load_eval_set,
    parse_mixer,
    parse_query_filter,
)


def test_plain_jsonl_skips_malformed_line_with_its_number(corpus):
    reader = TrainingReader(TrainingSource(str(corpus.plain_path)))
    docs = list(reader.documents())
    lines = corpus.plain_path.read_text(encoding="utf-8").splitlines()
    assert len(docs) == len(lines) - 1
    assert [s.line for s in reader.skipped] == [corpus.malformed_line]
    assert "not valid JSON" in reader.skipped[0].reason
    # Row numbers count lines, so a row's number is stable whatever was skipped before it.
    assert docs[-1].row == len(lines) - 1
    assert docs[0].text == json.loads(lines[0])["text"]


def test_messages_keep_only_filtered_turns(corpus):
    source = TrainingSource(str(corpus.chat_path), messages_field="messages", query_filter=("role", "user"))
    docs = list(TrainingReader(source).documents())
    assert len(docs) == 60
    assert all(d.turn == 1 for d in docs)
    assert docs[0].text == f"Please answer: {corpus.questions[corpus.user_in_chat[0]]}"
    assert docs[0].key == "0:1"
    every_turn = list(TrainingReader(TrainingSource(str(corpus.chat_path), messages_field="messages")).documents())
    assert len(every_turn) == 180


def test_missing_field_lists_the_fields(corpus):
    with pytest.raises(DataError, match=r"no field 'body'.*'text', 'source'"):
        list(TrainingReader(TrainingSource(str(corpus.plain_path), text_field="body")).documents())
    with pytest.raises(DataError, match="not a list of turns"):
        list(TrainingReader(TrainingSource(str(corpus.plain_path), messages_field="text")).documents())


def test_dataset_mixer_yaml_takes_proportions(corpus):
    sources = parse_mixer(corpus.mixer_path, messages_field=None, text_field="text")
    assert [s.name for s in sources] == ["train_plain", "train_chat"]
    assert sources[1].proportion == 0.5
    chat = TrainingSource(sources[1].source, messages_field="messages", query_filter=("role", "user"), proportion=0.5)
    reader = TrainingReader(chat)
    assert len(list(reader.documents())) == 30
    assert reader.n_rows == 30
    counted = TrainingReader(TrainingSource(str(corpus.plain_path), proportion=10))
    assert len(list(counted.documents())) == 10


def test_mixer_errors(tmp_path):
    bad = tmp_path / "m.yaml"
    bad.write_text("datasets: [a]\n", encoding="utf-8")
    with pytest.raises(DataError, match="dataset_mixer"):
        parse_mixer(bad)
    bad.write_text("dataset_mixer:\n  a.jsonl: lots\n", encoding="utf-8")
    with pytest.raises(DataError, match="must be a number"):
        parse_mixer(bad)
    with pytest.raises(DataError, match="not found"):
        parse_mixer(tmp_path / "missing.yaml")


def test_query_filter_and_names():
    assert parse_query_filter("role:user") == ("role", "user")
    assert parse_query_filter(None) is None
    with pytest.raises(DataError, match="FIELD:VALUE"):
        parse_query_filter("role")
    assert dataset_name("allenai/tulu-3-sft-mixture") == "allenai__tulu-3-sft-mixture"
    assert dataset_name("/data/my train.jsonl") == "my_train"


def test_test_set_from_shared_mmlu():
    from tests.overlap.corpus import MMLU

    test_set = load_eval_set(str(MMLU), "question")
    assert len(test_set) == 1329
    assert test_set.name == "mmlu_sample"
    assert test_set.instances[3].id == "3"
    with pytest.raises(DataError, match="Columns found: 'question', 'A'"):
        load_eval_set(str(MMLU), "prompt")
