"""The README's tour, timed: every step's command run cold (a fresh LeakLens cache and results store, as on
a fresh install: only ``make setup``'s one-time conversion of the bundled model done, its time recorded apart
as ``setup_s``) and then warm (the same cache and store again), beside the forward-pass rate of the bundled
model measured in the same run, so a slow step can be told from a slow machine.

    .venv/bin/python -m bench.tour [--steps inspect mia ...] [--budget 180]

Each step runs as its own process (``python -m core ...``), the way a newcomer types it, with stderr kept
(the one-time lines and progress a log would show). Results go to bench/results/tour-<timestamp>.json; a
step over ``--budget`` seconds cold is marked in the summary.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.scoring import bare_forward, machine, write_result  # noqa: E402

GETTYSBURG = (
    "Four score and seven years ago our fathers brought forth on this continent, a new nation, conceived in "
    "Liberty, and dedicated to the proposition that all men are created equal."
)
BUDGET_S = 180.0
"""Every tour step finishes within 3 minutes on a fresh install (the 2-core machine, bundled model)."""


@dataclass(frozen=True)
class Step:
    name: str
    title: str
    commands: tuple[tuple[str, ...], ...]


STEPS: tuple[Step, ...] = (
    Step("inspect", "1. Inspect a passage", (("inspect", "--text", GETTYSBURG),)),
    Step(
        "mia",
        "2. Membership benchmark",
        (
            (
                "mia",
                "--dataset",
                "demo:famous-vs-fresh",
                "--model",
                "smollm2-135m",
                "--limit",
                "100",
                "--sample",
                "--out",
                "r.json",
            ),
        ),
    ),
    Step("delta", "3. Loss delta", (("delta", "--test", "humaneval", "--reference", "builtin"),)),
    Step("mcq", "4. MCQ memorisation", (("mcq", "--dataset", "demo:mcq"),)),
    Step(
        "overlap",
        "5. Overlap search",
        (
            ("overlap", "index", "--name", "demo", "--dataset", "demo:overlap-train", "--overwrite"),
            ("overlap", "search", "--index", "demo", "--dataset", "demo:overlap-test", "--output-dir", "overlap-out"),
        ),
    ),
    Step(
        "dataset-inference",
        "6. Dataset inference",
        (
            (
                "dataset-inference",
                "--suspect",
                "demo:famous-vs-fresh",
                "--suspect-where",
                "label=1",
                "--validation",
                "demo:famous-vs-fresh",
                "--validation-where",
                "label=0",
                "--model",
                "smollm2-135m",
            ),
        ),
    ),
    Step("order-test", "8. Benchmark order test", (("order-test", "--dataset", "demo:mcq", "--shards", "8"),)),
)


def forward_rate() -> dict[str, float]:
    """Tokens per second of the bundled model's bare forward pass on the fresh passages, in this process."""
    from core.engine.models import load_model
    from core.passage.calibration import load_fresh_passages

    lm = load_model("smollm2-135m")
    texts = [p.text for p in load_fresh_passages()[:96]]
    bare_forward(lm, texts[:8])  # warm-up
    start = time.perf_counter()
    tokens = bare_forward(lm, texts)
    seconds = time.perf_counter() - start
    return {"tokens": tokens, "seconds": round(seconds, 3), "tokens_per_s": round(tokens / seconds, 1)}


def prepare_as_setup_does(env: dict[str, str]) -> float:
    """Convert the bundled model into the step's fresh cache, as ``make setup`` does; its seconds."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "core.engine.bundled"], env=env, check=True, capture_output=True, timeout=3600
    )
    return round(time.perf_counter() - start, 2)


def run_step(step: Step, env: dict[str, str], workdir: Path) -> dict[str, object]:
    """Run the step's commands in order; wall time, exit codes and the stderr lines a log would show."""
    start = time.perf_counter()
    parts = []
    for command in step.commands:
        began = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "core", *command],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=3600,
        )
        parts.append(
            {
                "command": "python -m core " + " ".join(command),
                "seconds": round(time.perf_counter() - began, 2),
                "returncode": done.returncode,
                "finding": next((line for line in done.stdout.splitlines() if line.startswith("finding")), None),
                "stderr_tail": done.stderr.splitlines()[-12:],
            }
        )
    return {"seconds": round(time.perf_counter() - start, 2), "commands": parts}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", nargs="*", choices=[s.name for s in STEPS], help="default: every step")
    parser.add_argument("--budget", type=float, default=BUDGET_S, help="seconds a cold step may take")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results", help="folder for the JSON result")
    args = parser.parse_args(argv)
    steps = [s for s in STEPS if not args.steps or s.name in args.steps]
    info = machine()
    rows = []
    with tempfile.TemporaryDirectory(prefix="leaklens-tour-") as tmp:
        root = Path(tmp)
        for step in steps:
            cache, workdir = root / step.name / "cache", root / step.name / "work"
            workdir.mkdir(parents=True)
            env = {
                **os.environ,
                "LEAKLENS_CACHE": str(cache),
                "LEAKLENS_STORE": str(cache / "results.sqlite"),
                "HF_HUB_OFFLINE": "1",
                "HF_DATASETS_OFFLINE": "1",
                "PYTHONPATH": str(REPO),
                "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE"),
            }
            setup_s = prepare_as_setup_does(env)
            cold = run_step(step, env, workdir)
            warm = run_step(step, env, workdir)
            rows.append({"step": step.name, "title": step.title, "setup_s": setup_s, "cold": cold, "warm": warm})
            print(
                f"{step.title}: setup {setup_s} s, cold {cold['seconds']} s, warm {warm['seconds']} s", file=sys.stderr
            )
    rate = forward_rate()
    failed = [
        r["step"] for r in rows for part in (*r["cold"]["commands"], *r["warm"]["commands"]) if part["returncode"]
    ]
    over = [r["step"] for r in rows if float(r["cold"]["seconds"]) > args.budget]
    summary = {
        "budget_s": args.budget,
        "cold_s": {r["step"]: r["cold"]["seconds"] for r in rows},
        "warm_s": {r["step"]: r["warm"]["seconds"] for r in rows},
        "setup_s": {r["step"]: r["setup_s"] for r in rows},
        "over_budget": over,
        "failed": sorted(set(failed)),
        "forward_tokens_per_s": rate["tokens_per_s"],
        "cpu": info.get("cpu"),
    }
    write_result(
        REPO / "bench" / "results", "tour", {"machine": info, "forward_pass": rate, "steps": rows, "summary": summary}
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
