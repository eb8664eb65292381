"""Labelled membership data: format detection, validation errors, sampling and fingerprints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from core.config import PROJECT_ROOT, SHARED_DATA_DIR
from core.data.labelled import (
    KNOWN_DATASETS,
    fingerprint,
    labelled_from_table,
    load_labelled_dataset,
    parse_label,
    stratified_sample,
)
from core.data.tables import load_uploaded
from core.errors import DataError, LeakLensError
from tests.helpers.data import detect_columns

REPO = PROJECT_ROOT
DATA = SHARED_DATA_DIR
WIKIMIA = DATA / "wikimia_length128.parquet"
BOOKTECTION = DATA / "booktection_sample.csv"
ARXIVTECTION = DATA / "arxivtection_sample.csv"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_wikimia_format_detected_on_shared_file():
    ds = load_labelled_dataset(str(WIKIMIA))
    assert (ds.text_col, ds.label_col) == ("input", "label")
    # Counts from the data README: 250 rows, 139 members, 111 non-members.
    assert (ds.n, ds.n_members, ds.n_nonmembers) == (250, 139, 111)
    assert ds.ids[:3] == ["0", "1", "2"]
    assert ds.skipped == []
    assert ds.texts[0].startswith("Hurricane Ana")


def test_booktection_format_detected_and_labels_parsed_from_strings():
    ds = load_labelled_dataset(str(BOOKTECTION))
    assert (ds.text_col, ds.label_col) == ("Example_A", "Label")
    assert (ds.n, ds.n_members, ds.n_nonmembers) == (600, 300, 300)
    assert set(ds.labels) == {0, 1}
    assert all(isinstance(v, int) for v in ds.labels)
    # BookTection's ID is a book title shared by several passages, so row indices are the ids.
    assert ds.ids == [str(i) for i in range(600)]


def test_arxivtection_empty_row_skipped_and_reported():
    raw = pd.read_csv(ARXIVTECTION, dtype=object, keep_default_na=False)
    empty_rows = [i for i, t in enumerate(raw["Example_A"]) if not t.strip()]
    # Reported by the 1-based file line the row starts on (a quoted passage above it spans several lines).
    file_lines = ARXIVTECTION.read_text(encoding="utf-8").splitlines()
    starts = [f"{raw['Unnamed: 0'][i]},{raw['ID'][i]}," for i in empty_rows]
    expected = [next(n for n, line in enumerate(file_lines, 1) if line.startswith(s)) for s in starts]
    assert expected != [i + 2 for i in empty_rows]
    ds = load_labelled_dataset(str(ARXIVTECTION))
    assert (ds.text_col, ds.label_col) == ("Example_A", "Label")
    assert [s.line for s in ds.skipped] == expected
    assert [s.row_id for s in ds.skipped] == [raw["ID"][i] for i in empty_rows]
    assert ds.n == 600 - len(empty_rows)
    assert str(empty_rows[0]) not in ds.ids
    assert "1 rows skipped (lines " in ds.skipped_summary()
    assert f"{expected[0]} (id {raw['ID'][empty_rows[0]]})" in ds.skipped_summary()


def test_detect_columns_known_and_common_names():
    assert detect_columns(["input", "label"]) == ("input", "label")
    assert detect_columns(["ID", "Example_A", "Example_B", "Answer", "Label"]) == ("Example_A", "Label")
    assert detect_columns(["Text", "LABEL", "x"]) == ("Text", "LABEL")
    with pytest.raises(DataError) as info:
        detect_columns(["body", "target"])
    assert "'body', 'target'" in str(info.value)
    assert "text column" in str(info.value)
    with pytest.raises(DataError, match="label"):
        detect_columns(["text", "target"])


def test_missing_columns_error_lists_existing_columns(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"text": "a b", "label": 1}, {"text": "c d", "label": 0}])
    with pytest.raises(DataError) as info:
        load_labelled_dataset(str(path), text_col="passage")
    message = str(info.value)
    assert "'passage'" in message
    assert "'text'" in message
    assert "'label'" in message


def test_explicit_columns_override_detection(tmp_path):
    rows = [{"body": f"text {i}", "target": i % 2, "label": "junk"} for i in range(6)]
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    ds = load_labelled_dataset(str(path), text_col="body", label_col="target")
    assert ds.labels == [0, 1, 0, 1, 0, 1]
    assert ds.texts[1] == "text 1"


def test_bad_labels_name_rows_and_values(tmp_path):
    rows = [{"text": t, "label": y} for t, y in (("a", 1), ("b", 2), ("c", 0), ("d", "yes"))]
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    with pytest.raises(DataError) as info:
        load_labelled_dataset(str(path))
    message = str(info.value)
    assert "line 2: 2" in message
    assert "line 4: 'yes'" in message
    assert "2 rows" in message


def test_single_class_is_an_error(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"text": f"t{i}", "label": 1} for i in range(4)])
    with pytest.raises(DataError, match="only members"):
        load_labelled_dataset(str(path))


def test_empty_and_non_text_rows_skipped_with_row_numbers(tmp_path):
    rows = [
        {"text": "first passage", "label": 1},
        {"text": "   ", "label": 0},
        {"text": 42, "label": 1},
        {"label": 0},
        {"text": "fifth passage", "label": 0},
    ]
    ds = load_labelled_dataset(str(write_jsonl(tmp_path / "d.jsonl", rows)))
    assert ds.texts == ["first passage", "fifth passage"]
    assert ds.ids == ["0", "4"]
    assert [(s.line, s.reason) for s in ds.skipped] == [  # 1-based file lines, like malformed lines
        (2, "empty text in column 'text'"),
        (3, "not text (int) in column 'text'"),
        (4, "missing in column 'text'"),
    ]


def test_a_row_whose_numeric_id_is_missing_is_reported_by_number_alone(tmp_path):
    """A missing number written as NaN (as Python's json module writes one) names no row: the line alone is given."""
    path = tmp_path / "d.jsonl"
    path.write_text(
        '{"id": 7, "text": "one", "label": 1}\n{"id": NaN, "text": null, "label": 0}\n'
        '{"id": 9, "text": null, "label": 0}\n{"id": 10, "text": "four", "label": 0}\n'
    )
    ds = load_labelled_dataset(str(path))
    assert [s.where() for s in ds.skipped] == ["2", "3 (id 9)"]


def test_malformed_jsonl_lines_are_reported_too(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"text": "a", "label": 1}\n{broken\n{"text": "b", "label": 0}\n')
    ds = load_labelled_dataset(str(path))
    assert ds.n == 2
    assert [s.line for s in ds.skipped] == [2]


def test_a_json_list_of_arrays_says_its_rows_must_be_objects(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps([["some text", 1]] * 10))
    with pytest.raises(DataError, match=r"d.json: its 10 entries are arrays, not objects; each row must be a JSON"):
        load_labelled_dataset(str(path))


def test_label_forms_accepted():
    assert [parse_label(v) for v in (1, 0, True, False, "1", " 0 ", "true", 1.0, 0.0)] == [1, 0, 1, 0, 1, 0, 1, 1, 0]
    assert [parse_label(v) for v in (2, -1, "member", None, 0.5, float("nan"))] == [None] * 6


def test_unique_id_column_is_used(tmp_path):
    rows = [{"id": f"doc-{i}", "text": f"t{i}", "label": i % 2} for i in range(4)]
    ds = load_labelled_dataset(str(write_jsonl(tmp_path / "d.jsonl", rows)))
    assert ds.ids == ["doc-0", "doc-1", "doc-2", "doc-3"]


def test_upload_and_path_share_a_fingerprint():
    from_path = load_labelled_dataset(str(WIKIMIA))
    uploaded = labelled_from_table(load_uploaded(WIKIMIA.read_bytes(), "wikimia.parquet"))
    assert uploaded.source != from_path.source
    assert uploaded.fingerprint == from_path.fingerprint
    assert len(from_path.fingerprint) == 64


def test_fingerprint_changes_with_any_content():
    base = fingerprint(["a", "b"], [1, 0], ["0", "1"])
    assert fingerprint(["a", "b"], [0, 0], ["0", "1"]) != base
    assert fingerprint(["a", "c"], [1, 0], ["0", "1"]) != base
    assert fingerprint(["a", "b"], [1, 0], ["0", "2"]) != base
    # Length-prefixing: moving characters between fields changes the hash.
    assert fingerprint(["ab"], [1], ["0"]) != fingerprint(["b"], [1], ["0a"])


def test_limit_draws_seeded_stratified_sample():
    full = load_labelled_dataset(str(WIKIMIA))
    a = load_labelled_dataset(str(WIKIMIA), limit=50, seed=0)
    b = load_labelled_dataset(str(WIKIMIA), limit=50, seed=0)
    c = load_labelled_dataset(str(WIKIMIA), limit=50, seed=1)
    assert a.ids == b.ids
    assert a.fingerprint == b.fingerprint
    assert a.ids != c.ids
    assert a.fingerprint != c.fingerprint
    assert a.n == 50
    assert a.n_members == round(50 * 139 / 250)
    by_id = dict(zip(full.ids, zip(full.texts, full.labels)))
    assert all(by_id[i] == (t, y) for i, t, y in zip(a.ids, a.texts, a.labels))
    assert [int(i) for i in a.ids] == sorted(int(i) for i in a.ids)


def test_stratified_sample_keeps_both_classes_and_validates():
    labels = [1] * 98 + [0] * 2
    chosen = stratified_sample(labels, 5, seed=3)
    assert len(chosen) == 5
    assert {labels[i] for i in chosen} == {0, 1}
    assert stratified_sample(labels, 500) == list(range(100))
    with pytest.raises(DataError, match="at least 2"):
        stratified_sample(labels, 1)


def test_known_datasets_list_local_files_and_hub_ids():
    sources = {k.source for k in KNOWN_DATASETS.values()}
    assert {"swj0419/WikiMIA", "avduarte333/BookTection", "avduarte333/arXivTection"} <= sources
    local = [k for k in KNOWN_DATASETS.values() if not k.source.count("/") == 1]
    assert len(local) == 3
    assert all(Path(k.source).exists() for k in local)
    source, split, config, description = KNOWN_DATASETS["WikiMIA length 128 (hub)"]
    assert (source, split, config) == ("swj0419/WikiMIA", "WikiMIA_length128", None)
    assert description


def test_hub_id_while_offline_is_a_clear_error():
    # Offline mode is read when the hub libraries are imported, so this runs in a fresh interpreter.
    code = (
        "from core.data.labelled import load_labelled_dataset\n"
        "from core.errors import DataError\n"
        "try:\n"
        "    load_labelled_dataset('swj0419/WikiMIA', split='WikiMIA_length128')\n"
        "except DataError as exc:\n"
        "    print('DATAERROR', exc)\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("DATAERROR Could not load hub dataset 'swj0419/WikiMIA'")
    assert "local CSV / JSONL / Parquet file" in done.stdout


def test_errors_are_leaklens_errors(tmp_path):
    with pytest.raises(LeakLensError):
        load_labelled_dataset(str(tmp_path / "missing.csv"))
    with pytest.raises(DataError, match="no rows"):
        labelled_from_table(load_uploaded(b"text,label\n", "empty.csv"))


def test_rows_holding_lone_surrogates_are_skipped_by_line(tmp_path):
    r"""A JSON ``\ud800`` escape is not text a tokenizer takes: the row is reported, never a TypeError later."""
    path = tmp_path / "d.jsonl"
    path.write_text(
        '{"text": "fine one", "label": 1}\n{"text": "bad \\ud800 here", "label": 0}\n{"text": "fine two", "label": 0}\n'
    )
    ds = load_labelled_dataset(str(path))
    assert ds.texts == ["fine one", "fine two"]
    (skipped,) = ds.skipped
    assert skipped.line == 2
    assert "lone surrogate U+D800 at character 4" in skipped.reason


def test_a_demo_that_cannot_tell_yet_says_it_is_a_small_sample_and_nothing_else_does():
    from core.data.demo import DEMO_DATASETS, class_names, demo_sample_note

    rows = sum(1 for line in next(d for d in DEMO_DATASETS if d.name == "mcq").path.open() if line.strip())
    note = demo_sample_note("demo:mcq", "inconclusive", "questions")
    assert note == (
        f"This demo is a small sample ({rows} questions) that shows how the test works; with so few it usually "
        "cannot tell yet. A real benchmark of a few hundred questions can settle it."
    )
    assert demo_sample_note("demo:mcq", "strong", "questions") is None
    assert demo_sample_note("my_benchmark.jsonl", "inconclusive", "questions") is None
    assert class_names("demo:famous-vs-fresh").members == "the famous passages"
    assert class_names("demo:mcq").members == "the texts labelled as seen (label 1)"
