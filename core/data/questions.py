"""Multiple-choice benchmarks: questions with lettered options, and how they are laid out as a prompt.

Rows come from ``core.data.tables.load_rows`` (local files or hub ids). Two layouts are understood: one
column per option (``question, A, B, C, D, answer``, e.g. the bundled samples) and a list column of
choices with an integer answer (``question, choices, answer``, e.g. hub ``cais/mmlu``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.data.tables import SkippedRow, Table, load_rows, skipped_summary
from core.errors import DataError

LETTERS = "ABCDEFGH"
DEFAULT_OPTION_COLUMNS = ("A", "B", "C", "D")


@dataclass(frozen=True)
class MCQuestion:
    """One question with its options in benchmark order."""

    index: int
    """Position in the loaded benchmark (stable id for exports and shuffling)."""
    question: str
    options: tuple[str, ...]
    answer: str | None = None
    """Correct letter(s), e.g. ``"B"`` or ``"ACD"`` for a multi-answer question; None when unknown."""

    @property
    def letters(self) -> str:
        return LETTERS[: len(self.options)]

    @property
    def is_multi_answer(self) -> bool:
        return self.answer is not None and len(self.answer) > 1

    def as_row(self) -> dict[str, Any]:
        """The question as a flat JSON row (``question``, one column per letter, ``answer``)."""
        row: dict[str, Any] = {"question": self.question}
        row.update({letter: text for letter, text in zip(self.letters, self.options)})
        row["answer"] = self.answer
        return row


@dataclass(frozen=True)
class MCQColumns:
    """Which columns hold what. ``choices`` (a list column) is used when the option columns are absent."""

    question: str = "question"
    options: tuple[str, ...] = DEFAULT_OPTION_COLUMNS
    answer: str | None = "answer"
    choices: str = "choices"

    def __post_init__(self) -> None:
        if not 2 <= len(self.options) <= len(LETTERS):
            raise DataError(
                f"A question needs between 2 and {len(LETTERS)} option columns (--option-cols), got "
                f"{len(self.options)}: {', '.join(repr(c) for c in self.options) or 'none'}."
            )


@dataclass(frozen=True)
class MCQDataset:
    questions: tuple[MCQuestion, ...]
    source: str
    skipped: tuple[SkippedRow, ...] = field(default_factory=tuple)
    """Rows left out, by 1-based file line (see ``SkippedRow``)."""
    skipped_unit: str = "lines"
    """What ``SkippedRow.line`` counts: file ``lines`` or ``rows`` (Parquet, hub datasets)."""

    def __len__(self) -> int:
        return len(self.questions)

    @property
    def n_options(self) -> int:
        return len(self.questions[0].options)

    def skipped_summary(self) -> str:
        return skipped_summary(self.skipped, unit=self.skipped_unit)


@dataclass(frozen=True)
class PromptLayout:
    """How a question and its options become one text (default ``question\\nA. ...\\nB. ...``).

    ``option_template`` receives ``{letter}`` and ``{text}``; pieces are joined with ``separator``.
    """

    question_template: str = "{question}"
    option_template: str = "{letter}. {text}"
    separator: str = "\n"

    def __post_init__(self) -> None:
        if "{question}" not in self.question_template:
            raise DataError("The question template must contain {question}.")
        if self.option_template.count("{text}") != 1:
            raise DataError("The option template must contain {text} exactly once.")
        try:
            self.question_template.format(question="")
            self.option_template.format(letter="A", text="")
        except (KeyError, IndexError, ValueError) as exc:
            raise DataError(
                f"Prompt template error ({exc}); use only {{question}}, {{letter}} and {{text}} (double other braces)."
            ) from exc

    def render(self, question: MCQuestion) -> tuple[str, list[tuple[int, int]]]:
        """The full text and each option's character span inside it."""
        pieces = [self.question_template.format(question=question.question)]
        position = len(pieces[0])
        spans = []
        for letter, text in zip(question.letters, question.options):
            before, after = self.option_template.split("{text}")
            before = before.format(letter=letter)
            after = after.format(letter=letter)
            start = position + len(self.separator) + len(before)
            spans.append((start, start + len(text)))
            line = before + text + after
            pieces.append(line)
            position += len(self.separator) + len(line)
        return self.separator.join(pieces), spans


