"""One process vs two (``torchrun --nproc-per-node 2``) scoring the same texts: speed and identical results.

Both runs are the real command, ``python -m core mia`` on the WikiMIA length-128 sample with a fresh
results store each, so they are compared end to end (process start and model load included) and in the
steady state (tokens of every stored step after the first, over the time between those writes; model
load excluded). Results must be identical: the same --out numbers and the same stored rows, bit for bit.

    .venv/bin/python bench/distributed.py [--passages 96] [--model smollm2-135m] [--methods loss] [--quick]

``--quick`` is a smoke run (24 passages, the tiny random model; nothing written). Results go to
bench/results/distributed-<timestamp>.json; its ``summary`` holds ``identical_results`` and ``speed_ratio``
(two-process tokens/s over one-process tokens/s, end to end).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from scoring import machine  # noqa: E402

from core.files.outputs import write_atomic  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "wikimia_length128.parquet"
RUN_DEPENDENT = ("provenance", "elapsed_s")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def launcher(processes: int) -> list[str]:
    if processes == 1:
        return [sys.executable]
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        str(processes),
        "--master-addr",
        "127.0.0.1",
        "--master-port",
        str(free_port()),
    ]


def run_mia(processes: int, args: argparse.Namespace, work: Path) -> dict[str, object]:
    """One timed ``mia`` command; its --out document, stored rows and rates."""
    store, out = work / f"store-{processes}.sqlite", work / f"out-{processes}.json"
    command = [
        *launcher(processes),
        "-m",
        "core",
        "mia",
        "--dataset",
        str(DATA),
        "--limit",
        str(args.passages),
        "--model",
        args.model,
        "--methods",
        *args.methods,
        "--batch-size",
        str(args.batch_size),
        "--store",
        str(store),
        "--out",
        str(out),
    ]
    # Same two cores either way: one process with 2 threads, or two processes with 1 thread each.
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "OMP_WAIT_POLICY": "PASSIVE",
        "OMP_NUM_THREADS": str(max(1, args.threads // processes)),
    }
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    document = json.loads(out.read_text())
    rows, writes = stored(store)
    tokens = sum(n for _, _, n in rows)
    steady_tokens = sum(n for when, n in writes[1:])
    steady_s = writes[-1][0] - writes[0][0] if len(writes) > 1 else float("nan")
    return {
        "processes": processes,
        "threads_per_process": int(env["OMP_NUM_THREADS"]),
        "wall_s": round(wall, 2),
        "tokens": tokens,
        "tokens_per_s": round(tokens / wall, 1),
        "steady_tokens_per_s": round(steady_tokens / steady_s, 1) if steady_s > 0 else None,
        "stored_steps": len(writes),
        "document": {k: v for k, v in document.items() if k not in RUN_DEPENDENT},
        "rows": [[sample_id, scores] for sample_id, scores, _ in rows],
    }


def stored(path: Path) -> tuple[list[tuple[str, str, int]], list[tuple[float, int]]]:
    """(sample id, scores JSON, tokens) in stored order, and (write time, tokens) of each stored step."""
    with sqlite3.connect(path) as conn:
        samples = conn.execute(
            "SELECT sample_id, scores_json, summary_json, written_at FROM samples ORDER BY position"
        ).fetchall()
    rows = [(s, scores, int(json.loads(summary)["n_tokens"])) for s, scores, summary, _ in samples]
    steps: dict[float, int] = {}
    for (_, _, n), (*_, when) in zip(rows, samples, strict=True):
        steps[when] = steps.get(when, 0) + n
    return rows, sorted(steps.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=96)
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--methods", nargs="+", default=["loss"])
    parser.add_argument("--batch-size", type=int, default=8, help="texts per batch, per process")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="CPU threads shared out")
    parser.add_argument("--quick", action="store_true", help="smoke run: 24 passages, tiny random model")
    args = parser.parse_args()
    if args.quick:
        args.passages, args.model = 24, "tiny-random"
    info = machine()
    with tempfile.TemporaryDirectory(prefix="leaklens-bench-dist-") as tmp:
        one = run_mia(1, args, Path(tmp))
        two = run_mia(2, args, Path(tmp))
    identical = one["document"] == two["document"] and one["rows"] == two["rows"]
    steady = (
        two["steady_tokens_per_s"] / one["steady_tokens_per_s"]
        if one["steady_tokens_per_s"] and two["steady_tokens_per_s"]
        else None
    )
    summary = {
        "identical_results": identical,
        "speed_ratio": round(two["tokens_per_s"] / one["tokens_per_s"], 3),
        "steady_speed_ratio": None if steady is None else round(steady, 3),
        "one_process_tokens_per_s": one["tokens_per_s"],
        "two_processes_tokens_per_s": two["tokens_per_s"],
    }
    result = {
        "benchmark": "distributed",
        "summary": summary,
        "machine": info,
        "settings": {
            "passages": args.passages,
            "model": args.model,
            "methods": args.methods,
            "batch_size_per_process": args.batch_size,
            "threads": args.threads,
            "backend": "gloo",
            "data": DATA.name,
            "quick": args.quick,
        },
        "runs": [{k: v for k, v in run.items() if k not in ("document", "rows")} for run in (one, two)],
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    print(json.dumps(summary, indent=2))
    for run in result["runs"]:
        print(
            f"{run['processes']} process(es): {run['wall_s']} s, {run['tokens']} tokens, "
            f"{run['tokens_per_s']} tokens/s end to end, {run['steady_tokens_per_s']} tokens/s steady"
        )
    if args.quick:  # a smoke run's numbers mean nothing: nothing is kept
        return
    out = REPO / "bench" / "results" / f"distributed-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, json.dumps(result, indent=2) + "\n")
    print(f"wrote {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
