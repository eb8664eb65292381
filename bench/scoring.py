"""Scoring-engine benchmark: the batched engine vs the naive flow of the original research scripts.

Both flows score the same WikiMIA passages with every default detector in one run, so their ratio is
measured under the same conditions. The naive flow runs one forward pass per passage per method and,
for k-gram normalisation, one forward pass per token; it is slow, so it runs on a subset (its rate in
tokens/s is what is compared). The engine's forward-pass FLOP/s is compared with the torch matmul
FLOP/s measured in the same run.

    python bench/scoring.py [--passages 250] [--naive-passages 4] [--model smollm2-135m]

Results go to bench/results/scoring-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core.data.tables import load_rows  # noqa: E402
from core.engine.batching import length_batches  # noqa: E402
from core.engine.models import LoadedModel, load_model  # noqa: E402
from core.engine.scoring import DEFAULT_TOKEN_BUDGET, TokenRecords, encode_texts, score_texts  # noqa: E402
from core.files.outputs import write_atomic  # noqa: E402
from core.methods import Method, default_methods  # noqa: E402
from core.methods.analysis import analyse_passages  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "wikimia_length128.parquet"
MATMUL_SHAPES = [(2048, 576, 1536), (2048, 1536, 576), (2048, 576, 576), (1024, 576, 49152)]
QUICK_MATMUL_SHAPES = [(64, 576, 576)]
"""A smoke run's matmul: seconds even where bfloat16 is emulated (the model-sized shapes take minutes there)."""


def machine() -> dict[str, object]:
    """The machine a benchmark ran on, bfloat16 support included (a bfloat16 timing means nothing without it)."""
    from core.engine.bfloat16 import bfloat16_support, cpu_name

    return {
        "cpu": cpu_name(),
        "cpu_bfloat16": bfloat16_support(),
        "logical_cpus": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "load_average_at_start": os.getloadavg()[0],
        # OpenMP threads that sleep between parallel regions (PASSIVE) slow the many small steps of decoding
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
    }


def matmul_flops(
    device: torch.device, dtype: torch.dtype, shapes: list[tuple[int, int, int]] = MATMUL_SHAPES
) -> dict[str, float]:
    """FLOP/s of plain matmuls shaped like the model's layers (best of several repeats)."""
    results = {}
    for m, k, n in shapes:
        a = torch.randn(m, k, device=device, dtype=dtype)
        b = torch.randn(k, n, device=device, dtype=dtype)
        for _ in range(2):
            a @ b
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            a @ b
            if device.type == "cuda":
                torch.cuda.synchronize()
            best = min(best, time.perf_counter() - start)
        results[f"{m}x{k}x{n}"] = 2 * m * k * n / best
    return results


# ----------------------------------------------------------------------------- the naive flow
def _naive_forward(lm: LoadedModel, ids: list[int]) -> torch.Tensor:
    with torch.inference_mode():
        logits = lm.model(input_ids=torch.tensor([ids], device=lm.device), use_cache=False).logits[0]
    return torch.log_softmax(logits.float(), dim=-1)


def naive_records(lm: LoadedModel, text: str, kgram: int) -> TokenRecords:
    """Records for one method the way the research scripts build them: a fresh pass, k-gram per token."""
    ids = list(lm.tokenizer(text, add_special_tokens=False)["input_ids"])
    log_p = _naive_forward(lm, [lm.start_token_id] + ids)[:-1]
    target = log_p[torch.arange(len(ids)), torch.tensor(ids)]
    p = log_p.exp()
    mu = (p * log_p).sum(-1)
    sigma = (p * (log_p - mu[:, None]) ** 2).sum(-1).sqrt()
    kgram_rows = None
    if kgram:
        kgram_rows = np.full((kgram, len(ids)), np.nan)
        for i, token in enumerate(ids):
            context = [lm.start_token_id] + ids[max(0, i - kgram + 1) : i]
            kgram_rows[kgram - 1, i] = float(_naive_forward(lm, context)[-1, token])
    as_np = lambda t: t.double().cpu().numpy()  # noqa: E731
    return TokenRecords(
        text=text,
        token_ids=np.asarray(ids),
        offsets=np.zeros((len(ids), 2), dtype=np.int64),
        logprobs=as_np(target),
        mean_logprob=as_np(mu),
        std_logprob=as_np(sigma),
        entropy=as_np(-mu),
        rank=np.ones(len(ids), dtype=np.int64),
        kgram_logprobs=kgram_rows,
    )


def naive_scores(lm: LoadedModel, texts: list[str], methods: list[Method]) -> list[dict[str, float]]:
    return [{m.key: m.score(naive_records(lm, text, m.kgram_needed)) for m in methods} for text in texts]


