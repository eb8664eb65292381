"""MCQ memorisation probes: the per-probe path vs one pass per question rendering, side by side in one run.

The first 200 questions of the MMLU sample, both probes (next token and completion) on the original and on
the shuffled options (1,600 probes), measured twice in one process, alternating which path goes first:

- previous: every probe prefills its own prompt (``run_mcq(..., per_probe=True)`` on the original, then on
  the shuffled questions, as the study ran them);
- renderings: ``run_mcq_sets`` on both sets together (one pass per rendering, the question text once per
  question, decoding only where the greedy tokens leave the rendering).

Every probe result (predicted token, continuation, completion, similarity) must be identical. The plain
forward pass over the same renderings (``bench/scoring.py``'s ``bare_forward``) is timed in the same run, so
the renderings path's tokens/s can be set against it.

    .venv/bin/python bench/mcq.py [--questions 200] [--model smollm2-135m] [--quick] [--out DIR]

``--quick`` is a smoke run (3 questions, the tiny random model). Results go to bench/results/mcq-<timestamp>.json;
its ``summary`` holds ``speedup_vs_previous`` and ``identical_results``.
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

from core.data.questions import load_mcq  # noqa: E402
from core.engine.models import load_model  # noqa: E402
from core.mcq.completion import MCQConfig, MCQRun, run_mcq, run_mcq_sets  # noqa: E402
from core.mcq.shuffle import shuffle_questions  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "mmlu_sample.jsonl"
SHUFFLE_SEED = 0


def previous_path(lm, sets, config) -> list[MCQRun]:
    return [run_mcq(lm, questions, config, per_probe=True) for questions in sets]


def renderings_path(lm, sets, config) -> list[MCQRun]:
    return run_mcq_sets(lm, sets, config)


def differing_probes(a: list[MCQRun], b: list[MCQRun]) -> int:
    """Probes whose judged result (every field) differs between two runs of the same sets."""
    return sum(
        pa != pb
        for ra, rb in zip(a, b, strict=True)
        for qa, qb in zip(ra.results, rb.results, strict=True)
        for pa, pb in zip(qa.probes, qb.probes, strict=True)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=1, help="side-by-side rounds, alternating the order")
    parser.add_argument("--quick", action="store_true", help="smoke run: 3 questions, tiny random model")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)
    if args.quick:
        args.model, args.questions, args.repeats = "tiny-random", 3, 1

    info = machine()
    lm = load_model(args.model)
    questions = load_mcq(str(DATA), limit=args.questions).questions
    sets = [questions, shuffle_questions(questions, SHUFFLE_SEED)]
    config = MCQConfig()
    n_probes = sum(len(q.options) for s in sets for q in s)
    texts = [config.layout.render(q)[0] for s in sets for q in s]
    print(f"{len(questions)} questions, {n_probes} probes, model {lm.describe()}", flush=True)

    # Warm-up so one-time costs (allocator, kernels) are billed to neither path.
    warm = [s[:2] for s in sets]
    previous_path(lm, warm, config), renderings_path(lm, warm, config)

    n_tokens, t_forward = timed(lambda: bare_forward(lm, texts))
    print(f"plain forward pass over the renderings: {n_tokens} tokens in {t_forward:.1f} s", flush=True)

    paths = [("previous", previous_path), ("renderings", renderings_path)]
    rounds, differing = [], 0
    for repeat in range(args.repeats):
        seconds, runs = {}, {}
        for name, fn in paths if repeat % 2 == 0 else paths[::-1]:
            runs[name], seconds[name] = timed(lambda fn=fn: fn(lm, sets, config))
            print(f"round {repeat + 1}: {name} {seconds[name]:.1f} s", flush=True)
        differing = max(differing, differing_probes(runs["previous"], runs["renderings"]))
        rounds.append({**seconds, "speedup": seconds["previous"] / seconds["renderings"]})
    original, shuffled = runs["renderings"]
    best = {name: min(r[name] for r in rounds) for name, _ in paths}
    result = {
        "benchmark": "mcq",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {**info, "load_average_at_end": os.getloadavg()[0]},
        "model": lm.describe(),
        "questions": len(questions),
        "probes": n_probes,
        "shuffle_seed": SHUFFLE_SEED,
        "plain_forward": {"tokens": n_tokens, "seconds": t_forward, "tokens_per_s": n_tokens / t_forward},
        "rounds": rounds,
        "scores": {
            "original": original.to_dict(),
            "shuffled": shuffled.to_dict(),
        },
        "summary": {
            "speedup_vs_previous": best["previous"] / best["renderings"],
            "speedup_per_round": [r["speedup"] for r in rounds],
            "identical_results": differing == 0,
            "differing_probes": differing,
            "previous_seconds": best["previous"],
            "renderings_seconds": best["renderings"],
            "renderings_seconds_per_question": best["renderings"] / len(questions),
            "plain_forward_seconds_over_renderings": t_forward,
        },
    }
    write_result(args.out, "mcq", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
