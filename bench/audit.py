"""The audit of the shipped demo benchmark with the bundled SmolLM2, timed against its parts and its plan.

Reported from one run, side by side (the machine named):

- the audit of ``demo:mcq`` from a fresh results store (its fresh-passage scores ship with LeakLens): wall time, each
  step's time and the verdict;
- the previous path: the same tests run one by one through their own commands (``order-test``, ``mcq
  --permutation-test``) on another fresh store, so the audit's cost over them is its extraction and combination;
- the plan's expected times beside the measured ones (``core.audit.estimates``);
- the bare forward-pass rate of the same model in the same run (tokens per second), to read the times by.

    .venv/bin/python bench/audit.py [--benchmark demo:mcq]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
RESULTS = REPO / "bench" / "results"

from bench.scoring import machine, write_result  # noqa: E402
from bench.tour import forward_rate  # noqa: E402


def audit_in_process(benchmark: str, store_path: Path) -> dict[str, object]:
    from core.audit.estimates import plan_with_estimates
    from core.audit.plan import plan_audit
    from core.audit.run import run_audit
    from core.data.tables import load_rows
    from core.engine.handle import resolve_model
    from core.store.results import ResultStore

    started = time.perf_counter()
    model = resolve_model("smollm2-135m")
    table = load_rows(benchmark)
    plan = plan_with_estimates(plan_audit(table), model, table)
    marks: list[tuple[str, float]] = []

    def progress(label: str):
        marks.append((label, time.perf_counter()))
        return None

    audit = run_audit(table, model, store=ResultStore(store_path), plan=plan, progress=progress)
    ended = time.perf_counter()
    steps = {}
    for (label, at), (_, until) in zip(marks, [*marks[1:], ("end", ended)], strict=True):
        steps[label] = round(until - at, 1)
    return {
        "seconds": round(ended - started, 1),
        "steps_s": steps,
        "expected_s": {p.title: round(p.estimate_s or 0.0, 1) for p in plan.to_run},
        "level": audit.finding.level,
        "headline": audit.finding.headline,
        "parts": {p.key: {"level": p.finding.level, "p_value": p.p_value} for p in audit.parts},
    }


def commands_one_by_one(benchmark: str, store_path: Path) -> dict[str, object]:
    """The tests an audit of a multiple-choice file runs, each through its own command (a fresh process each)."""
    steps = {
        "order-test": ["order-test", "--dataset", benchmark],
        "mcq --permutation-test": ["mcq", "--dataset", benchmark, "--permutation-test"],
    }
    timings = {}
    for name, argv in steps.items():
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "core", *argv, "--model", "smollm2-135m", "--store", str(store_path), "--json"],
            cwd=REPO,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        timings[name] = round(time.perf_counter() - started, 1)
    return {"seconds": round(sum(timings.values()), 1), "steps_s": timings}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--benchmark", default="demo:mcq")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="leaklens-audit-bench-"))
    report: dict[str, object] = {"machine": machine(), "benchmark": args.benchmark, "model": "smollm2-135m"}
    report["forward_pass"] = forward_rate()
    report["audit"] = audit_in_process(args.benchmark, folder / "audit.sqlite")
    report["commands_one_by_one"] = commands_one_by_one(args.benchmark, folder / "commands.sqlite")
    audit_s = float(report["audit"]["seconds"])  # type: ignore[index]
    rate = float(report["forward_pass"]["tokens_per_s"])  # type: ignore[index]
    report["summary"] = {
        "audit_s": audit_s,
        "within_5_min": audit_s <= 300,
        "commands_one_by_one_s": report["commands_one_by_one"]["seconds"],  # type: ignore[index]
        "audit_over_commands": round(audit_s / float(report["commands_one_by_one"]["seconds"]), 2),  # type: ignore[index]
        "forward_tokens_per_s": rate,
        "verdict": report["audit"]["level"],  # type: ignore[index]
    }
    write_result(RESULTS, "audit", report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
