"""``python -m core dataset-inference``: did the model train on this set of texts? A p-value, headless."""

from __future__ import annotations

import argparse
import sys

from core.cli.common import (
    add_column,
    command_provenance,
    emit_json,
    model_options,
    open_store,
    output_options,
    print_finding,
    recorded_options,
    require_positive,
    store_options,
    tested_model,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "dataset-inference",
        parents=[model_options(), output_options(), store_options()],
        help="dataset inference: a p-value for 'the model trained on this set of texts'",
        description=(
            "Compare a suspect set (texts claimed to be used in training) with a validation set (same "
            "distribution, known unused): every text is scored with every detector, a linear combination learnt "
            "on half of each set is tested on the other half (one-sided Welch t-test), over several random "
            "splits combined as twice the median p-value. A model-free blind baseline checks that the two sets "
            "do not differ in wording. Scores are kept in the shared results store."
        ),
    )
    data = parser.add_argument_group("data")
    source_help = "demo:NAME, a CSV / TSV / JSONL / JSON / Parquet file, or a hub dataset id"
    data.add_argument("--suspect", required=True, help=f"texts claimed to be used in training: {source_help}")
    data.add_argument(
        "--validation", required=True, help=f"texts from the same distribution, known never used: {source_help}"
    )
    data.add_argument(
        "--suspect-where",
        metavar="COLUMN=VALUE",
        help="keep only the suspect rows whose COLUMN equals VALUE (e.g. split=train, label=1)",
    )
    data.add_argument(
        "--validation-where", metavar="COLUMN=VALUE", help="keep only the validation rows whose COLUMN equals VALUE"
    )
    data.add_argument("--split", help="split of a hub dataset (both sets)")
    data.add_argument("--config", help="configuration of a hub dataset (both sets)")
    data.add_argument("--limit", type=int, help="use the first N usable texts of each set")
    add_column(data, "text", "text column of both sets (auto-detected for common names)")
    test = parser.add_argument_group("test")
    test.add_argument(
        "--methods",
        nargs="*",
        help="detectors whose scores are combined (default: loss zlib min_k_20 min_k_pp_20, one model "
        "pass per text; name more, e.g. the slopes, for a slower, fuller test)",
    )
    test.add_argument("--splits", type=int, default=10, help="random half/half splits (default 10)")
    test.add_argument("--seed", type=int, default=0, help="seed of the splits (default 0)")
    test.add_argument("--max-tokens", type=int, help="score at most this many tokens per text")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.data.tables import check_hub_options
    from core.data.text_sets import load_text_set, parse_where
    from core.dataset_inference.run import QUICK_METHOD_KEYS, run_dataset_inference
    from core.engine.progress import tqdm_progress
    from core.methods import parse_methods

    require_positive(args.limit, "--limit")
    require_positive(args.splits, "--splits")
    require_positive(args.max_tokens, "--max-tokens")
    check_hub_options([args.suspect, args.validation], split=args.split, config=args.config)
    common = {"text_col": args.text_col, "split": args.split, "config": args.config, "limit": args.limit}
    suspect = load_text_set(args.suspect, where=parse_where(args.suspect_where), **common)
    validation = load_text_set(args.validation, where=parse_where(args.validation_where), **common)
    methods = parse_methods(args.methods or list(QUICK_METHOD_KEYS))
    info = sys.stderr if args.json else sys.stdout  # --json keeps stdout for the document alone
    for text_set, role in ((suspect, "suspect"), (validation, "validation")):
        print(f"{role}: {text_set.name} · {len(text_set)} texts · text column {text_set.text_col!r}", file=info)
        if text_set.skipped:
            print(f"  skipped: {text_set.skipped_summary()}", file=info)
    model = tested_model(args)
    with open_store(args) as store, tqdm_progress(f"scoring with {model.spec}", unit="text") as progress:
        inference = run_dataset_inference(
            suspect,
            validation,
            model,
            methods,
            n_splits=args.splits,
            seed=args.seed,
            store=store,
            progress=progress,
            options=recorded_options(args),
            max_tokens=args.max_tokens,
        )
    document = inference.to_dict()
    document["provenance"] = command_provenance(args, "dataset-inference", models={"model": model})
    emit_json(args, document)
    if not args.json:
        print_finding(inference.finding)
        _print_details(inference)
        for note in inference.scores.left_out:
            print(f"note: {note}")
    return 0


def _print_details(inference) -> None:
    result = inference.result
    print(
        f"p-value {result.p_value:.3g} (twice the median of {len(result.split_p_values)} splits; "
        f"split p-values {', '.join(f'{p:.2g}' for p in result.split_p_values)})"
    )
    print(f"effect on held-out texts: Cohen's d {result.effect_size:+.2f}")
    print(
        "weights (standardised; positive = higher in the suspect set): "
        + ", ".join(f"{name} {weight:+.2f}" for name, weight in result.top_features(len(result.weights)))
    )
