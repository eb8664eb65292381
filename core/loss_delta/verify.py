"""Check HumanEval-style problems by running them: canonical solution + test function + docstring examples.

A reference set is only a fair comparison when its solutions are correct, so every problem runs in its
own Python subprocess (isolated mode, a scratch directory, a timeout) and must pass both its ``check``
function and the ``>>>`` examples in its prompt.
``python -m core.loss_delta.verify [PATH]`` verifies a JSONL file (default: the built-in set).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.data.problems import BUILTIN_PATH
from core.data.tables import load_rows
from core.errors import DataError

REQUIRED_FIELDS = ("task_id", "prompt", "canonical_solution", "test", "entry_point")
DEFAULT_TIMEOUT = 10.0

_RUNNER = """

import doctest as _doctest
check({entry})
_runner = _doctest.DocTestRunner(verbose=False)
for _test in _doctest.DocTestFinder().find({entry}, {entry!r}, module=False, globs=dict(globals())):
    _runner.run(_test)
if not _runner.tries:
    raise SystemExit("the prompt has no >>> examples")
if _runner.failures:
    raise SystemExit(f"{{_runner.failures}} docstring example(s) failed")
"""


@dataclass(frozen=True)
class Verification:
    """Outcome of running one problem."""

    task_id: str
    passed: bool
    detail: str
    """Empty when passed; otherwise the error (last lines of stderr, or 'timed out')."""
    seconds: float


def problem_program(problem: Mapping[str, Any]) -> str:
    """The script that must exit 0: prompt + canonical solution, the test function, then the checks."""
    missing = [f for f in REQUIRED_FIELDS if not isinstance(problem.get(f), str) or not problem[f].strip()]
    if missing:
        raise DataError(f"Problem {problem.get('task_id', '?')} lacks field(s) {', '.join(missing)}.")
    entry = problem["entry_point"]
    if not entry.isidentifier():
        raise DataError(f"Problem {problem['task_id']}: entry_point {entry!r} is not a Python name.")
    return problem["prompt"] + problem["canonical_solution"] + "\n" + problem["test"] + _RUNNER.format(entry=entry)


def verify_problem(problem: Mapping[str, Any], *, timeout: float = DEFAULT_TIMEOUT) -> Verification:
    task_id = str(problem.get("task_id", "?"))
    program = problem_program(problem)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="leaklens-verify-") as scratch:
        try:
            done = subprocess.run(
                [sys.executable, "-I", "-"],
                input=program,
                capture_output=True,
                text=True,
                cwd=scratch,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return Verification(task_id, False, f"timed out after {timeout:g} s", time.perf_counter() - started)
    seconds = time.perf_counter() - started
    if done.returncode == 0:
        return Verification(task_id, True, "", seconds)
    tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
    return Verification(task_id, False, " | ".join(tail) or f"exit code {done.returncode}", seconds)


def verify_problems(
    problems: Sequence[Mapping[str, Any]], *, timeout: float = DEFAULT_TIMEOUT, workers: int = 2
) -> list[Verification]:
    """Verify every problem (``workers`` subprocesses at a time); results in input order."""
    ids = [str(p.get("task_id", "")) for p in problems]
    duplicates = sorted({t for t in ids if ids.count(t) > 1})
    if duplicates:
        raise DataError(f"Duplicate task ids: {', '.join(duplicates)}.")
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(lambda p: verify_problem(p, timeout=timeout), problems))


def load_problem_rows(path: str | Path = BUILTIN_PATH) -> list[dict[str, Any]]:
    table = load_rows(str(path))
    if table.skipped:
        raise DataError(f"{path}: {table.skipped_summary()}.")
    table.require_columns(*REQUIRED_FIELDS)
    return table.rows


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    path = args[0] if args else BUILTIN_PATH
    results = verify_problems(load_problem_rows(path))
    failed = [r for r in results if not r.passed]
    for r in failed:
        print(f"FAIL {r.task_id}: {r.detail}")
    print(f"{len(results) - len(failed)}/{len(results)} problems pass")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
