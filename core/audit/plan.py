"""What an audit will run, decided before any work: the tests that fit the benchmark and the evidence given,
in the order they run, and in one plain line each why the others do not.

Each test is judged by the reader its own command uses, so the plan never promises a test that would then
refuse the file: the rendered rows of the benchmark-order test (``core.benchmark_order.examples``), the
multiple-choice reader (``core.data.questions``), the problem reader of loss delta (``core.data.problems``),
dataset inference's text column (``core.data.text_sets``) and overlap's test-text field
(``core.overlap.sources``). A test that could not reach a verdict on this many items (each test's own
minimum) is left out with that reason rather than run for an ``inconclusive``.

``AUDIT_TESTS`` is the one place per test for its words: its title, what it checks in one line and the plain
phrase its evidence adds to the audit's headline (``core.audit.combine``). Expected times are not estimated
here (they need the model): a caller fills ``PlannedPart.estimate_s``.
"""

from __future__ import annotations

import ast
import textwrap
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from core.benchmark_order.examples import render_examples
from core.benchmark_order.run import KIND as ORDER_KIND
from core.benchmark_order.run import MIN_EXAMPLES_PER_SHARD
from core.benchmark_order.statistic import shards_needed
from core.data.problems import BUILTIN, PROMPT_COLUMNS, SOLUTION_COLUMNS, CodeProblem, ProblemSet, problems_from_table
from core.data.questions import LETTERS, MCQColumns, questions_from_table
from core.data.tables import Table, display_name
from core.data.text_sets import text_set_from_table
from core.dataset_inference.finding import MIN_TEXTS_PER_SET
from core.dataset_inference.run import KIND as INFERENCE_KIND
from core.engine.progress import format_duration
from core.errors import DataError
from core.loss_delta.comparison import COMPARISON_KIND
from core.loss_delta.finding import MIN_PROBLEMS
from core.mcq.finding import MIN_QUESTIONS
from core.mcq.permutation import MAX_OPTIONS_FOR_ORDERS
from core.mcq.stored import KIND as MCQ_KIND
from core.methods.extraction import EXTRACTION_KEY
from core.overlap.sources import TEST_TEXT_FIELDS, eval_text_field

OPTION_ORDER_KEY = "mcq-option-order"
"""The option-order test has no stored kind of its own: it is kept in the ``mcq`` run (its permutation test)."""
OVERLAP_KEY = "overlap"
"""The overlap search's name in the run-kind registry (``core.results.kinds.OVERLAP_KIND``, a layer above)."""
ORDER_MIN_EXAMPLES = shards_needed() * MIN_EXAMPLES_PER_SHARD
"""The fewest examples the benchmark-order test can give a verdict on: the shards a verdict needs (5), each
holding the two examples a shard needs to have an order at all."""
CODE_SHARE = 0.5
"""A benchmark is code when more than this share of its problems read as Python (the built-in reference set's
language), so a few odd rows neither make nor unmake it."""
_T = TypeVar("_T")
TRAINED = "trained on this benchmark"
TRAINED_OR_STYLE = "trained on this benchmark or on text of its style"


@dataclass(frozen=True)
class AuditTest:
    """One test an audit can run, in words: the one place for each test's title, line and evidence phrase."""

    key: str
    """The stored run kind's name where the test has one (``benchmark-order``, ``mcq``, ...)."""
    title: str
    checks: str
    """What it checks, in one plain line."""
    evidence: str
    """What its evidence says about the model, completing "it ..." in the audit's headline."""
    claim: str = TRAINED
    """What its evidence supports: loss delta shows a benchmark is easier, not that its items were seen."""


ORDER = AuditTest(
    ORDER_KIND,
    "Benchmark order",
    "Does the model find the file's examples likelier in their published order than shuffled?",
    "prefers the file's own order of questions",
)
MCQ = AuditTest(
    MCQ_KIND,
    "Multiple-choice memorisation",
    "Does the model finish the answer options word for word, more often in their published order than shuffled?",
    "finishes its options word for word",
)
OPTION_ORDER = AuditTest(
    OPTION_ORDER_KEY,
    "Option order",
    "Is each question's published order of options the likeliest of all its orders?",
    "prefers each question's published order of options",
)
EXTRACTION = AuditTest(
    EXTRACTION_KEY,
    "Extraction",
    "Given the first part of an item, does the model write the rest word for word?",
    "writes the rest of its items word for word from their first part",
)
LOSS_DELTA = AuditTest(
    COMPARISON_KIND,
    "Loss delta",
    "Are the benchmark's solutions easier for the model than fresh problems of the same kind?",
    "finds this benchmark (or its style) easier than fresh problems of its kind",
    TRAINED_OR_STYLE,
)
INFERENCE = AuditTest(
    INFERENCE_KIND,
    "Dataset inference",
    "Do the benchmark's texts look more familiar to the model than held-out texts from the same source?",
    "finds its texts more familiar than held-out texts from the same source",
)
OVERLAP = AuditTest(
    OVERLAP_KEY,
    "Overlap",
    "Do the benchmark's items appear (nearly) word for word in the training-data index?",
    "shares text with the training-data index",
)
AUDIT_TESTS: tuple[AuditTest, ...] = (ORDER, MCQ, OPTION_ORDER, EXTRACTION, LOSS_DELTA, INFERENCE, OVERLAP)
"""Every test an audit knows, in the order a plan runs them: the tests that need nothing but the benchmark
first, then those that need a source of evidence."""
TEST_BY_KEY: dict[str, AuditTest] = {test.key: test for test in AUDIT_TESTS}


