"""``python -m core mia``: a membership benchmark run, headless, resumable, into the shared results store."""

from __future__ import annotations

import argparse
import sys

from core.cli.common import (
    add_column,
    dataset_options,
    emit_json,
    limit_options,
    model_options,
    open_store,
    output_options,
    print_finding,
    recorded_options,
    require_positive,
    store_options,
    tested_model,
)
from core.errors import LeakLensError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "mia",
        parents=[model_options(), dataset_options(), output_options(), store_options()],
        help="membership benchmark: AUROC of every detector on a labelled dataset",
        description=(
            "Score a labelled dataset (1 = member, 0 = non-member) with every detector and report AUROC with a "
            "95% bootstrap CI and TPR at 1% / 5% FPR, next to a model-free blind baseline and an ensemble. "
            "Results go to the shared results store: an interrupted run resumes, a finished one is not recomputed."
        ),
    )
    columns = parser.add_argument_group("columns")
    add_column(columns, "text", "text column (auto-detected for WikiMIA, DE-COP and common names)")
    add_column(columns, "label", "0/1 label column (auto-detected for known formats)")
    parser.add_argument(
        "--methods",
        nargs="*",
        help="method specs (default: the standard set), e.g. loss min_k:k=10 slope:kgram=1,adjust=mean recall",
    )
    parser.add_argument("--reference-model", help="add the reference-model detector with this model spec")
    parser.add_argument("--max-tokens", type=int, help="score at most this many tokens per text")
    parser.add_argument("--batch-size", type=int, default=16, help="texts per stored batch (default 16)")
    parser.set_defaults(func=run, distributed=True)  # torchrun shares its batches (docs/scaling.md)


def run(args: argparse.Namespace) -> int:
    from core.data.labelled import load_labelled_dataset
    from core.engine.progress import tqdm_progress
    from core.membership.benchmark import run_membership_benchmark
    from core.membership.finding import membership_finding
    from core.methods import parse_methods

    if args.limit is not None and args.limit < 2:
        raise LeakLensError(f"--limit must be at least 2 (one member and one non-member), got {args.limit}.")
    require_positive(args.max_tokens, "--max-tokens")
    require_positive(args.batch_size, "--batch-size")
    dataset = load_labelled_dataset(
        args.dataset,
        split=args.split,
        config=args.config,
        text_col=args.text_col,
        label_col=args.label_col,
        seed=args.seed,
        sample=args.sample,
        **limit_options(args),
    )
    info = sys.stderr if args.json else sys.stdout  # --json keeps stdout for the document alone
    print(
        f"dataset: {dataset.describe()} · text column {dataset.text_col!r}, label column {dataset.label_col!r}",
        file=info,
    )
    if dataset.skipped:
        print(f"skipped: {dataset.skipped_summary()}", file=info)
    methods = parse_methods(args.methods)
    model = tested_model(args)
    with open_store(args) as store, tqdm_progress(f"scoring with {model.spec}", unit="text") as progress:
        result = run_membership_benchmark(
            dataset,
            model,
            methods,
            store=store,
            batch_size=args.batch_size,
            reference_model=args.reference_model,
            max_tokens=args.max_tokens,
            progress=progress,
            options=recorded_options(args),
        )
        store_path = "none (--no-store)" if args.no_store else str(store.path)
    origin = "from the store" if result.from_store else f"{result.n_computed} texts scored"
    finding = membership_finding(result)
    if not args.json:
        print(
            f"model: {result.model} · run {result.run_id} · {origin} in {result.elapsed_s:.1f} s · store {store_path}"
        )
        if result.n_cut_at_max_tokens:
            print(
                f"note: {result.n_cut_at_max_tokens} texts were longer than --max-tokens {args.max_tokens} and "
                f"were scored on their first {args.max_tokens} tokens"
            )
        if result.n_truncated > result.n_cut_at_max_tokens:
            print(
                f"note: {result.n_truncated - result.n_cut_at_max_tokens} texts were longer than the model's "
                "context and were scored on their first tokens"
            )
        print()
        print_finding(finding)
        print(format_table(result.table_rows()))
        for note in result.notes:
            print(f"note: {note}")
    document = {"finding": finding.to_dict(), **result.to_json()}
    document["run_id"] = result.run_id
    document["provenance"] = result.provenance
    emit_json(args, document)
    if args.out and not args.json:
        print(f"\nwrote {args.out}")
    return 0


def format_table(rows: list[dict]) -> str:
    """Plain-text AUROC table: method, AUROC, 95% CI, TPR@1%FPR, TPR@5%FPR; baseline and ensemble last."""
    width = max(len("method"), *(len(r["method"]) for r in rows))
    header = f"{'method':<{width}}  {'AUROC':>6}  {'95% CI':>15}  {'TPR@1%FPR':>9}  {'TPR@5%FPR':>9}"
    lines = [header, "-" * len(header)]
    for row in rows:
        if row["method"] == "blind_baseline":
            lines.append("-" * len(header))
        if row["auroc"] is None:
            lines.append(f"{row['method']:<{width}}  {'n/a':>6}")
            continue
        ci = f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
        lines.append(
            f"{row['method']:<{width}}  {row['auroc']:>6.3f}  {ci:>15}  "
            f"{row['tpr_at_1_fpr']:>9.3f}  {row['tpr_at_5_fpr']:>9.3f}"
        )
    return "\n".join(lines)
