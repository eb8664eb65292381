"""Rebuild the bundled model's shipped fresh-passage scores (``assets/calibration/scores/<model>.json``).

The bundled SmolLM2 scores every fresh calibration passage on the CPU in float32 (the setup a newcomer's
machine without a GPU resolves to), as ``stored_fresh_calibration`` would on first use, and the scores are
written with the store key they belong to, and the set's sentence embeddings beside them
(``assets/calibration/fresh_embeddings.npy``, what finds a passage's nearest fresh passages in kind). Passages
whose scores already ship (same key but for the set, unchanged texts) keep them unless ``--rescore-all``.
Run it whenever the fresh set, the score definitions, the fresh
methods or the bundled model change; ``tests/membership/test_shipped_calibration.py`` fails until then.

    .venv/bin/python -m bench.calibration [--model smollm2-135m]

Scoring every passage takes about 35 minutes on a 2-core CPU; after passages were added, only those
(about 1 to 3 s each).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from core.engine.handle import resolve_model

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.scoring import machine  # noqa: E402
from core.engine.bundled import BUNDLED_MODELS  # noqa: E402
from core.engine.models import load_model  # noqa: E402
from core.engine.progress import text_progress  # noqa: E402
from core.engine.setup import ScoringSetup  # noqa: E402
from core.files.outputs import write_atomic  # noqa: E402
from core.passage.calibration import (  # noqa: E402
    FRESH_KIND,
    fresh_set_fingerprint,
    load_fresh_passages,
    stored_fresh_calibration,
)
from core.passage.kind import EMBEDDINGS_META_PATH, EMBEDDINGS_PATH, embed, write_vectors  # noqa: E402
from core.passage.shipped_calibration import shipped_path, shipped_payload  # noqa: E402
from core.store.results import ResultStore  # noqa: E402

SHIPPED_SETUP = ScoringSetup("cpu", "float32")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2-135m", choices=sorted(BUNDLED_MODELS))
    parser.add_argument(
        "--rescore-all",
        action="store_true",
        help="score every passage again (default: keep the shipped scores of passages that did not change)",
    )
    args = parser.parse_args(argv)
    lm = load_model(args.model, device=SHIPPED_SETUP.device, dtype=SHIPPED_SETUP.dtype)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="leaklens-calibration-") as tmp:
        store = ResultStore(Path(tmp) / "results.sqlite")
        progress = text_progress("fresh passages", sys.stderr, unit="passage")
        calibration = stored_fresh_calibration(
            resolve_model(args.model, loader=lambda _: lm, setup=SHIPPED_SETUP),
            store=store,
            progress=progress,
            shipped=False,
            reuse_shipped=not args.rescore_all,
        )
        (run,) = store.list_runs(FRESH_KIND)
        samples = store.load_samples(calibration.run_id)
    made = {
        "model": args.model,
        "setup": SHIPPED_SETUP.to_dict(),
        "date": f"{datetime.now(UTC):%Y-%m-%d}",
        "seconds": round(time.perf_counter() - started),
        "machine": {k: v for k, v in machine().items() if k != "load_average_at_start"},
    }
    path = write_atomic(shipped_path(args.model), shipped_payload(run.key, samples, made))
    print(f"{len(samples)} passages ({calibration.n_computed} scored now) in {made['seconds']} s; written to {path}")
    passages = load_fresh_passages()
    vectors = embed([p.text for p in passages], progress=text_progress("embeddings", sys.stderr, unit="passage"))
    write_vectors(EMBEDDINGS_PATH, EMBEDDINGS_META_PATH, vectors, fresh_set_fingerprint(passages))
    print(f"{len(passages)} passage embeddings written to {EMBEDDINGS_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