def _given(value: str | None) -> str | None:
    """A source as given, or None for none (a page's empty field counts as none)."""
    return value.strip() if value and value.strip() else None


@dataclass(frozen=True)
class EvidenceSources:
    """What the user gave beside the model and the benchmark; each opens the test that needs it."""

    reference: str | None = None
    """Fresh problems of the same kind, for loss delta (a file, a hub id, or ``builtin`` for code)."""
    validation: str | None = None
    """Held-out texts of the same source, for dataset inference."""
    index: str | None = None
    """A training-data index's name, for overlap."""
    base_model: str | None = None
    """The model the audited one was trained from, for loss delta's Δ²."""

    def __post_init__(self) -> None:
        for name in ("reference", "validation", "index", "base_model"):
            object.__setattr__(self, name, _given(getattr(self, name)))

    @property
    def builtin_reference(self) -> bool:
        return self.reference is not None and self.reference.lower() == BUILTIN


@dataclass(frozen=True)
class PlannedPart:
    """One test in the plan: whether it runs, and why not when it does not."""

    test: AuditTest
    applies: bool
    reason: str = ""
    """Why it does not run, one plain clause ("needs solutions and a reference set"); empty when it runs."""
    reads: tuple[str, ...] = ()
    """The benchmark's columns the test reads, when it runs."""
    estimate_s: float | None = None
    """Expected seconds on this machine, filled by the caller (an estimate needs the model)."""

    def __post_init__(self) -> None:
        if self.applies == bool(self.reason):
            raise ValueError("A planned part that runs has no reason; one that does not run needs one.")

    @property
    def key(self) -> str:
        return self.test.key

    @property
    def title(self) -> str:
        return self.test.title

    @property
    def checks(self) -> str:
        return self.test.checks

    @property
    def why_not(self) -> str:
        """``Loss delta: needs solutions and a reference set``; empty when the part runs."""
        return f"{self.title}: {self.reason}" if self.reason else ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "test": self.key,
            "title": self.title,
            "checks": self.checks,
            "applies": self.applies,
            "reason": self.reason,
            "reads": list(self.reads),
            "estimate_s": self.estimate_s,
        }


@dataclass(frozen=True)
class AuditPlan:
    """Every test an audit knows, in run order, each planned or left out with its reason."""

    benchmark: str
    n_rows: int
    sources: EvidenceSources
    parts: tuple[PlannedPart, ...]
    notes: tuple[str, ...] = ()
    """What a user should know about the sources given (a base model no planned test uses)."""

    @property
    def to_run(self) -> tuple[PlannedPart, ...]:
        return tuple(part for part in self.parts if part.applies)

    @property
    def left_out(self) -> tuple[PlannedPart, ...]:
        return tuple(part for part in self.parts if not part.applies)

    def part(self, key: str) -> PlannedPart:
        for part in self.parts:
            if part.key == key:
                return part
        raise KeyError(f"No test {key!r} in the audit plan; tests: {', '.join(p.key for p in self.parts)}.")

    def with_estimates(self, seconds: Mapping[str, float]) -> AuditPlan:
        """The plan with each named part's expected time filled in (parts not named keep theirs)."""
        unknown = sorted(set(seconds) - {part.key for part in self.parts})
        if unknown:
            raise KeyError(f"No test {', '.join(map(repr, unknown))} in the audit plan.")
        parts = tuple(replace(p, estimate_s=seconds[p.key]) if p.key in seconds else p for p in self.parts)
        return replace(self, parts=parts)

    def lines(self) -> list[str]:
        """The plan in plain lines: the tests that run, numbered, with their times; then why the others do not."""
        lines = [f"Audit of {self.benchmark} ({self.n_rows:,} rows): {len(self.to_run)} tests"]
        for number, part in enumerate(self.to_run, 1):
            time = format_duration(part.estimate_s)
            lines.append(f"  {number}. {part.title}: {part.checks}" + (f" ({time})" if time else ""))
        if self.left_out:
            lines.append("Not run:")
            lines.extend(f"  {part.why_not}" for part in self.left_out)
        lines.extend(self.notes)
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark,
            "rows": self.n_rows,
            "sources": {
                name: getattr(self.sources, name) for name in ("reference", "validation", "index", "base_model")
            },
            "parts": [part.to_dict() for part in self.parts],
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AuditPlan:
        """The plan of ``to_dict`` (a stored audit's); a test this LeakLens does not know is named as stored."""
        parts = tuple(
            PlannedPart(
                TEST_BY_KEY.get(str(p["test"])) or AuditTest(str(p["test"]), str(p.get("title") or p["test"]), "", ""),
                bool(p["applies"]),
                str(p.get("reason") or ""),
                tuple(p.get("reads") or ()),
                p.get("estimate_s"),
            )
            for p in data.get("parts") or ()
        )
        sources = EvidenceSources(**{k: v for k, v in (data.get("sources") or {}).items() if v})
        return cls(str(data["benchmark"]), int(data["rows"]), sources, parts, tuple(data.get("notes") or ()))


