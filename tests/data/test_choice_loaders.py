"""The loaders of a picked dataset share one shape: ``loader(source, data=..., split=..., config=..., <columns>,
limit=...)``. An upload (``data``, with ``source`` its file name) reads exactly as the same file by its path, and
``ui.dataset_picker.load_choice`` hands a picker's choice to any of them in one call."""

from __future__ import annotations

import json

import pytest

from core.data.labelled import load_labelled_dataset
from core.data.problems import load_problem_set
from core.data.questions import MCQColumns, load_mcq
from core.data.text_sets import load_text_set
from ui.dataset_picker import DatasetChoice, load_choice

LABELLED = b"text,label\nThe quick brown fox jumps.,1\nA freshly written line.,0\nAnother seen passage.,1\n"
PROBLEMS = b"".join(
    json.dumps({"task_id": f"T/{i}", "prompt": f"def f{i}():\n", "solution": f"    return {i}\n"}).encode() + b"\n"
    for i in range(3)
)
QUESTIONS = b"question,A,B,C,D,answer\nWhich is red?,Sky,Blood,Grass,Snow,B\nWhich is wet?,Sand,Dust,Water,Ash,C\n"


def _both(tmp_path, name: str, data: bytes, loader, **options):
    """The same bytes loaded as an upload and as a file by its path."""
    path = tmp_path / name
    path.write_bytes(data)
    return loader(name, data=data, **options), loader(str(path), **options)


def test_labelled_data_from_an_upload_reads_as_the_file(tmp_path):
    upload, file = _both(tmp_path, "members.csv", LABELLED, load_labelled_dataset)
    assert (
        upload.texts == file.texts == ["The quick brown fox jumps.", "A freshly written line.", "Another seen passage."]
    )
    assert upload.labels == file.labels == [1, 0, 1]
    assert upload.fingerprint == file.fingerprint


def test_problems_from_an_upload_read_as_the_file_and_keep_the_limit(tmp_path):
    upload, file = _both(tmp_path, "problems.jsonl", PROBLEMS, load_problem_set, limit=2)
    assert [p.task_id for p in upload.problems] == [p.task_id for p in file.problems] == ["T/0", "T/1"]
    assert upload.problems[1].solution == "    return 1\n"
    assert upload.has_ids
    assert file.has_ids


def test_questions_from_an_upload_read_as_the_file(tmp_path):
    upload, file = _both(tmp_path, "exam.csv", QUESTIONS, load_mcq, columns=MCQColumns(), limit=1)
    assert [q.question for q in upload.questions] == [q.question for q in file.questions] == ["Which is red?"]
    assert upload.questions[0].options == ("Sky", "Blood", "Grass", "Snow")


def test_texts_from_an_upload_read_as_the_file_with_the_row_filter(tmp_path):
    upload, file = _both(tmp_path, "members.csv", LABELLED, load_text_set, where=("label", "1"))
    assert upload.texts == file.texts == ["The quick brown fox jumps.", "Another seen passage."]
    assert upload.ids == file.ids == ["2", "4"]  # file lines, header first
    assert (upload.name, file.name) == ("uploaded file members.csv (label=1)", "members.csv (label=1)")


@pytest.mark.parametrize(
    "choice, expected",
    [
        (DatasetChoice("org/data", "test", "en"), ("org/data", None, "test", "en")),
        (DatasetChoice("upload.csv", data=b"x"), ("upload.csv", b"x", None, None)),
    ],
)
def test_load_choice_hands_the_pickers_fields_and_the_options_to_the_loader(choice, expected):
    calls = []

    def loader(source, *, data, split, config, **options):
        calls.append(((source, data, split, config), options))
        return "loaded"

    assert load_choice(loader, choice, text_col="body", limit=5) == "loaded"
    assert calls == [(expected, {"text_col": "body", "limit": 5})]
