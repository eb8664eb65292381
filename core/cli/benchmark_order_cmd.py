"""``python -m core order-test``: does the model prefer a benchmark's published order of examples to shuffles?"""

from __future__ import annotations

import argparse
import sys

from core.benchmark_order.settings import DEFAULT_PERMUTATIONS, DEFAULT_SHARDS, SUGGESTED_EXAMPLES_PER_SHARD
from core.cli.common import (
    command_provenance,
    dataset_options,
    emit_json,
    limit_options,
    model_options,
    open_store,
    output_options,
    print_finding,
    require_positive,
    store_options,
    tested_model,
)
from core.errors import InputTextError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "order-test",
        parents=[
            model_options(),
            dataset_options(
                sample=False,
                help_text="the benchmark file in its published order: demo:NAME, a "
                "CSV / TSV / JSONL / JSON / Parquet file, or a hub dataset id",
            ),
            output_options(),
            store_options(),
        ],
        help="benchmark-order test: does the model prefer the file's own order of examples to shuffles of it?",
        description=(
            "Split the benchmark's examples into shards of consecutive examples; in each shard compare the "
            "log-likelihood of the published order with that of shuffled orders; a one-sided t-test over the "
            "shards' differences gives the p-value (Oren et al., ICLR 2024). A model that never saw the file has "
            "no reason to prefer its order, so it reads weak evidence or more at most 2.5% of the time, provided "
            "the order carries no pattern a model could know without the file (checked: sorted columns, numbered "
            "examples). Shards are stored as they are scored: an interrupted run resumes."
        ),
    )
    test = parser.add_argument_group("test")
    test.add_argument(
        "--text-template",
        help='how one example reads, e.g. "{question} {A} {B} {C} {D} {answer}" (default: every column but a '
        "row id, joined by spaces)",
    )
    test.add_argument(
        "--shards",
        type=int,
        help=f"shards (default: {DEFAULT_SHARDS}, or as many shards of {SUGGESTED_EXAMPLES_PER_SHARD} examples as a "
        "smaller file fills)",
    )
    test.add_argument(
        "--permutations",
        type=int,
        default=DEFAULT_PERMUTATIONS,
        help=f"shuffled orders per shard (default {DEFAULT_PERMUTATIONS}; every order when a shard has fewer)",
    )
    test.add_argument("--seed", type=int, default=0, help="seed of the shuffles (default 0)")
    test.add_argument("--context", type=int, help="tokens per pass over a long shard (default min(2048, model's))")
    test.add_argument("--stride", type=int, help="tokens between windows over a long shard (default context / 2)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.benchmark_order.examples import render_examples
    from core.benchmark_order.run import check_shardable, run_order_test
    from core.benchmark_order.settings import OrderSettings
    from core.benchmark_order.sizing import suggested_shards
    from core.data.tables import load_rows
    from core.engine.progress import tqdm_progress

    if args.shards is not None:
        require_positive(args.shards, "--shards", 2)
    require_positive(args.permutations, "--permutations")
    OrderSettings(permutations=args.permutations, context=args.context, stride=args.stride)  # refused before loading
    table = load_rows(args.dataset, split=args.split, config=args.config, **limit_options(args))
    examples = render_examples(table, args.text_template)
    if not len(examples) and examples.skipped:
        raise InputTextError(f"No example to test: {examples.skipped_summary()}.")
    shards = args.shards or max(2, suggested_shards(len(examples)))
    settings = OrderSettings(
        shards=shards, permutations=args.permutations, seed=args.seed, context=args.context, stride=args.stride
    )
    check_shardable(len(examples), settings)
    info = sys.stderr if args.json else sys.stdout
    print(f"benchmark: {examples.name} · {len(examples)} examples · template {examples.template!r}", file=info)
    if args.shards is None:
        print(
            f"shards: {shards} (the default: {DEFAULT_SHARDS}, or as many shards of {SUGGESTED_EXAMPLES_PER_SHARD} "
            "examples as the file fills; --shards sets another count)",
            file=info,
        )
    if examples.skipped:
        print(f"warning: {examples.skipped_summary()}", file=sys.stderr)
    model = tested_model(args)
    provenance = command_provenance(args, "order-test", models={"model": model})
    with open_store(args) as store, tqdm_progress("order test", unit="shard") as progress:
        test = run_order_test(examples, settings, model=model, store=store, progress=progress, provenance=provenance)
    document = test.to_dict()
    if args.no_store:
        document.pop("run_id")
    document["skipped"] = examples.skipped_summary()
    document["provenance"] = provenance
    emit_json(args, document)
    if not args.json:
        print_finding(test.finding)
        result = test.result
        low, high = result.difference_interval
        print(
            f"p-value {result.p_value:.3g} (one-sided t-test, {len(result.shards)} shards); published order likelier "
            f"in {result.canonical_first} shards (sign test p {result.sign_p_value:.3g}); mean advantage "
            f"{result.mean_difference:+.3f} nats per shard (95% CI {low:+.3f} to {high:+.3f})"
        )
    return 0
