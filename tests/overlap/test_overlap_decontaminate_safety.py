"""Decontamination removes exactly the matched rows and nothing else, from the very file that was indexed
(issue 16, items 3, 4 and 8): other lines are copied byte for byte, non-UTF-8 files are refused at indexing,
a file changed since indexing is refused, uploads never overwrite each other, skipped rows carry file lines."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core.cli import main
from core.errors import DataError
from core.overlap.backends import get_backend
from core.overlap.decontaminate import decontaminate
from core.overlap.indexing import build_index
from core.overlap.matching import SearchSettings, search
from core.overlap.sources import EvalInstance, EvalSet, TrainingReader, TrainingSource, keep_upload

QUESTIONS = [
    "which planet in the solar system has the largest number of confirmed moons orbiting it today",
    "what is the boiling point of pure water at sea level measured in degrees celsius exactly",
    "who wrote the novel about a white whale and the captain who hunted it across the seas",
]
TESTS = EvalSet("t", [EvalInstance(f"q{i}", q) for i, q in enumerate(QUESTIONS)], "inline")


def _filler(k: int) -> str:
    return f"row {k} talks about gardening soil compost seeds watering schedules and sunlight number {k}"


def _training_lines() -> list[bytes]:
    """25 lines: 3 contaminated rows, 2 malformed lines, a blank line, non-ASCII text, CRLF endings, a BOM."""
    lines = [json.dumps({"text": _filler(k), "id": k}, ensure_ascii=k % 2 == 0).encode() + b"\n" for k in range(25)]
    lines[0] = b"\xef\xbb\xbf" + lines[0]
    lines[3] = json.dumps({"text": f"Quiz: {QUESTIONS[0]}?", "id": 3}).encode() + b"\n"
    lines[7] = b'{"text": "broken line without an end\n'
    latin = {"text": "caf\u00e9 cr\u00e8me " + QUESTIONS[1], "id": 9}
    lines[9] = json.dumps(latin, ensure_ascii=False).encode() + b"\r\n"
    lines[12] = b"\n"
    lines[15] = b"[1, 2, 3]\r\n"
    lines[20] = json.dumps({"text": QUESTIONS[2], "id": 20}).encode() + b"\n"
    lines[24] = lines[24].rstrip(b"\n")  # no newline at the end of the file
    return lines


def _index(tmp_path: Path, lines: list[bytes]):
    path = tmp_path / "train.jsonl"
    path.write_bytes(b"".join(lines))
    backend = get_backend("embedded", root=tmp_path / "idx")
    build_index(backend, "train", [TrainingSource(str(path))])
    return backend, path


def _clean(backend, out: Path, **options):
    settings = SearchSettings(match_threshold=0.5)
    return decontaminate(backend, search(backend, ["train"], [TESTS], settings), [TESTS], settings, out, **options)


def test_every_line_but_the_matched_rows_is_kept_byte_for_byte(tmp_path):
    lines = _training_lines()
    backend, path = _index(tmp_path, lines)
    (cleaned,) = _clean(backend, tmp_path / "out")
    assert cleaned.n_removed == 3
    assert cleaned.dropped_lines == []
    assert cleaned.path.read_bytes() == b"".join(line for k, line in enumerate(lines) if k not in (3, 9, 20))


def test_malformed_lines_are_dropped_and_listed_only_when_asked(tmp_path):
    lines = _training_lines()
    backend, _ = _index(tmp_path, lines)
    (cleaned,) = _clean(backend, tmp_path / "out", drop_malformed=True)
    assert cleaned.n_removed == 3
    assert cleaned.dropped_lines == [8, 16]
    assert cleaned.path.read_bytes() == b"".join(line for k, line in enumerate(lines) if k not in (3, 9, 20, 7, 15))


def test_a_latin1_training_file_is_refused_at_indexing_naming_line_and_byte(tmp_path):
    path = tmp_path / "latin.jsonl"
    path.write_bytes(b'{"text": "plain first row"}\n' + '{"text": "caf\u00e9 cr\u00e8me"}\n'.encode("latin-1"))
    backend = get_backend("embedded", root=tmp_path / "idx")
    with pytest.raises(DataError, match=r"latin.jsonl is not UTF-8: line 2 has byte 0xe9 at byte offset 41.*iconv"):
        build_index(backend, "latin", [TrainingSource(str(path))])
    assert backend.list() == []
    code = main(["overlap", "index", "--index-dir", str(tmp_path / "idx"), "--name", "latin", "--dataset", str(path)])
    assert code == 2


def test_a_file_changed_since_indexing_is_refused(tmp_path, capsys):
    lines = _training_lines()
    backend, path = _index(tmp_path, lines)
    path.write_bytes(json.dumps({"text": "a new first row"}).encode() + b"\n" + b"".join(lines))  # one row on top
    with pytest.raises(DataError, match=rf"{path} changed since index 'train' was built.*Re-index it"):
        _clean(backend, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing written
    code = main(
        [
            "overlap",
            "search",
            "--index-dir",
            str(tmp_path / "idx"),
            "--index",
            "train",
            "--dataset",
            str(_test_file(tmp_path)),
            "--output-dir",
            str(tmp_path / "out2"),
            "--decontaminate",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert err.startswith(f"error: {path} changed since index 'train'")


def test_a_touched_but_unchanged_file_is_still_decontaminated(tmp_path):
    backend, path = _index(tmp_path, _training_lines())
    os.utime(path, (1_000_000_000, 1_000_000_000))
    (cleaned,) = _clean(backend, tmp_path / "out")
    assert cleaned.n_removed == 3


def _test_file(tmp_path: Path) -> Path:
    path = tmp_path / "tests.jsonl"
    path.write_text("".join(json.dumps({"id": i.id, "text": i.text}) + "\n" for i in TESTS.instances), encoding="utf-8")
    return path


def test_two_uploads_with_the_same_name_do_not_overwrite_each_other(tmp_path, monkeypatch):
    monkeypatch.setenv("LEAKLENS_CACHE", str(tmp_path / "cache"))
    first = keep_upload(b'{"text": "first upload"}\n', "train.jsonl")
    second = keep_upload(b'{"text": "second upload"}\n', "train.jsonl")
    assert first != second
    assert Path(first).name == Path(second).name == "train.jsonl"
    assert Path(first).read_bytes() == b'{"text": "first upload"}\n'
    assert keep_upload(b'{"text": "first upload"}\n', "train.jsonl") == first  # same content, same place
    assert [d.text for d in TrainingReader(TrainingSource(first)).documents()] == ["first upload"]


def test_skipped_rows_are_reported_by_file_line_and_id(tmp_path, capsys):
    rows = [json.dumps({"text": _filler(k), "id": f"r{k}"}) for k in range(1, 21)]
    for bad in (13, 16, 19):
        rows[bad - 1] = json.dumps({"body": "no text field here", "id": f"r{bad}"})
    rows[4] = ""  # a blank line 5 shifts row indexes away from line numbers
    rows[6] = "{not json"
    path = tmp_path / "skips.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    reader = TrainingReader(TrainingSource(str(path)))
    list(reader.documents())
    assert [(s.line, s.row_id) for s in reader.skipped] == [(7, None), (13, "r13"), (16, "r16"), (19, "r19")]
    assert main(["overlap", "index", "--index-dir", str(tmp_path / "idx"), "--name", "s", "--dataset", str(path)]) == 0
    assert "lines 7, 13 (id r13), 16 (id r16), 19 (id r19)" in capsys.readouterr().err
