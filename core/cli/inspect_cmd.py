"""``python -m core inspect``: per-token records and every detector's score for one passage."""

from __future__ import annotations

import argparse
import sys
import warnings

from core.cli.common import command_provenance, emit_json, load_model_from_args, model_options, output_options
from core.errors import InputTextError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "inspect",
        parents=[model_options(), output_options()],
        help="score one passage: per-token log-probs and every detector",
        description="Score one passage with a model: per-token records and every detector's score.",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--text", help="the passage")
    source.add_argument("--file", help="read the passage from this UTF-8 text file ('-' = stdin)")
    parser.add_argument(
        "--methods",
        nargs="*",
        help="method specs (default: the standard set), e.g. loss min_k:k=10 slope:kgram=1,adjust=mean",
    )
    parser.add_argument("--max-tokens", type=int, help="score at most this many tokens")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.membership.analysis import analyse_passages
    from core.methods import parse_methods

    text = _read_text(args)
    methods = parse_methods(args.methods)
    lm = load_model_from_args(args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (analysis,) = analyse_passages(lm, [text], methods, max_tokens=args.max_tokens)
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    labels = {m.key: m.label for m in methods}
    payload = {
        "model": lm.spec,
        "device": lm.device.type,
        "n_tokens": analysis.records.n_tokens,
        "n_dropped": analysis.records.n_dropped,
        "perplexity": analysis.perplexity,
        "tokens": analysis.records.table(),
        "scores": analysis.scores,
        "provenance": command_provenance(args, "inspect", models={"model": args.model}),
    }
    emit_json(args, payload)
    if not args.json:
        _print_table(analysis, labels, lm.describe())
    return 0


def _read_text(args: argparse.Namespace) -> str:
    if args.text is not None:
        return args.text
    try:
        if args.file == "-":
            return sys.stdin.read()
        with open(args.file, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise InputTextError(f"Could not read {args.file}: {exc.strerror}.") from exc
    except UnicodeDecodeError as exc:
        raise InputTextError(f"{args.file} is not UTF-8 text.") from exc


def _print_table(analysis, labels: dict[str, str], model_line: str) -> None:
    rec = analysis.records
    print(f"model: {model_line}")
    print(f"tokens scored: {rec.n_tokens}" + (f" ({rec.n_dropped} dropped)" if rec.n_dropped else ""))
    print(f"perplexity: {analysis.perplexity:.2f}\n")
    print(f"{'#':>4}  {'token':<20} {'logprob':>9} {'prob':>7} {'rank':>6}")
    for row in rec.table():
        token = repr(row["token"])[1:-1][:20]
        print(f"{row['position']:>4}  {token:<20} {row['logprob']:>9.3f} {row['prob']:>7.3f} {row['rank']:>6}")
    print("\nscores (higher = more likely seen in training):")
    width = max(len(label) for label in labels.values())
    for key, value in analysis.scores.items():
        print(f"  {labels[key]:<{width}}  {value:>10.4f}")
