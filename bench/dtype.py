"""bfloat16 against float32 on the CPU: speed, per-token log-probs, per-text scores and AUROCs, in one run.

The bundled model is loaded twice (``--dtype float32`` and ``--dtype bfloat16``) and scores the WikiMIA
length-128 sample with the detectors that need one pass (loss, zlib, Min-K%, Min-K%++, the slopes without
k-gram normalisation), float32 first unless ``--bfloat16-first``. Reported: tokens/s of the plain forward pass and of
the scoring pass, per-token log-prob differences, per-text score differences and AUROCs with their 95%
intervals for both dtypes. The matmul FLOP/s of both dtypes are measured in the same run.

    .venv/bin/python bench/dtype.py [--model smollm2-135m] [--passages 250] [--bfloat16-first] [--quick] [--out DIR]

``--quick`` is a smoke run (12 passages, the tiny random model, one small matmul): seconds even on a CPU that
emulates bfloat16, where the model-sized matmuls alone take minutes. Results go to bench/results/dtype-<timestamp>.json;
its ``summary`` holds whether this CPU's bfloat16 is native or emulated (``cpu_bfloat16``), ``speedup_bf16``,
the log-prob differences, whether every AUROC lies inside the other
dtype's interval, and ``recommend_bf16_default`` under the rule stated in ``LOGPROB_TOLERANCE``.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from scoring import MATMUL_SHAPES, QUICK_MATMUL_SHAPES, bare_forward, machine, matmul_flops, timed, write_result  # noqa: E402

from core.data.labelled import load_labelled_dataset  # noqa: E402
from core.engine.models import load_model  # noqa: E402
from core.methods import default_methods  # noqa: E402
from core.methods.analysis import analyse_passages  # noqa: E402
from core.stats.metrics import evaluate  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "wikimia_length128.parquet"
DTYPES = ("float32", "bfloat16")
LOGPROB_TOLERANCE = 0.05
"""bfloat16 could become the CPU default only if the 99th percentile of |Δ log p| per token stays within
this many nats (and every AUROC lies inside the other dtype's 95% interval)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--passages", type=int, default=250)
    parser.add_argument("--bfloat16-first", action="store_true", help="measure bfloat16 before float32")
    parser.add_argument("--quick", action="store_true", help="smoke run: 12 passages, tiny random model")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)
    if args.quick:
        args.model, args.passages = "tiny-random", 12

    info = machine()
    data = load_labelled_dataset(str(DATA))
    texts, labels = data.texts[: args.passages], data.labels[: args.passages]
    methods = [m for m in default_methods() if not m.kgram_needed]
    models = {dtype: load_model(args.model, dtype=dtype) for dtype in DTYPES}
    print(f"{len(texts)} passages, {len(methods)} detectors, {models['float32'].describe()}", flush=True)

    shapes = QUICK_MATMUL_SHAPES if args.quick else MATMUL_SHAPES
    matmul = {dtype: max(matmul_flops(lm.device, lm.dtype, shapes).values()) for dtype, lm in models.items()}
    seconds: dict[str, dict[str, float]] = {dtype: {} for dtype in DTYPES}
    analyses = {}
    for dtype in DTYPES[::-1] if args.bfloat16_first else DTYPES:
        lm = models[dtype]
        analyse_passages(lm, texts[:2], methods)  # warm-up
        n_tokens, seconds[dtype]["forward"] = timed(lambda lm=lm: bare_forward(lm, texts))
        analyses[dtype], seconds[dtype]["scoring"] = timed(lambda lm=lm: analyse_passages(lm, texts, methods))
        print(
            f"{dtype}: forward {seconds[dtype]['forward']:.1f} s, scoring {seconds[dtype]['scoring']:.1f} s", flush=True
        )

    full, half = analyses["float32"], analyses["bfloat16"]
    diffs = np.concatenate([np.abs(a.records.logprobs - b.records.logprobs) for a, b in zip(full, half)])
    per_method = {}
    for m in methods:
        a = np.array([x.scores[m.key] for x in full])
        b = np.array([x.scores[m.key] for x in half])
        ra, rb = evaluate(labels, a), evaluate(labels, b)
        per_method[m.key] = {
            "auroc_float32": ra.auroc,
            "ci_float32": list(ra.ci),
            "auroc_bfloat16": rb.auroc,
            "ci_bfloat16": list(rb.ci),
            "auroc_difference": rb.auroc - ra.auroc,
            "each_inside_the_others_interval": ra.ci[0] <= rb.auroc <= ra.ci[1] and rb.ci[0] <= ra.auroc <= rb.ci[1],
            "max_abs_score_difference": float(np.max(np.abs(a - b))),
            "score_correlation": float(np.corrcoef(a, b)[0, 1]),
        }
    p99 = float(np.quantile(diffs, 0.99))
    aurocs_agree = all(v["each_inside_the_others_interval"] for v in per_method.values())
    result = {
        "benchmark": "dtype",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {**info, "load_average_at_end": os.getloadavg()[0]},
        "model": args.model,
        "passages": len(texts),
        "tokens": n_tokens,
        "matmul_peak_flops": matmul,
        "seconds": seconds,
        "tokens_per_s": {d: {k: n_tokens / v for k, v in s.items()} for d, s in seconds.items()},
        "logprob_abs_difference": {
            "mean": float(diffs.mean()),
            "p50": float(np.median(diffs)),
            "p99": p99,
            "max": float(diffs.max()),
        },
        "methods": per_method,
        "summary": {
            "cpu_bfloat16": info["cpu_bfloat16"]["bfloat16"],  # type: ignore[index]
            "speedup_bf16_forward": seconds["float32"]["forward"] / seconds["bfloat16"]["forward"],
            "speedup_bf16_scoring": seconds["float32"]["scoring"] / seconds["bfloat16"]["scoring"],
            "matmul_speedup_bf16": matmul["bfloat16"] / matmul["float32"],
            "logprob_p99_abs_difference": p99,
            "logprob_tolerance": LOGPROB_TOLERANCE,
            "aurocs_agree_within_intervals": aurocs_agree,
            "max_abs_auroc_difference": max(abs(v["auroc_difference"]) for v in per_method.values()),
            "recommend_bf16_default": aurocs_agree and p99 <= LOGPROB_TOLERANCE,
        },
    }
    write_result(args.out, "dtype", result)
    return 0


if __name__ == "__main__":
    torch.set_grad_enabled(False)
    raise SystemExit(main())
