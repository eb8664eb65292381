"""Per-token distribution statistics (μ, σ, rank for Min-K%++): the engine's path against the previous one.

Both paths run on the same vocabulary-sized logit rows in one run, alongside the bundled model's forward pass
over the same number of token positions, so the statistics' share of a scoring pass is a ratio measured under
the same conditions. The previous path (a separate log-sum-exp, subtraction and ``exp``, and an int64 count)
is kept here, as the reference the faster one must equal within float32 rounding.

    python -m bench.distribution_stats [--rows 2048] [--threads 1] [--quick]

Results go to bench/results/distribution_stats-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.scoring import bare_forward, machine, timed, write_result  # noqa: E402
from core.engine.models import load_model  # noqa: E402
from core.engine.scoring import STATS_CHUNK, _distribution_stats  # noqa: E402
from core.passage.calibration import load_fresh_passages  # noqa: E402


def previous_distribution_stats(step_logits: torch.Tensor, targets: torch.Tensor) -> tuple[np.ndarray, ...]:
    """The statistics as the engine computed them before: log-sum-exp, subtraction, ``exp`` and an int64 count."""
    log_p = step_logits - torch.logsumexp(step_logits, dim=-1, keepdim=True)
    target_lp = log_p.gather(1, targets[:, None])
    rank = (log_p > target_lp).sum(-1) + 1
    p = log_p.exp()
    mu = torch.bmm(p[:, None, :], log_p[:, :, None])[:, 0, 0]
    centred_sq = log_p.sub_(mu[:, None]).square_()
    sigma = torch.bmm(p[:, None, :], centred_sq[:, :, None])[:, 0, 0].clamp_min(0).sqrt()
    as_np = lambda t: t.double().cpu().numpy()  # noqa: E731
    return as_np(target_lp[:, 0]), as_np(mu), as_np(sigma), as_np(-mu), rank.cpu().numpy().astype(np.int64)


def _all_rows(stats, logits: torch.Tensor, targets: torch.Tensor) -> list[np.ndarray]:
    parts = [
        stats(logits[lo : lo + STATS_CHUNK].clone(), targets[lo : lo + STATS_CHUNK])
        for lo in range(0, logits.shape[0], STATS_CHUNK)
    ]
    return [np.concatenate(column) for column in zip(*parts)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2048, help="token positions (logit rows) to process")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1: as each test worker runs)")
    parser.add_argument("--quick", action="store_true", help="a few rows, to check the bench runs")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)
    rows = 256 if args.quick else args.rows
    torch.set_num_threads(args.threads)
    lm = load_model("smollm2-135m")
    generator = torch.Generator().manual_seed(0)
    # Logits shaped like a real pass: the model's own on a fresh passage, repeated to the row count.
    ids = lm.tokenizer(load_fresh_passages()[0].text, return_tensors="pt")["input_ids"][:, :64]
    with torch.inference_mode():
        real = lm.model(input_ids=ids).logits[0].float()
    logits = real[torch.randint(0, real.shape[0], (rows,), generator=generator)]
    targets = torch.randint(0, logits.shape[1], (rows,), generator=generator)
    with torch.inference_mode():
        (previous, previous_s) = timed(lambda: _all_rows(previous_distribution_stats, logits, targets))
        (current, current_s) = timed(lambda: _all_rows(_distribution_stats, logits, targets))
        texts = [p.text for p in load_fresh_passages()[: max(4, rows // 100)]]
        (forward_tokens, forward_s) = timed(lambda: bare_forward(lm, texts))
    names = ("target_logprob", "mu", "sigma", "entropy")
    differences = {name: float(np.abs(a - b).max()) for name, a, b in zip(names, previous, current)}
    summary = {
        "rows": rows,
        "vocabulary": int(logits.shape[1]),
        "previous_rows_per_s": round(rows / previous_s, 1),
        "current_rows_per_s": round(rows / current_s, 1),
        "speedup_vs_previous": round(previous_s / current_s, 2),
        "forward_tokens_per_s": round(forward_tokens / forward_s, 1),
        "stats_time_per_forward_time": round((current_s / rows) / (forward_s / forward_tokens), 3),
        "previous_stats_time_per_forward_time": round((previous_s / rows) / (forward_s / forward_tokens), 3),
        "max_abs_difference": differences,
        "identical_ranks": bool((previous[4] == current[4]).all()),
        "rows_with_another_rank": int((previous[4] != current[4]).sum()),
        "largest_rank_difference": int(np.abs(previous[4] - current[4]).max()),
    }
    result = {"machine": machine(), "threads": args.threads, "model": "smollm2-135m", "summary": summary}
    write_result(args.out, "distribution_stats", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
