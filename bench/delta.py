"""Loss-delta solution losses: the cheap pass vs the full scoring pass vs the plain forward pass, in one run.

HumanEval (164 problems) against the built-in reference set (52), the losses of every solution measured
side by side in one process, alternating which path goes first:

- previous: the full scoring pass (``solution_losses_full_pass``: every token's μ, σ, entropy and rank over
  the whole vocabulary, then the solution's log-probs);
- cheap: ``solution_losses`` (logits only at the solution's positions, one gather and one log-sum-exp each);
- forward: the plain model call on the same texts and batches (``bench/scoring.py``'s ``bare_forward``: logits
  at every position, nothing computed from them), the rate the cheap pass is measured against.

    .venv/bin/python bench/delta.py [--model smollm2-135m] [--repeats 1] [--quick] [--out DIR]

``--quick`` is a smoke run (4 problems of each set, the tiny random model). Results go to
bench/results/delta-<timestamp>.json; its ``summary`` holds ``fraction_of_forward_rate`` (the cheap pass's
tokens/s over the plain forward pass's, the same tokens) and ``speedup_vs_previous``.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from scoring import bare_forward, machine, timed, write_result  # noqa: E402

from core.data.problems import builtin_problems, humaneval_problems  # noqa: E402
from core.engine.models import load_model  # noqa: E402
from core.loss_delta.delta import delta_stats  # noqa: E402
from core.loss_delta.losses import solution_losses, solution_losses_full_pass  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--repeats", type=int, default=1, help="side-by-side rounds, alternating the order")
    parser.add_argument("--quick", action="store_true", help="smoke run: 4 problems per set, tiny random model")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)
    limit = 4 if args.quick else None
    if args.quick:
        args.model, args.repeats = "tiny-random", 1

    info = machine()
    lm = load_model(args.model)
    test, ref = humaneval_problems(limit=limit).problems, builtin_problems(limit=limit).problems
    problems = list(test) + list(ref)
    texts = [p.prompt + p.solution for p in problems]
    print(f"{len(test)} + {len(ref)} problems, model {lm.describe()}", flush=True)

    solution_losses(lm, problems[:2]), solution_losses_full_pass(lm, problems[:2]), bare_forward(lm, texts[:2])

    paths = [
        ("forward", lambda: bare_forward(lm, texts)),
        ("previous", lambda: solution_losses_full_pass(lm, problems)),
        ("cheap", lambda: solution_losses(lm, problems)),
    ]
    rounds, outputs = [], {}
    for repeat in range(args.repeats):
        seconds = {}
        for name, fn in paths if repeat % 2 == 0 else paths[::-1]:
            outputs[name], seconds[name] = timed(fn)
            print(f"round {repeat + 1}: {name} {seconds[name]:.1f} s", flush=True)
        rounds.append(seconds)
    n_tokens = outputs["forward"]
    cheap, previous = outputs["cheap"], outputs["previous"]
    n_solution = sum(x.n_tokens for x in cheap)
    max_diff = max(abs(a.loss - b.loss) for a, b in zip(cheap, previous))
    same_counts = all(a.n_tokens == b.n_tokens for a, b in zip(cheap, previous))
    best = {name: min(r[name] for r in rounds) for name, _ in paths}

    def delta(losses) -> dict[str, float]:
        stats = delta_stats([x.loss for x in losses[: len(test)]], [x.loss for x in losses[len(test) :]], False)
        return {"l_test": stats.l_test, "l_ref": stats.l_ref, "delta": stats.delta, "ci": list(stats.ci)}

    result = {
        "benchmark": "delta",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {**info, "load_average_at_end": os.getloadavg()[0]},
        "model": lm.describe(),
        "problems": {"test": len(test), "reference": len(ref)},
        "tokens": n_tokens,
        "solution_tokens": n_solution,
        "rounds": rounds,
        "tokens_per_s": {name: n_tokens / best[name] for name, _ in paths},
        "delta_cheap": delta(cheap),
        "delta_previous": delta(previous),
        "summary": {
            "fraction_of_forward_rate": best["forward"] / best["cheap"],
            "fraction_of_forward_rate_per_round": [r["forward"] / r["cheap"] for r in rounds],
            "speedup_vs_previous": best["previous"] / best["cheap"],
            "previous_fraction_of_forward_rate": best["forward"] / best["previous"],
            "max_abs_loss_difference": max_diff,
            "identical_token_counts": same_counts,
            "cheap_seconds": best["cheap"],
            "previous_seconds": best["previous"],
            "forward_seconds": best["forward"],
        },
    }
    write_result(args.out, "delta", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
