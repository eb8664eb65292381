"""Dataset inference on ground truth with the bundled SmolLM2: a model we fine-tune on half of our passages.

LeakLens's 72 calibration passages were written for the project, so no released model has seen them. The
bundled SmolLM2 is fine-tuned for a few epochs on every other passage (the "trained half"); the
rest stay unseen. Reported side by side, from one run:

- dataset inference, trained half (suspect) vs unseen half (validation): the fine-tuned model, and the
  untrained model on the same split;
- false positives: dataset inference on random halves of texts neither model trained on, over many seeds;
- every per-text detector's AUROC (trained vs unseen, fine-tuned model) and the blind baseline.

Usage: .venv/bin/python bench/dataset_inference.py [--epochs 3] [--batch-size 4] [--lr 1e-4] [--splits 10]
Results go to bench/results/dataset_inference-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from core.engine.handle import resolve_model

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from scoring import machine  # noqa: E402

from core.data.text_sets import TextSet, load_text_set  # noqa: E402
from core.dataset_inference.run import DatasetInference, run_dataset_inference  # noqa: E402
from core.dataset_inference.statistic import dataset_inference  # noqa: E402
from core.engine.models import load_model, wrap_model  # noqa: E402
from core.files.outputs import write_atomic  # noqa: E402
from core.passage.calibration import FRESH_PASSAGES_PATH  # noqa: E402
from core.store.results import ResultStore  # noqa: E402
from tests.helpers.fine_tune import fine_tune  # noqa: E402


def halves(passages: TextSet) -> tuple[TextSet, TextSet]:
    def part(start: int, name: str) -> TextSet:
        return TextSet(name, passages.texts[start::2], passages.ids[start::2], passages.source, passages.text_col, [])

    return part(0, "trained half"), part(1, "unseen half")


def false_positive_rate(inference: DatasetInference, rows: np.ndarray, seeds: int, splits: int) -> float:
    """Share of random half/half splits of ``rows`` (texts nobody trained on) with p < 0.05."""
    scores = inference.scores
    features = np.column_stack([scores.scores(k) for k in scores.method_keys])[rows]
    hits = 0
    for seed in range(seeds):
        suspect = np.zeros(rows.size, bool)
        suspect[np.random.default_rng(seed).permutation(rows.size)[: rows.size // 2]] = True
        hits += dataset_inference(features, suspect, scores.method_keys, n_splits=splits, seed=seed).p_value < 0.05
    return hits / seeds


CORE_DETECTORS = ("loss", "zlib", "min_k_20", "min_k_pp_20")
"""A small detector set: with few texts, fewer features leave the learnt combination less to overfit."""


def core_detectors_p(inference: DatasetInference, splits: int) -> float:
    """The same test on the same stored scores, combining only ``CORE_DETECTORS``."""
    scores = inference.scores
    keys = [k for k in CORE_DETECTORS if k in scores.method_keys]
    features = np.column_stack([scores.scores(k) for k in keys])
    return dataset_inference(features, [label == 1 for label in scores.labels], keys, n_splits=splits).p_value


def summary_of(inference: DatasetInference, splits: int) -> dict[str, object]:
    blind = inference.scores.blind_baseline
    return {
        "p_value": inference.result.p_value,
        "p_value_core_detectors": core_detectors_p(inference, splits),
        "level": inference.finding.level,
        "effect_size": inference.result.effect_size,
        "blind_baseline_auroc": None if blind is None else blind.auroc,
        "per_text_auroc": {
            inference.scores.method_labels.get(k, k): (None if m is None else round(m.auroc, 3))
            for k, m in inference.scores.metrics.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--epochs", type=int, default=3, help="passes of fine-tuning over the trained half")
    parser.add_argument("--batch-size", type=int, default=4, help="texts per optimizer step")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--splits", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=20, help="random splits for the false-positive rate")
    args = parser.parse_args()
    info = machine()
    full = load_text_set(str(FRESH_PASSAGES_PATH))
    # The first 72 passages (English prose), the set the recorded results were measured on.
    passages = TextSet(full.name, full.texts[:72], full.ids[:72], full.source, full.text_col, [])
    trained, unseen = halves(passages)
    base = load_model(args.model)
    started = time.perf_counter()
    tuned_model = copy.deepcopy(base.model)
    final_loss = fine_tune(
        tuned_model,
        base.tokenizer,
        base.start_token_id,
        trained.texts,
        steps=args.epochs,
        lr=args.lr,
        batch_size=args.batch_size,
    )
    train_s = time.perf_counter() - started
    tuned = wrap_model(tuned_model, base.tokenizer, spec=args.model, start_token_id=base.start_token_id)
    print(f"fine-tuned {args.epochs} epochs in {train_s:.0f} s (last loss {final_loss:.3f})")
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, lm in (("fine-tuned", tuned), ("untrained", base)):
            store = ResultStore(Path(tmp) / f"{name}.sqlite")  # both go by one spec: never share scores
            runs[name] = run_dataset_inference(
                trained,
                unseen,
                resolve_model(args.model, loader=lambda spec, lm=lm: lm),
                n_splits=args.splits,
                store=store,
            )
            print(f"{name}: p = {runs[name].result.p_value:.3g} ({runs[name].finding.level})")
    unseen_rows = np.flatnonzero(np.array(runs["fine-tuned"].scores.labels) == 0)
    fpr = {
        "fine-tuned, two unseen halves": false_positive_rate(runs["fine-tuned"], unseen_rows, args.seeds, args.splits),
        "untrained, all passages": false_positive_rate(
            runs["untrained"], np.arange(len(passages)), args.seeds, args.splits
        ),
    }
    report = {
        "benchmark": "dataset_inference",
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": info,
        "model": args.model,
        "passages": {"trained": len(trained), "unseen": len(unseen)},
        "fine_tuning": {
            "epochs": args.epochs,
            "batch_size": args.batch_size,
            "lr": args.lr,
            "last_loss": final_loss,
            "seconds": train_s,
        },
        "splits": args.splits,
        "summary": {
            "fine_tuned": summary_of(runs["fine-tuned"], args.splits),
            "untrained": summary_of(runs["untrained"], args.splits),
            "false_positive_rate_at_0.05": fpr,
            "false_positive_seeds": args.seeds,
        },
    }
    out = REPO / "bench" / "results" / f"dataset_inference-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    write_atomic(out, json.dumps(report, indent=2) + "\n")
    print(json.dumps(report["summary"], indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
