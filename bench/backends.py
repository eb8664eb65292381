"""Served vs in-process scoring: the same texts, the same weights, one run, side by side.

The in-process pass (``transformers``) and a served model (vLLM behind its OpenAI-compatible API) score
the same passages. The ratio of their token rates is measured in the same run, next to the bare forward
pass of the in-process model (the matmul-bound part). The run also records how far the per-token log-probs
differ and whether the AUROCs of the detectors both sources compute agree to 1e-3. Start a server first,
e.g. ``python -m vllm.entrypoints.openai.api_server --model <folder> --dtype float32 ...`` (docs/served.md).

    python bench/backends.py --endpoint http://127.0.0.1:8000/v1 [--api-key-env VAR] [--passages 128]
        [--model smollm2-135m] [--concurrency 4]

Results go to bench/results/backends-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.scoring import bare_forward, machine, timed, write_result  # noqa: E402
from core.data.labelled import load_labelled_dataset  # noqa: E402
from core.engine.models import load_model  # noqa: E402
from core.engine.scoring import score_texts  # noqa: E402
from core.engine.served import Endpoint, connect  # noqa: E402
from core.methods import make_method  # noqa: E402
from core.stats.metrics import auroc  # noqa: E402

AUROC_TOLERANCE = 1e-3


def _aurocs(records, labels: list[int]) -> dict[str, float]:
    """AUROC of the detectors that read only what both sources compute in the full pass."""
    methods = [make_method("loss"), make_method("zlib"), make_method("min_k", k=20)]
    return {m.key: auroc(labels, [m.score(r) for r in records]) for m in methods}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--api-key-env")
    parser.add_argument("--served-model")
    parser.add_argument("--model", default="smollm2-135m", help="the same weights, loaded here")
    parser.add_argument("--dataset", default="demo:famous-vs-fresh")
    parser.add_argument("--passages", type=int, default=128)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)

    dataset = load_labelled_dataset(args.dataset, limit=args.passages)
    texts, labels = list(dataset.texts), [int(x) for x in dataset.labels]
    served = connect(
        Endpoint(args.endpoint, model=args.served_model, api_key_env=args.api_key_env, concurrency=args.concurrency)
    )
    lm = load_model(args.model, dtype="float32")
    score_texts(lm, texts[:2], kgram_max=0)  # warm both up
    score_texts(served, texts[:2], kgram_max=0)

    n_tokens, forward_s = timed(lambda: bare_forward(lm, texts))
    local, local_s = timed(lambda: score_texts(lm, texts, kgram_max=0))
    remote, remote_s = timed(lambda: score_texts(served, texts, kgram_max=0))
    same_tokens = all(a.token_ids.tolist() == b.token_ids.tolist() for a, b in zip(local, remote, strict=True))
    diff = max(float(np.abs(a.logprobs - b.logprobs).max()) for a, b in zip(local, remote, strict=True))
    local_aurocs, remote_aurocs = _aurocs(local, labels), _aurocs(remote, labels)
    identical = all(abs(local_aurocs[k] - remote_aurocs[k]) < AUROC_TOLERANCE for k in local_aurocs)

    rates = {
        "forward_tokens_per_s": n_tokens / forward_s,
        "inprocess_tokens_per_s": n_tokens / local_s,
        "served_tokens_per_s": n_tokens / remote_s,
    }
    result = {
        "benchmark": "backends",
        "machine": machine(),
        "server": {"endpoint": served.base_url, "version": served.server_version, "model_id": served.model_root},
        "passages": len(texts),
        "tokens": n_tokens,
        "seconds": {"forward": forward_s, "inprocess": local_s, "served": remote_s},
        "rates": rates,
        "aurocs": {"inprocess": local_aurocs, "served": remote_aurocs},
        "summary": {
            "served_vs_inprocess": rates["served_tokens_per_s"] / rates["inprocess_tokens_per_s"],
            "served_vs_forward": rates["served_tokens_per_s"] / rates["forward_tokens_per_s"],
            "max_abs_logprob_diff": diff,
            "identical_tokens": same_tokens,
            "identical_aurocs": identical,
            "concurrency": args.concurrency,
            "gpu": None,
        },
    }
    write_result(args.out, "backends", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