def plan_audit(
    table: Table,
    sources: EvidenceSources | None = None,
    *,
    n_rows: int | None = None,
    mcq_columns: MCQColumns | None = None,
) -> AuditPlan:
    """The audit of a benchmark read as ``table``, with the evidence ``sources`` given.

    ``table`` holds every row, or (with ``n_rows`` the benchmark's full count) its first rows as a sample: the
    columns and sampled rows decide which readers accept the file, and the counts come from the readers on a
    whole table, from ``n_rows`` on a sample (rows a reader would skip are then still counted).
    ``mcq_columns`` names the question, option and answer columns as the multiple-choice test is told them.
    """
    sources = sources or EvidenceSources()
    if n_rows is not None and n_rows < len(table):
        raise ValueError(f"n_rows ({n_rows}) is below the {len(table)} rows given.")
    reader = _Reader(table, n_rows, mcq_columns or MCQColumns())
    parts = (
        _order_part(reader),
        *_mcq_parts(reader),
        _extraction_part(reader),
        _loss_delta_part(reader, sources),
        _inference_part(reader, sources),
        _overlap_part(reader, sources),
    )
    notes: tuple[str, ...] = ()
    if sources.base_model and not any(p.applies for p in parts if p.test is LOSS_DELTA):
        notes = (f"The base model {sources.base_model} is used only by loss delta, which does not run here.",)
    return AuditPlan(display_name(table.source), reader.total, sources, parts, notes)


class _Reader:
    """The benchmark as each test's own reader sees it, read once each."""

    def __init__(self, table: Table, n_rows: int | None, mcq_columns: MCQColumns) -> None:
        self.table = table
        self.mcq_columns = mcq_columns
        self.whole = n_rows is None
        self.total = len(table) if n_rows is None else n_rows
        self.examples = _or_none(lambda: render_examples(table))
        self.questions = _or_none(lambda: questions_from_table(table, columns=mcq_columns))
        self.problems = _or_none(lambda: problems_from_table(table))

    def count(self, found: int) -> int:
        """Items a test will have: what its reader found in a whole table, else the benchmark's row count."""
        return found if self.whole else self.total


def _or_none(read: Callable[[], _T]) -> _T | None:
    """What a test's reader makes of the benchmark, or None where it refuses it."""
    try:
        return read()
    except DataError:
        return None


def _left_out(test: AuditTest, reason: str) -> PlannedPart:
    return PlannedPart(test, False, reason)


def _too_few(have: int, noun: str, needed: int, why: str = "for a verdict") -> str:
    return f"needs at least {needed} {noun} {why}; this benchmark has {have}"


def _order_part(reader: _Reader) -> PlannedPart:
    examples = reader.examples
    if examples is None:
        return _left_out(ORDER, "needs a column of text to read")
    n = reader.count(len(examples))
    if n < ORDER_MIN_EXAMPLES:
        why = f"to fill the {shards_needed()} shards a verdict needs"
        return _left_out(ORDER, _too_few(n, "examples", ORDER_MIN_EXAMPLES, why))
    return PlannedPart(ORDER, True, reads=tuple(examples.fields))


def _mcq_reads(table: Table, columns: MCQColumns) -> tuple[str, ...]:
    """The columns the multiple-choice reader takes: option columns when all are there, else the list column."""
    options = columns.options if all(c in table.columns for c in columns.options) else (columns.choices,)
    answer = (columns.answer,) if columns.answer and columns.answer in table.columns else ()
    return (columns.question, *options, *answer)


