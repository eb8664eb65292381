"""``python -m core mia``: a membership benchmark run, headless, resumable, into the shared results store."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from core.errors import LeakLensError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "mia",
        help="membership benchmark: AUROC of every detector on a labelled dataset",
        description=(
            "Score a labelled dataset (1 = member, 0 = non-member) with every detector and report AUROC with a "
            "95%% bootstrap CI and TPR at 1%% / 5%% FPR, next to a model-free blind baseline and an ensemble. "
            "Results go to the shared results store: an interrupted run resumes, a finished one is not recomputed."
        ),
    )
    parser.add_argument("--dataset", required=True, help="CSV / TSV / JSONL / Parquet file, or a hub dataset id")
    parser.add_argument("--split", help="hub split, e.g. WikiMIA_length128")
    parser.add_argument("--config", help="hub dataset configuration")
    parser.add_argument("--text-col", help="text column (auto-detected for WikiMIA and DE-COP formats)")
    parser.add_argument("--label-col", help="0/1 label column (auto-detected for known formats)")
    parser.add_argument("--model", default="smollm2-135m", help="bundled name, local directory or hub id")
    parser.add_argument(
        "--methods",
        nargs="*",
        help="method specs (default: the standard set), e.g. loss min_k:k=10 slope:kgram=1,adjust=mean recall",
    )
    parser.add_argument("--limit", type=int, help="score a seeded, class-balanced sample of this many rows")
    parser.add_argument("--seed", type=int, default=0, help="seed of the --limit sample (default 0)")
    parser.add_argument("--reference-model", help="add the reference-model detector with this model spec")
    parser.add_argument("--max-tokens", type=int, help="score at most this many tokens per text")
    parser.add_argument("--batch-size", type=int, default=16, help="texts per stored batch (default 16)")
    parser.add_argument("--out", help="write results (metrics and per-sample scores) to this JSON file")
    parser.add_argument("--store", help="results store file (default: $LEAKLENS_STORE or <cache>/results.sqlite)")
    parser.add_argument("--trust-remote-code", action="store_true", help="allow custom model code from the hub")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.membership.benchmark import run_membership_benchmark
    from core.data.labelled import load_labelled_dataset
    from core.methods import parse_methods
    from core.engine.models import load_model
    from core.engine.progress import tqdm_progress
    from core.store.results import ResultStore

    if args.limit is not None and args.limit < 2:
        raise LeakLensError(f"--limit must be at least 2 (one member and one non-member), got {args.limit}.")
    dataset = load_labelled_dataset(
        args.dataset,
        split=args.split,
        config=args.config,
        text_col=args.text_col,
        label_col=args.label_col,
        limit=args.limit,
        seed=args.seed,
    )
    print(f"dataset: {dataset.describe()} · text column {dataset.text_col!r}, label column {dataset.label_col!r}")
    if dataset.skipped:
        print(f"skipped: {dataset.skipped_summary()}")
    methods = parse_methods(args.methods)
    store = ResultStore(args.store) if args.store else ResultStore()

    def loader(spec: str):
        return load_model(spec, trust_remote_code=args.trust_remote_code)

    with tqdm_progress(f"scoring with {args.model}", unit="text") as progress:
        result = run_membership_benchmark(
            dataset,
            args.model,
            methods,
            store=store,
            batch_size=args.batch_size,
            reference_model=args.reference_model,
            max_tokens=args.max_tokens,
            progress=progress,
            load_model=loader,
        )
    origin = "from the store" if result.from_store else f"{result.n_computed} texts scored"
    print(f"model: {result.model} · run {result.run_id} · {origin} in {result.elapsed_s:.1f} s · store {store.path}")
    if result.n_truncated:
        print(f"note: {result.n_truncated} texts were longer than the context and were scored on their first tokens")
    print()
    print(format_table(result.table_rows()))
    for note in result.notes:
        print(f"note: {note}")
    if args.out:
        _write_json(Path(args.out), result.to_json())
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


def _write_json(path: Path, document: dict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise LeakLensError(f"Could not write {path}: {exc.strerror}.") from exc
