"""Multiple-choice benchmarks: questions with lettered options, and how they are laid out as a prompt.

Rows come from ``core.data.tables.load_rows`` (local files or hub ids). Two layouts are understood: one
column per option (``question, A, B, C, D, answer``, e.g. the bundled samples) and a list column of
choices with an integer answer (``question, choices, answer``, e.g. hub ``cais/mmlu``).

An answer is a letter (``B``, ``b``, ``B.``, ``(B)``), a 0-based index (``2``, ``"2"``), several letters for
a multi-answer question (``ACD``, ``A、C、D``, ``["A", "C"]``, or one ``A. text`` line per answer whose
text is that option's), or exactly the text of one option. Anything else skips the row with its line:
an answer is never guessed from a letter found inside a sentence.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.data.tables import SkippedRow, Table, display_name, load_rows, load_uploaded, skipped_summary
from core.errors import DataError
from core.files.outputs import write_atomic

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
    notes: tuple[str, ...] = ()
    """What a user should know about how the file was read (e.g. option columns left unused)."""

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
    data: bytes | None = None,
    split: str | None = None,
    config: str | None = None,
    limit: int | None = None,
    columns: MCQColumns | None = None,
) -> MCQDataset:
    """Load a benchmark from a demo, a file, a hub dataset id or an upload's ``data`` (``source`` is then its file
    name); rows with a missing question or option are skipped and reported, never guessed."""
    table = load_uploaded(data, source) if data is not None else load_rows(source, split=split, config=config)
    return questions_from_table(table, columns=columns, limit=limit)


def parse_option_columns(values: str | Sequence[str]) -> tuple[str, ...]:
    """Option columns as typed: ``"A,B,C,D"``, ``["A", "B", "C", "D"]`` or a mix (``["A,B", "C", "D"]``)."""
    items = [values] if isinstance(values, str) else list(values)
    return tuple(c.strip() for item in items for c in str(item).split(",") if c.strip())


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
            answer = _answer(row.get(columns.answer), options) if has_answer and columns.answer else None
        except _AnswerError as exc:
            skipped.append(table.skip(index, str(exc)))
            continue
        questions.append(MCQuestion(index=len(questions), question=question, options=options, answer=answer))
    if not questions:
        reasons = "; ".join(sorted({s.reason for s in skipped})[:3]) or "no rows"
        raise DataError(f"{table.source} holds no usable multiple-choice question ({reasons}).")
    notes = () if use_choices else _unused_option_columns(table, columns)
    return MCQDataset(
        questions=tuple(questions), source=table.source, skipped=tuple(skipped), skipped_unit=table.unit, notes=notes
    )


def _unused_option_columns(table: Table, columns: MCQColumns) -> tuple[str, ...]:
    """A note when the table has further option columns than the ones used (``E``, ``F`` beside ``A-D``).

    A further option column is named like the last one used with its trailing letter or number counted
    on (``D`` -> ``E``, ``opd`` -> ``ope``, ``option_4`` -> ``option_5``, ``ending3`` -> ``ending4``) and
    holds text in at least one row.
    """
    taken = {columns.question, columns.answer, columns.choices, *columns.options}
    extra: list[str] = []
    name = _next_column_name(columns.options[-1])
    while name is not None and name in table.columns and name not in taken and len(extra) < len(LETTERS):
        if not any(_text(row.get(name)) for row in table.rows):
            break
        extra.append(name)
        taken.add(name)
        name = _next_column_name(name)
    if not extra:
        return ()
    used = list(columns.options)
    what = f"option column{'s' if len(extra) > 1 else ''} {', '.join(extra)}"
    if len(used) + len(extra) <= len(LETTERS):
        advice = f"pass --option-cols {' '.join(used + extra)} to use {'them' if len(extra) > 1 else 'it'}"
    else:
        advice = f"a question takes at most {len(LETTERS)} option columns"
    return (f"{display_name(table.source)} has {what} beyond --option-cols {','.join(used)}; {advice}",)


def _next_column_name(name: str) -> str | None:
    """``D`` -> ``E``, ``opd`` -> ``ope``, ``choice_3`` -> ``choice_4``; None when the name ends otherwise."""
    digits = re.search(r"\d+$", name)
    if digits:
        number = str(int(digits.group()) + 1).zfill(len(digits.group()))
        return name[: digits.start()] + number
    last = name[-1:]
    if last.isascii() and last.isalpha() and last not in "zZ":
        return name[:-1] + chr(ord(last) + 1)
    return None


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value != value:  # NaN from CSV readers
        return ""
    return str(value).strip()


class _AnswerError(ValueError):
    """An answer is given but names no option: the row is skipped, never kept with its answer lost."""


_SEPARATORS = r"[,，、;；/\s]+"
_BARE_LETTER = re.compile(r"\(?([A-Za-z])\)?[.．:：)]?")
"""``B``, ``b``, ``B.``, ``B)``, ``(B)``: a letter and nothing but the punctuation of its label."""
_LABELLED = re.compile(r"\(?([A-Z])(?:\)|\s*[.．:：、])\s*(\S.*)")
"""``B. Paris``, ``(B) Paris``: an option's letter, its label's punctuation, then that option's text."""


