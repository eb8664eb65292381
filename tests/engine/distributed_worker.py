"""One rank of a torchrun job for tests/engine/test_distributed.py: the run loop on several real processes.

    torchrun --nproc-per-node 2 tests/engine/distributed_worker.py STORE OUT_DIR MODE

MODE ``ok`` scores 10 samples in batches of 2; ``fail`` makes rank 1 fail on its second batch;
``other-data`` gives rank 1 other sample ids. Every rank writes what it saw to OUT_DIR/rank<N>.json.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.engine.distributed import process_group  # noqa: E402
from core.store.results import ResultStore, SampleRow  # noqa: E402
from core.store.runloop import RunRequest, run_resumable  # noqa: E402

N_SAMPLES = 10
BATCH_SIZE = 2
REQUEST = RunRequest("demo", {"k": 1}, {"n_total": N_SAMPLES})


def sample_ids() -> list[str]:
    return [f"s{i}" for i in range(N_SAMPLES)]


def main() -> None:
    store_path, out_dir, mode = sys.argv[1:4]
    with process_group("cpu") as ranks:
        assert ranks is not None, "launch with torchrun --nproc-per-node 2"
        ids = sample_ids()
        if mode == "other-data" and ranks.rank == 1:
            ids = ids[::-1]
        calls: list[list[int]] = []

        def score_batch(positions: list[int]) -> list[SampleRow]:
            calls.append(positions)
            if mode == "fail" and ranks.rank == 1 and len(calls) == 2:
                raise RuntimeError("planted failure")
            return [SampleRow(ids[i], None, {"x": i / 4}, {"pid": os.getpid()}) for i in positions]

        try:
            outcome = run_resumable(
                ResultStore(store_path), REQUEST, ids, score_batch, lambda rows: {"n": len(rows)}, batch_size=BATCH_SIZE
            )
            result = {
                "n_computed": outcome.n_computed,
                "ids": [s.sample_id for s in outcome.samples],
                "scores": [s.scores["x"] for s in outcome.samples],
                "pids": sorted({s.summary.get("pid") for s in outcome.samples if "pid" in s.summary}),
                "summary": outcome.run.summary,
                "calls": calls,
            }
        except Exception as exc:  # noqa: BLE001 - reported to the test
            result = {"error": type(exc).__name__, "message": str(exc), "calls": calls}
        Path(out_dir, f"rank{ranks.rank}.json").write_text(json.dumps(result))


if __name__ == "__main__":
    main()