def load_mcq(
    source: str,
    *,
    split: str | None = None,
    config: str | None = None,
    limit: int | None = None,
    columns: MCQColumns | None = None,
) -> MCQDataset:
    """Load a benchmark; rows with a missing question or option are skipped and reported, never guessed."""
    table = load_rows(source, split=split, config=config)
    return questions_from_table(table, columns=columns, limit=limit)


def questions_from_table(table: Table, *, columns: MCQColumns | None = None, limit: int | None = None) -> MCQDataset:
    columns = columns or MCQColumns()
    if limit is not None and limit < 1:
        raise DataError("The sample size must be at least 1.")
    table.require_columns(columns.question)
    use_choices = not all(c in table.columns for c in columns.options) and columns.choices in table.columns
    if not use_choices:
        table.require_columns(*columns.options)
    has_answer = columns.answer is not None and columns.answer in table.columns
    questions: list[MCQuestion] = []
    skipped = list(table.skipped)
    n_options = len(columns.options)
    for index, row in enumerate(table.rows):
        if limit is not None and len(questions) >= limit:
            break
        question = _text(row.get(columns.question))
        if use_choices:
            raw = row.get(columns.choices)
            options = tuple(_text(o) for o in raw) if isinstance(raw, Sequence) and not isinstance(raw, str) else ()
        else:
            options = tuple(_text(row.get(c)) for c in columns.options)
        if not question:
            skipped.append(table.skip(index, "empty question"))
            continue
        if use_choices and len(options) != n_options:
            skipped.append(table.skip(index, f"needs {n_options} choices, has {len(options)}"))
            continue
        if not all(options):
            skipped.append(table.skip(index, "an option is empty"))
            continue
        try:
            answer = _answer(row.get(columns.answer), n_options) if has_answer and columns.answer else None
        except _AnswerError as exc:
            skipped.append(table.skip(index, str(exc)))
            continue
        questions.append(MCQuestion(index=len(questions), question=question, options=options, answer=answer))
    if not questions:
        reasons = "; ".join(sorted({s.reason for s in skipped})[:3]) or "no rows"
        raise DataError(f"{table.source} holds no usable multiple-choice question ({reasons}).")
    return MCQDataset(questions=tuple(questions), source=table.source, skipped=tuple(skipped),
                      skipped_unit=table.unit)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value != value:  # NaN from CSV readers
        return ""
    return str(value).strip()


class _AnswerError(ValueError):
    """An answer is given but names no option: the row is skipped, never kept with its answer lost."""


def _answer(value: Any, n_options: int) -> str | None:
    """Normalise an answer to its letters: 2 -> "C", "b" -> "B", "A、C、D" or "A.x\\nC.y" -> "ACD".

    None when no answer is given (an unanswered benchmark is fine); ``_AnswerError`` when one is given
    that names no option (``E`` or ``7`` of four), so it is reported instead of silently becoming None.
    """
    if _text(value) == "":
        return None
    letters = LETTERS[:n_options]
    outside = _AnswerError(f"answer {value!r} is not one of the options ({letters[0]}-{letters[-1]} or "
                           f"0-{n_options - 1})")
    if isinstance(value, bool):
        raise outside
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        number = int(value)
        if not 0 <= number < n_options:
            raise outside
        return LETTERS[number]
    text = str(value).strip()
    if text.isdigit():
        return _answer(int(text), n_options)
    if re.fullmatch(rf"[{letters}]+", text.upper()):  # "ACD", as write_jsonl exports multi-answers
        return "".join(sorted(set(text.upper())))
    found = re.findall(rf"(?<![A-Za-z])([{letters}{letters.lower()}])(?![A-Za-z])", text)
    unique = sorted({f.upper() for f in found})
    if not unique:
        raise outside
    return "".join(unique)


def write_jsonl(questions: Iterable[MCQuestion], path: str | Path) -> Path:
    """Export questions (e.g. a shuffled benchmark) as JSONL with ``question, A.., answer`` columns."""
    path = Path(path)
    try:
        with path.open("w", encoding="utf-8") as handle:
            for q in questions:
                handle.write(json.dumps(q.as_row(), ensure_ascii=False) + "\n")
    except OSError as exc:
        raise DataError(f"Could not write {path}: {exc.strerror}.") from exc
    return path


def to_jsonl(questions: Iterable[MCQuestion]) -> str:
    return "".join(json.dumps(q.as_row(), ensure_ascii=False) + "\n" for q in questions)


def with_options(question: MCQuestion, options: Sequence[str], answer: str | None) -> MCQuestion:
    return replace(question, options=tuple(options), answer=answer)
