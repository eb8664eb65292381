"""The benchmark-order test on ground truth with the bundled SmolLM2: fine-tuned on a benchmark file in its order.

120 short MMLU-sample questions ("Q: … Answer: …", the file the suite's tiny model trains on) are the benchmark;
the next 120 are one of the same kind that no model here trains on. SmolLM2 is fine-tuned on the file read end
to end (each token once per epoch: 1 epoch = the file seen once), and tested after 1 and after 4 epochs.
Reported from one run, side by side:

- p-value and verdict: the untrained model on the file; the fine-tuned model on the file and on the unseen one;
- false positives: the untrained model on many disjoint benchmarks (how many fall below 0.05);
- speed: one run's time, and the shared-start scoring against scoring every order alone, on the same
  sequences, with the plain forward-pass rate (tokens per second) measured in the same run.

Usage: .venv/bin/python bench/benchmark_order.py [--epochs 1 4] [--permutations 10] [--fpr-benchmarks 20]
Results go to bench/results/order_test-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from core.engine.handle import resolve_model

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
RESULTS = REPO / "bench" / "results"

from scoring import machine, write_result  # noqa: E402

from core.benchmark_order.examples import render_examples  # noqa: E402
from core.benchmark_order.run import OrderTest, run_order_test  # noqa: E402
from core.benchmark_order.scoring import order_logprobs, order_sequence  # noqa: E402
from core.benchmark_order.settings import OrderSettings  # noqa: E402
from core.benchmark_order.shards import shard_bounds, shard_orders  # noqa: E402
from core.data.tables import load_rows  # noqa: E402
from core.engine.generation import sequence_logprobs  # noqa: E402
from core.engine.model_source import encode  # noqa: E402
from core.engine.models import load_model, wrap_model  # noqa: E402
from core.store.results import ResultStore  # noqa: E402
from tests.helpers.fine_tune import fine_tune  # noqa: E402
from tests.helpers.order_benchmark import (  # noqa: E402
    BENCHMARK_ROWS,
    SHARDS,
    TEMPLATE,
    short_questions,
    training_pieces,
    write_benchmark,
)


def run_test(lm, path: Path, settings: OrderSettings, store: ResultStore) -> tuple[OrderTest, float]:
    examples = render_examples(load_rows(str(path)), TEMPLATE)
    started = time.perf_counter()
    test = run_order_test(
        examples, settings, model=resolve_model(lm.spec, loader=lambda _: lm), store=store, batch_size=settings.shards
    )
    return test, time.perf_counter() - started


def summary(test: OrderTest, seconds: float) -> dict[str, object]:
    r = test.result
    return {
        "p_value": r.p_value,
        "level": test.finding.level,
        "shards_favouring_published_order": r.canonical_first,
        "n_shards": len(r.shards),
        "mean_difference_nats": r.mean_difference,
        "seconds": round(seconds, 1),
    }


def speed(lm, path: Path, settings: OrderSettings, shards: int, repeats: int = 2) -> dict[str, float]:
    """On the first ``shards`` shards' sequences: the test's scoring (shared starts), every order as its own
    sequence in padded batches (the path without sharing), and one sequence at a time with nothing shared (the
    forward-pass rate). A warm-up pass first; each timing is the best of ``repeats``, taken in turn."""
    examples = render_examples(load_rows(str(path)), TEMPLATE)
    ids = [encode(lm, t) for t in examples.texts]
    bounds = shard_bounds(len(ids), settings.shards)[:shards]
    context, stride = settings.window(lm.max_context)
    plans = []
    for index, (start, stop) in enumerate(bounds):
        drawn = shard_orders(stop - start, settings.permutations, settings.seed, index)
        plans.append((ids[start:stop], [tuple(range(stop - start)), *drawn.shuffled]))
    sequences = [order_sequence(lm.start_token_id, m, o) for m, orders in plans for o in orders]
    paths = {
        "shared_start": lambda: [order_logprobs(lm, m, o, context=context, stride=stride) for m, o in plans],
        "batched": lambda: sequence_logprobs(lm, sequences),
        "one_by_one": lambda: [sequence_logprobs(lm, [seq]) for seq in sequences],
    }
    paths["shared_start"]()  # warm-up
    best = {name: float("inf") for name in paths}
    for _ in range(repeats):
        for name, run in paths.items():
            started = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - started)
    tokens = sum(len(s) for s in sequences)
    return {
        "tokens": tokens,
        **{f"{name}_seconds": round(seconds, 2) for name, seconds in best.items()},
        "shared_start_vs_batched": round(best["batched"] / best["shared_start"], 2),
        "shared_start_vs_one_by_one": round(best["one_by_one"] / best["shared_start"], 2),
        "forward_tokens_per_second": round(tokens / best["one_by_one"], 1),
        "shared_start_tokens_per_second": round(tokens / best["shared_start"], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--epochs", type=int, nargs="+", default=[1, 4], help="test after these many epochs")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--permutations", type=int, default=10)
    parser.add_argument("--fpr-benchmarks", type=int, default=20)
    parser.add_argument("--speed-only", action="store_true", help="only the speed comparison (3 repeats)")
    args = parser.parse_args()
    info = machine()
    rows = short_questions()
    folder = Path(tempfile.mkdtemp())
    trained = write_benchmark(folder / "trained.jsonl", rows[:BENCHMARK_ROWS])
    unseen = write_benchmark(folder / "unseen.jsonl", rows[BENCHMARK_ROWS : 2 * BENCHMARK_ROWS])
    settings = OrderSettings(shards=SHARDS, permutations=args.permutations)
    store = ResultStore(folder / "results.sqlite")
    base = load_model(args.model)
    report: dict[str, object] = {"machine": info, "model": args.model, "settings": vars(args), "rows": BENCHMARK_ROWS}
    report["speed"] = speed(base, trained, OrderSettings(shards=SHARDS), shards=3, repeats=3 if args.speed_only else 2)
    print("speed", report["speed"], flush=True)  # every order of 4 examples
    if args.speed_only:
        write_result(RESULTS, "order_test_speed", report)
        return
    test, seconds = run_test(base, trained, settings, store)
    report["untrained_on_file"] = summary(test, seconds)
    print("untrained on the file", report["untrained_on_file"], flush=True)
    fpr_settings = OrderSettings(shards=10, permutations=args.permutations)
    if 30 * args.fpr_benchmarks > len(rows):
        raise SystemExit(f"only {len(rows) // 30} disjoint benchmarks of 30 short questions exist")
    p_values = []
    started = time.perf_counter()
    for b in range(args.fpr_benchmarks):
        chunk = rows[30 * b : 30 * (b + 1)]  # the untrained model saw none of them
        path = write_benchmark(folder / f"fpr{b}.jsonl", chunk)
        p_values.append(run_test(base, path, fpr_settings, store)[0].result.p_value)
    report["false_positives"] = {
        "benchmarks": args.fpr_benchmarks,
        "below_0.05": sum(p < 0.05 for p in p_values),
        "p_values": p_values,
        "seconds_per_benchmark": round((time.perf_counter() - started) / args.fpr_benchmarks, 1),
    }
    print("false positives", report["false_positives"], flush=True)
    pieces = training_pieces([json.loads(line) for line in trained.read_text().splitlines()], overlap=False)
    tuned_model = load_model(args.model).model
    done = 0
    for epochs in sorted(args.epochs):
        started = time.perf_counter()
        fine_tune(
            tuned_model,
            base.tokenizer,
            base.start_token_id,
            pieces,
            steps=epochs - done,
            lr=args.lr,
            batch_size=args.batch_size,
        )
        done = epochs
        tuned = wrap_model(
            tuned_model, base.tokenizer, spec=f"{args.model} tuned {epochs}x", start_token_id=base.start_token_id
        )
        on_file = run_test(tuned, trained, settings, store)
        on_unseen = run_test(tuned, unseen, settings, store)
        report[f"tuned_{epochs}x"] = {
            "fine_tune_seconds": round(time.perf_counter() - started - on_file[1] - on_unseen[1], 1),
            "on_file": summary(*on_file),
            "on_unseen": summary(*on_unseen),
        }
        print(f"tuned {epochs}x", report[f"tuned_{epochs}x"], flush=True)
    write_result(RESULTS, "order_test", report)


if __name__ == "__main__":
    main()
