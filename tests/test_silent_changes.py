"""Silent changes become errors or notes (issue 25, item 5).

An MCQ answer is a letter, an index, or exactly one option's text, never a letter guessed from other
words; option columns beyond the ones used are reported; ``--split`` / ``--config`` on a local file are
refused; a text cut by ``--max-tokens`` is not called "longer than the context".

Each table row runs the real loader or the real command (in its own interpreter, offline).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.data.labelled import load_labelled_dataset
from core.data.questions import load_mcq, parse_option_columns
from core.engine.handle import resolve_model
from core.errors import DataError
from core.membership.benchmark import run_membership_benchmark
from core.methods import parse_methods
from core.store.results import ResultStore

REPO = Path(__file__).resolve().parents[1]
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
CITIES = {"A": "London", "B": "Berlin", "C": "Paris", "D": "Rome"}
NUMBERS = {"A": "1", "B": "2", "C": "3", "D": "4"}


# --- answers: what each written form becomes -------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    value: object
    """The answer cell as the file holds it (on line 2, after a fine line 1)."""
    letters: str | None = None
    """The letters it must become; None when the row must be skipped."""
    reason: str = ""
    """Substring of the skip reason (with the row's line, 2)."""
    options: tuple[tuple[str, str], ...] = tuple(CITIES.items())


ANSWERS = [
    Answer("C", "C"),
    Answer("c", "C"),  # a lone lowercase letter is that letter
    Answer(2, "C"),  # a number is a 0-based index
    Answer("2", "C"),
    Answer("Paris", "C"),  # the exact text of one option
    Answer("  Berlin ", "B"),
    Answer("B.", "B"),  # a letter with its label's punctuation and nothing else
    Answer("(B)", "B"),
    Answer("B. Berlin", "B"),  # a label followed by that option's own text
    Answer("B) Paris", reason="answer 'B) Paris' labels option B, whose text is 'Berlin'"),
    Answer("A、C", "AC"),
    Answer(["A", "C"], "AC"),
    Answer("Madrid", reason="answer 'Madrid' matches no option text (nor is it a letter A-D or an index 0-3)"),
    Answer("Because Berlin is in Germany", reason="answer 'Because Berlin is in Germany' matches no option text"),
    Answer("a city, I think", reason="matches no option text"),  # was read as A
    Answer("answer: B", reason="matches no option text"),  # was read as B
    Answer("paris", reason="answer 'paris' matches no option text"),  # exact text only
    Answer("E", reason="answer 'E' is not one of the options (A-D or 0-3)"),
    Answer(
        "2",
        reason="answer '2' is ambiguous: read as a letter or index it is C, but it is the text of option B",
        options=tuple(NUMBERS.items()),
    ),
    Answer("4", "D", options=tuple(NUMBERS.items())),  # no index 4 of four: option D's text
    Answer(2, "C", options=tuple(NUMBERS.items())),  # a number stays an index
]


@pytest.mark.parametrize("case", ANSWERS, ids=lambda c: f"{c.value!r}->{c.letters or 'skipped'}")
def test_answer_forms(case: Answer, tmp_path):
    options = dict(case.options)
    rows = [{"question": "Fine?", **options, "answer": "A"}, {"question": "Q?", **options, "answer": case.value}]
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    ds = load_mcq(str(path))
    if case.letters is not None:
        assert [q.answer for q in ds.questions] == ["A", case.letters]
        assert not ds.skipped
    else:
        assert [q.answer for q in ds.questions] == ["A"]
        (skipped,) = ds.skipped
        assert skipped.line == 2
        assert case.reason in skipped.reason
        assert f"1 rows skipped (lines 2: {skipped.reason}" in ds.skipped_summary()


def test_option_columns_are_read_with_commas_spaces_or_both():
    assert parse_option_columns("A,B,C,D") == ("A", "B", "C", "D")
    assert parse_option_columns(["A", "B", "C", "D", "E", "F"]) == tuple("ABCDEF")
    assert parse_option_columns(["A,B", " C ", "D,E,", "F"]) == tuple("ABCDEF")


@pytest.mark.parametrize(
    ("columns", "note"),
    [
        (
            {"A", "B", "C", "D", "E", "F"},
            "six.jsonl has option columns E, F beyond --option-cols A,B,C,D; "
            "pass --option-cols A B C D E F to use them",
        ),
        (
            {"A", "B", "C", "D", "E"},
            "six.jsonl has option column E beyond --option-cols A,B,C,D; pass --option-cols A B C D E to use it",
        ),
        ({"A", "B", "C", "D"}, None),
    ],
)
def test_unused_option_columns_are_noted(columns, note, tmp_path):
    path = tmp_path / "six.jsonl"
    rows = [{"question": f"Q{i}?", **{c: f"{c} text {i}" for c in sorted(columns)}, "answer": "A"} for i in range(3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = load_mcq(str(path))
    assert ds.n_options == 4
    assert ds.notes == ((note,) if note else ())


@pytest.mark.parametrize(
    ("source", "flags", "message"),
    [
        (
            "{tmp}/data.jsonl",
            {"split": "train"},
            "--split applies to hub datasets; {tmp}/data.jsonl is a local file: drop --split.",
        ),
        ("{tmp}/data.jsonl", {"config": "en"}, "--config applies to hub datasets; {tmp}/data.jsonl is a local file"),
        (
            "demo:famous-vs-fresh",
            {"split": "train", "config": "en"},
            "--split and --config apply to hub datasets; demo:famous-vs-fresh is a shipped demo: "
            "drop --split and --config.",
        ),
    ],
)
def test_hub_options_on_local_data_are_refused(source, flags, message, tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps({"text": f"text {i}", "label": i % 2}) + "\n" for i in range(4)))
    source, message = source.format(tmp=tmp_path), message.format(tmp=tmp_path)
    with pytest.raises(DataError) as caught:
        load_labelled_dataset(source, **flags)
    assert message in str(caught.value)
    load_labelled_dataset(source, split=" ", config="")  # a blank field (a page's) is no value


# --- which limit cut a text ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("max_context", "max_tokens", "cut_at_max_tokens", "cut_by_context"),
    [
        (2048, 8, 6, 0),  # --max-tokens far below the context: the cut is --max-tokens'
        (12, 8, 6, 0),
        (12, None, 0, 6),  # no --max-tokens: the context cut them
        (12, 50, 0, 6),  # --max-tokens above the context: the context cut them
    ],
)
def test_the_limit_that_cut_a_text_is_known(
    max_context, max_tokens, cut_at_max_tokens, cut_by_context, tiny_lm, tmp_path
):
    dataset = load_labelled_dataset("demo:famous-vs-fresh", limit=6, sample=False)
    lm = dataclasses.replace(tiny_lm, max_context=max_context)
    result = run_membership_benchmark(
        dataset,
        resolve_model("tiny-random", loader=lambda spec: lm),
        parse_methods(["loss"]),
        store=ResultStore(tmp_path / "r.sqlite"),
        max_tokens=max_tokens,
    )
    assert (result.n_cut_at_max_tokens, result.n_truncated - result.n_cut_at_max_tokens) == (
        cut_at_max_tokens,
        cut_by_context,
    )


# --- the commands ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    name: str
    argv: list[str]
    """Arguments after ``python -m core``; ``{tmp}`` is the folder of the case files."""
    code: int
    says: tuple[str, ...] = ()
    """Substrings of stdout + stderr."""
    absent: tuple[str, ...] = ()
    check: Callable[[str], bool] | None = None
    """Called with stdout (the --json document where asked)."""


def _n_options(stdout: str) -> int:
    return len(json.loads(stdout)["original"]["completion"]["distribution"]) - 1


TINY = ["--model", "tiny-random", "--no-store"]
COMMANDS = [
    Command(
        "mcq: answers as option text, and one that matches none",
        ["mcq", "--dataset", "{tmp}/answers.jsonl", *TINY],
        0,
        (
            "warning: 2 rows skipped (lines 3, 4: ",
            "answer 'Madrid' matches no option text",
            "answer 'a city, I think' matches no option text",
        ),
        check=lambda out: "questions: 3" in out,
    ),
    Command(
        "mcq: a 6-option file under the default columns",
        ["mcq", "--dataset", "{tmp}/six.jsonl", "--json", *TINY],
        0,
        (
            "note: six.jsonl has option columns E, F beyond --option-cols A,B,C,D; pass --option-cols "
            "A B C D E F to use them",
        ),
        check=lambda out: _n_options(out) == 4,
    ),
    Command(
        "mcq: --option-cols A B C D E F",
        ["mcq", "--dataset", "{tmp}/six.jsonl", "--option-cols", "A", "B", "C", "D", "E", "F", "--json", *TINY],
        0,
        absent=("note: six.jsonl",),
        check=lambda out: _n_options(out) == 6,
    ),
    Command(
        "mcq: --option-cols A,B,C,D,E,F",
        ["mcq", "--dataset", "{tmp}/six.jsonl", "--option-cols", "A,B,C", "D,E,F", "--json", *TINY],
        0,
        absent=("note: six.jsonl",),
        check=lambda out: _n_options(out) == 6,
    ),
    Command(
        "mcq: --split on a local file",
        ["mcq", "--dataset", "{tmp}/six.jsonl", "--split", "train", *TINY],
        2,
        ("error: --split applies to hub datasets; {tmp}/six.jsonl is a local file: drop --split.",),
    ),
    Command(
        "mcq: --config on a local file",
        ["mcq", "--dataset", "{tmp}/six.jsonl", "--config", "all", *TINY],
        2,
        ("error: --config applies to hub datasets; {tmp}/six.jsonl is a local file: drop --config.",),
    ),
    Command(
        "mia: --split on a demo",
        ["mia", "--dataset", "demo:famous-vs-fresh", "--split", "train", *TINY],
        2,
        ("error: --split applies to hub datasets; demo:famous-vs-fresh is a shipped demo: drop --split.",),
    ),
    Command(
        "delta: --split with its shipped sets",
        ["delta", "--split", "test", "--limit", "5", *TINY],
        2,
        ("error: --split applies to hub datasets; humaneval is a shipped set; builtin is a shipped set",),
    ),
    Command(
        "dataset-inference: --config with two local sets",
        [
            "dataset-inference",
            "--suspect",
            "demo:famous-vs-fresh",
            "--validation",
            "{tmp}/six.jsonl",
            "--config",
            "all",
            *TINY,
        ],
        2,
        (
            "error: --config applies to hub datasets; demo:famous-vs-fresh is a shipped demo; {tmp}/six.jsonl "
            "is a local file: drop --config.",
        ),
    ),
    Command(
        "overlap index: --split on a demo",
        [
            "overlap",
            "index",
            "--index-dir",
            "{tmp}/idx",
            "--name",
            "x",
            "--dataset",
            "demo:overlap-train",
            "--split",
            "train",
        ],
        2,
        ("error: --split applies to hub datasets; demo:overlap-train is a shipped demo: drop --split.",),
    ),
    Command(
        "overlap search: --split on a local test file",
        [
            "overlap",
            "search",
            "--index-dir",
            "{tmp}/idx",
            "--index",
            "x",
            "--dataset",
            "{tmp}/six.jsonl",
            "--split",
            "test",
            "--output-dir",
            "{tmp}/out",
        ],
        2,
        ("error: --split applies to hub datasets; {tmp}/six.jsonl is a local file: drop --split.",),
    ),
    Command(
        "mia: texts cut by --max-tokens",
        ["mia", "--dataset", "demo:famous-vs-fresh", "--limit", "6", "--max-tokens", "8", *TINY],
        0,
        ("note: 6 texts were longer than --max-tokens 8 and were scored on their first 8 tokens",),
        absent=("longer than the context", "longer than the model's context"),
    ),
]


def _write_files(folder: Path) -> None:
    rows = [
        {"question": "Capital of France?", **CITIES, "answer": "Paris"},
        {"question": "Capital of Germany?", **CITIES, "answer": "B."},
        {"question": "Capital of Spain?", **CITIES, "answer": "Madrid"},
        {"question": "Is it a city?", **CITIES, "answer": "a city, I think"},
        {"question": "Capital of Italy?", **CITIES, "answer": "Rome"},
    ]
    (folder / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    six = [
        {
            "question": f"Which word is number {i}?",
            **{c: f"the {c} answer of question {i}" for c in "ABCDEF"},
            "answer": "ABCDEF"[i],
        }
        for i in range(6)
    ]
    (folder / "six.jsonl").write_text("".join(json.dumps(r) + "\n" for r in six))


@pytest.mark.slow
@pytest.mark.parametrize("case", COMMANDS, ids=lambda c: c.name)
def test_commands(case: Command, tmp_path):
    _write_files(tmp_path)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in case.argv]
    env = {**os.environ, **OFFLINE, "LEAKLENS_STORE": str(tmp_path / "store.sqlite")}
    done = subprocess.run(
        [sys.executable, "-m", "core", *argv], cwd=REPO, env=env, capture_output=True, text=True, timeout=600
    )
    output = done.stdout + done.stderr
    assert done.returncode == case.code, output
    for text in case.says:
        assert text.replace("{tmp}", str(tmp_path)) in output, output
    for text in case.absent:
        assert text not in output, output
    if case.code == 2:
        errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, done.stderr
        assert "Traceback" not in done.stderr, done.stderr
    if case.check is not None:
        assert case.check(done.stdout), output
