"""Option-order test benchmark: every order scored in full vs the shared question text run once.

For each MMLU sample question, all 24 orders of its options are scored twice, side by side in one
process and alternating which path goes first: with ``sequence_logprobs`` (every order in full) and
with ``sequence_logprobs_shared_prefix`` (the common start once, then only the tails). Reports the
time of each, their ratio, the largest difference in total log-probability, and whether the original
order's rank agrees.

Usage: .venv/bin/python bench/mcq_orders.py [--model smollm2-135m] [--questions 20]
Results go to bench/results/mcq_orders-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from scoring import machine  # noqa: E402

from core.data.questions import PromptLayout, load_mcq  # noqa: E402
from core.engine.generation import sequence_logprobs, sequence_logprobs_shared_prefix, shared_prefix_length  # noqa: E402
from core.engine.models import load_model  # noqa: E402
from core.files.outputs import write_atomic  # noqa: E402
from core.mcq.permutation import QuestionOrders, order_texts  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "mmlu_sample.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--questions", type=int, default=20)
    args = parser.parse_args()
    info = machine()
    lm = load_model(args.model)
    questions = [q for q in load_mcq(str(DATA), limit=args.questions).questions if len(q.options) == 4]
    tok = lm.tokenizer
    timings = {"full": 0.0, "shared_prefix": 0.0}
    max_diff, rank_agree, tokens, shared_tokens = 0.0, 0, 0, 0
    for i, question in enumerate(questions):
        seqs = [
            [lm.start_token_id] + tok(t, add_special_tokens=False)["input_ids"]
            for t in order_texts(question, PromptLayout())
        ]
        tokens += sum(len(s) for s in seqs)
        shared_tokens += shared_prefix_length(seqs) * len(seqs)
        paths = [("full", sequence_logprobs), ("shared_prefix", sequence_logprobs_shared_prefix)]
        results = {}
        for name, fn in paths if i % 2 == 0 else paths[::-1]:
            start = time.perf_counter()
            results[name] = fn(lm, seqs)
            timings[name] += time.perf_counter() - start
        max_diff = max(max_diff, max(abs(a - b) for a, b in zip(results["full"], results["shared_prefix"])))
        ranks = [QuestionOrders(index=question.index, logprobs=tuple(results[n])).rank for n in timings]
        rank_agree += ranks[0] == ranks[1]
        print(
            f"question {i + 1}/{len(questions)}: full {timings['full']:.1f} s, shared {timings['shared_prefix']:.1f} s"
        )
    report = {
        "benchmark": "mcq_orders",
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {**info, "load_average_at_end": os.getloadavg()[0]},
        "model": args.model,
        "questions": len(questions),
        "orders_per_question": 24,
        "tokens_scored": tokens,
        "shared_token_fraction": shared_tokens / tokens,
        "seconds": timings,
        "speedup_shared_vs_full": timings["full"] / timings["shared_prefix"],
        "max_abs_logprob_difference": max_diff,
        "original_rank_agrees": f"{rank_agree}/{len(questions)}",
    }
    out = REPO / "bench" / "results" / f"mcq_orders-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}.json"
    write_atomic(out, json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