def _answer(value: Any, options: Sequence[str]) -> str | None:
    """An answer as its letters: 2 -> "C", "b" -> "B", "A、C、D" or "A.x\\nC.y" -> "ACD", "Paris" -> the option
    whose text is exactly "Paris".

    None when no answer is given (an unanswered benchmark is fine); ``_AnswerError`` when one is given that
    names no option (``E`` or ``7`` of four, a text no option has), names one in two ways that disagree
    (``"2"`` when option A's text is ``2``), or hides a letter in other words (``Because B``): the row is
    then reported, never kept with its answer lost or guessed.
    """
    n_options = len(options)
    letters = LETTERS[:n_options]
    outside = _AnswerError(
        f"answer {value!r} is not one of the options ({letters[0]}-{letters[-1]} or 0-{n_options - 1})"
    )
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, bool):
        raise outside
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        if not 0 <= int(value) < n_options:
            raise outside
        return LETTERS[int(value)]
    if isinstance(value, (list, tuple)):  # ["A", "C"] or [0, 2]
        if not value:
            return None
        picked = [
            _answer(v, options) if not isinstance(v, str) else _letters(v.strip(), options, outside) for v in value
        ]
        if any(p is None for p in picked):
            raise outside
        return "".join(sorted(set("".join(p for p in picked if p))))
    text = str(value).strip()
    if not text:
        return None
    matches = [letter for letter, option in zip(letters, options) if option == text]
    try:
        read = _letters(text, options, outside)
    except _AnswerError:
        if len(matches) == 1:  # "4" of options 1-4: no index, but exactly the text of option D
            return matches[0]
        raise
    if read is not None:
        if matches and matches != [read]:
            raise _AnswerError(
                f"answer {text!r} is ambiguous: read as a letter or index it is {read}, but it is "
                f"the text of option {', '.join(matches)}"
            )
        return read
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise _AnswerError(f"answer {text!r} is the text of several options ({', '.join(matches)})")
    if re.fullmatch(rf"[A-Za-z]|\d+|[{LETTERS}]{{2,}}", text):
        raise outside
    raise _AnswerError(
        f"answer {text!r} matches no option text (nor is it a letter {letters[0]}-{letters[-1]} "
        f"or an index 0-{n_options - 1})"
    )


def _letters(text: str, options: Sequence[str], outside: _AnswerError) -> str | None:
    """The letters ``text`` names in one of the letter forms, or None when it is in none of them.

    ``_AnswerError`` when it is in a letter form but names a letter beyond the options, or labels a letter
    with a text that is not that option's.
    """
    letters = LETTERS[: len(options)]
    if text.isdigit():
        if int(text) >= len(options):
            raise outside
        return LETTERS[int(text)]
    if re.fullmatch(rf"[{LETTERS}]{{2,}}", text):  # "ACD", as write_jsonl exports multi-answers
        found = set(text)
    elif "\n" in text:  # one labelled line per answer: "A. text\nC. text"
        read = [_labelled_letter(line.strip(), options, outside) for line in text.splitlines() if line.strip()]
        if None in read:
            return None
        found = {letter for letter in read if letter is not None}  # all of them, after the check above
    else:
        bare = [_BARE_LETTER.fullmatch(piece) for piece in re.split(_SEPARATORS, text) if piece]
        if bare and all(bare):  # "B", "b", "B.", "(B)", "A、C、D", "A, C"
            found = {m.group(1).upper() for m in bare if m}
        else:
            letter = _labelled_letter(text, options, outside)
            if letter is None:
                return None
            found = {letter}
    if not found or not found <= set(letters):
        raise outside
    return "".join(sorted(found))


def _labelled_letter(line: str, options: Sequence[str], outside: _AnswerError) -> str | None:
    """``B`` for ``B.``, ``(B)`` or ``B. <option B's text>``; None for a line in no such form."""
    bare = _BARE_LETTER.fullmatch(line)
    if bare:
        return bare.group(1).upper()
    labelled = _LABELLED.fullmatch(line)
    if not labelled:
        return None
    letter, text = labelled.groups()
    index = LETTERS.find(letter)
    if not 0 <= index < len(options):
        raise outside
    if options[index] != text.strip():
        raise _AnswerError(f"answer {line!r} labels option {letter}, whose text is {options[index]!r}")
    return letter


def write_jsonl(questions: Iterable[MCQuestion], path: str | Path) -> Path:
    """Export questions (e.g. a shuffled benchmark) as JSONL with ``question, A.., answer`` columns."""
    return write_atomic(path, to_jsonl(questions))


def to_jsonl(questions: Iterable[MCQuestion]) -> str:
    return "".join(json.dumps(q.as_row(), ensure_ascii=False) + "\n" for q in questions)


def with_options(question: MCQuestion, options: Sequence[str], answer: str | None) -> MCQuestion:
    return replace(question, options=tuple(options), answer=answer)