def _mcq_parts(reader: _Reader) -> tuple[PlannedPart, PlannedPart]:
    questions = reader.questions
    if questions is None:
        columns = reader.mcq_columns
        reason = (
            f"needs questions with options (a {columns.question!r} column and columns {', '.join(columns.options)}, "
            f"or a list column {columns.choices!r})"
        )
        return _left_out(MCQ, reason), _left_out(OPTION_ORDER, reason)
    n = reader.count(len(questions))
    if n < MIN_QUESTIONS:
        reason = _too_few(n, "questions", MIN_QUESTIONS)
        return _left_out(MCQ, reason), _left_out(OPTION_ORDER, reason)
    reads = _mcq_reads(reader.table, reader.mcq_columns)
    mcq = PlannedPart(MCQ, True, reads=reads)
    if questions.n_options > MAX_OPTIONS_FOR_ORDERS:
        letters = LETTERS[: questions.n_options]
        reason = (
            f"needs at most {MAX_OPTIONS_FOR_ORDERS} options per question; these have {questions.n_options} "
            f"({letters[0]}–{letters[-1]}), too many orders to score"
        )
        return mcq, _left_out(OPTION_ORDER, reason)
    return mcq, PlannedPart(OPTION_ORDER, True, reads=reads)


def _extraction_part(reader: _Reader) -> PlannedPart:
    examples = reader.examples
    if examples is None or (reader.whole and not len(examples)):
        return _left_out(EXTRACTION, "needs items with text")
    return PlannedPart(EXTRACTION, True, reads=tuple(examples.fields))


def _solution_column(table: Table) -> str | None:
    """The column loss delta reads solutions from, as ``problems_from_table`` picks it (first of its names)."""
    return next((c for c in SOLUTION_COLUMNS if c in table.columns), None)


def _reads_as_python(problem: CodeProblem) -> bool:
    """The solution, after its prompt (HumanEval's function bodies) or alone (MBPP's whole functions), parses as
    Python holding a statement: a lone name or number (an option letter) is not code."""
    for source in (problem.prompt + problem.solution, textwrap.dedent(problem.solution)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SyntaxWarning)  # prose read as Python: "1st", "3rd"
                tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        if any(not isinstance(node, ast.Expr) for node in tree.body):
            return True
    return False


def is_code_benchmark(problems: ProblemSet) -> bool:
    """Whether a problem set is Python code, the language of the built-in reference set (``CODE_SHARE``)."""
    return bool(problems.problems) and sum(map(_reads_as_python, problems.problems)) > CODE_SHARE * len(problems)


def _loss_delta_part(reader: _Reader, sources: EvidenceSources) -> PlannedPart:
    problems = reader.problems
    solution_col = _solution_column(reader.table)
    picks_option = reader.questions is not None and solution_col == reader.mcq_columns.answer
    if problems is None or picks_option:
        missing = "solutions and a reference set" if sources.reference is None else "solutions to score"
        why = " (this benchmark's answers only pick an option)" if picks_option else ""
        return _left_out(LOSS_DELTA, f"needs {missing}{why}")
    n = reader.count(len(problems))
    if n < MIN_PROBLEMS:
        return _left_out(LOSS_DELTA, _too_few(n, "problems", MIN_PROBLEMS))
    if sources.reference is None:
        return _left_out(LOSS_DELTA, "needs a reference set of fresh problems of the same kind")
    if sources.builtin_reference and not is_code_benchmark(problems):
        return _left_out(
            LOSS_DELTA,
            "the built-in reference set is Python code problems and this benchmark is not code; give a reference "
            "set of its own kind",
        )
    prompt_col = next((c for c in PROMPT_COLUMNS if c in reader.table.columns), None)
    return PlannedPart(LOSS_DELTA, True, reads=tuple(c for c in (prompt_col, solution_col) if c))


def _inference_part(reader: _Reader, sources: EvidenceSources) -> PlannedPart:
    if sources.validation is None:
        return _left_out(INFERENCE, "needs a validation set of held-out texts from the same source")
    texts = _or_none(lambda: text_set_from_table(reader.table))
    if texts is None:
        return _left_out(INFERENCE, "needs a text column in the benchmark (such as text, input or passage)")
    n = reader.count(len(texts))
    if n < MIN_TEXTS_PER_SET:
        return _left_out(INFERENCE, _too_few(n, "texts", MIN_TEXTS_PER_SET))
    return PlannedPart(INFERENCE, True, reads=(texts.text_col,))


def _overlap_part(reader: _Reader, sources: EvidenceSources) -> PlannedPart:
    if sources.index is None:
        return _left_out(OVERLAP, "needs a training-data index to search")
    field = _or_none(lambda: eval_text_field(reader.table.columns))
    if field is None:
        return _left_out(OVERLAP, f"needs a text field in the benchmark (one of {', '.join(TEST_TEXT_FIELDS)})")
    return PlannedPart(OVERLAP, True, reads=(field,))