@torch.inference_mode()
def bare_forward(lm: LoadedModel, texts: list[str]) -> int:
    """The model call alone on the engine's own padded batches (no statistics): the matmul-bound part."""
    encoded = encode_texts(lm, texts)
    for batch in length_batches([len(e.context) + len(e.ids) for e in encoded], DEFAULT_TOKEN_BUDGET):
        sequences = [encoded[i].context + encoded[i].ids for i in batch]
        width = max(len(s) for s in sequences)
        ids = torch.full((len(batch), width), lm.pad_token_id, dtype=torch.long)
        attention = torch.zeros((len(batch), width), dtype=torch.long)
        for row, seq in enumerate(sequences):
            ids[row, : len(seq)] = torch.tensor(seq)
            attention[row, : len(seq)] = 1
        lm.model(input_ids=ids.to(lm.device), attention_mask=attention.to(lm.device), use_cache=False)
    return sum(len(e.ids) for e in encoded)


# ----------------------------------------------------------------------------- measurement
def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def write_result(out_dir: Path, name: str, result: dict) -> Path:
    """``<out_dir>/<name>-<UTC timestamp>.json``, the layout every benchmark writes; prints its summary."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    write_atomic(path, json.dumps(result, indent=2) + "\n")
    print(json.dumps(result.get("summary", {}), indent=2))
    print(f"written to {path}")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--passages", type=int, default=250, help="passages for the engine runs")
    parser.add_argument("--naive-passages", type=int, default=4, help="passages for the naive flow (slow)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)

    info = machine()
    lm = load_model(args.model)
    texts = [row["input"] for row in load_rows(str(DATA)).rows][: args.passages]
    methods = default_methods()
    flops_per_token = 2 * lm.n_parameters
    print(f"{len(texts)} passages, {len(methods)} detectors, model {lm.describe()}", flush=True)

    matmul = matmul_flops(lm.device, lm.dtype)
    peak = max(matmul.values())
    print(f"matmul: {', '.join(f'{k} {v / 1e9:.0f} GFLOP/s' for k, v in matmul.items())}", flush=True)

    # Warm-up so one-time costs (allocator, kernels) are not billed to either flow.
    analyse_passages(lm, texts[:2], methods)

    forward, t_forward = timed(lambda: score_texts(lm, texts, kgram_max=0))
    n_tokens = sum(r.n_tokens for r in forward)
    forward_flops = flops_per_token * n_tokens / t_forward
    print(f"engine forward pass: {n_tokens} tokens in {t_forward:.1f} s", flush=True)

    bare_tokens, t_bare = timed(lambda: bare_forward(lm, texts))
    bare_flops = flops_per_token * bare_tokens / t_bare
    print(f"bare model forward: {bare_tokens} tokens in {t_bare:.1f} s", flush=True)

    full, t_full = timed(lambda: analyse_passages(lm, texts, methods))
    print(f"engine, all detectors: {t_full:.1f} s", flush=True)

    subset = texts[: args.naive_passages]
    sub_engine, t_sub_engine = timed(lambda: analyse_passages(lm, subset, methods))
    sub_naive, t_sub_naive = timed(lambda: naive_scores(lm, subset, methods))
    sub_tokens = sum(a.records.n_tokens for a in sub_engine)
    max_diff = max(abs(a.scores[k] - b[k]) for a, b in zip(sub_engine, sub_naive) for k in b)
    print(f"subset of {len(subset)}: engine {t_sub_engine:.1f} s, naive {t_sub_naive:.1f} s", flush=True)

    engine_rate = n_tokens / t_full
    naive_rate = sub_tokens / t_sub_naive
    result = {
        "benchmark": "scoring",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": info,
        "model": lm.describe(),
        "n_parameters": lm.n_parameters,
        "detectors": [m.key for m in methods],
        "matmul_flops": matmul,
        "matmul_peak_flops": peak,
        "engine_forward": {
            "passages": len(texts),
            "tokens": n_tokens,
            "seconds": t_forward,
            "tokens_per_s": n_tokens / t_forward,
            "flops": forward_flops,
            "fraction_of_matmul_peak": forward_flops / peak,
        },
        "model_forward_on_engine_batches": {
            "tokens": bare_tokens,
            "seconds": t_bare,
            "tokens_per_s": bare_tokens / t_bare,
            "flops": bare_flops,
            "fraction_of_matmul_peak": bare_flops / peak,
        },
        "engine_all_detectors": {
            "passages": len(texts),
            "tokens": n_tokens,
            "seconds": t_full,
            "tokens_per_s": engine_rate,
        },
        "side_by_side_subset": {
            "passages": len(subset),
            "tokens": sub_tokens,
            "engine_seconds": t_sub_engine,
            "naive_seconds": t_sub_naive,
            "speedup": t_sub_naive / t_sub_engine,
            "max_abs_score_difference": max_diff,
        },
        "naive_tokens_per_s": naive_rate,
        "speedup_all_passages_vs_naive": engine_rate / naive_rate,
        "load_average_at_end": os.getloadavg()[0],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"scoring-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    write_atomic(path, json.dumps(result, indent=2) + "\n")
    shown = (
        "engine_forward",
        "model_forward_on_engine_batches",
        "side_by_side_subset",
        "speedup_all_passages_vs_naive",
    )
    print(json.dumps({k: result[k] for k in shown}, indent=2))
    print(f"written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
