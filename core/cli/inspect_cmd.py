"""``python -m core inspect``: per-token records and every detector's score for one passage."""

from __future__ import annotations

import argparse
import sys
import warnings

from core.cli.common import (
    command_provenance,
    emit_json,
    load_model_from_args,
    model_options,
    output_options,
    require_positive,
)
from core.data.text import check_unicode, decode_utf8
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
    parser.set_defaults(func=run, served=True)


def run(args: argparse.Namespace) -> int:
    from core.engine.models import LoadedModel
    from core.membership.analysis import analyse_passages
    from core.methods import parse_methods
    from core.methods.support import supported_methods

    text = _read_text(args)
    require_positive(args.max_tokens, "--max-tokens")
    lm = load_model_from_args(args)
    methods, left_out = supported_methods(lm, parse_methods(args.methods))
    for note in left_out:
        print(f"note: {note}", file=sys.stderr)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (analysis,) = analyse_passages(lm, [text], methods, max_tokens=args.max_tokens)
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    labels = {m.key: m.label for m in methods}
    payload = {
        "model": lm.spec,
        "device": lm.device.type if isinstance(lm, LoadedModel) else "server",
        "left_out": left_out,
        "n_tokens": analysis.records.n_tokens,
        "n_dropped": analysis.records.n_dropped,
        "n_dropped_exact": analysis.records.n_dropped_exact,
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
    """The passage, checked to be text before any model loads (bad bytes are named, never a TypeError)."""
    if args.text is not None:
        name = "--text"
        text = check_unicode(args.text, name, "Pass UTF-8 text, or save the passage as UTF-8 and use --file.")
    else:
        name = "stdin (--file -)" if args.file == "-" else args.file
        try:
            if args.file == "-":
                data = sys.stdin.buffer.read()
            else:
                with open(args.file, "rb") as handle:
                    data = handle.read()
        except OSError as exc:
            raise InputTextError(f"Could not read {args.file}: {exc.strerror}. Pass an existing text file.") from exc
        text = decode_utf8(data, name)
    if not text.strip():
        raise InputTextError(f"{name} is empty or whitespace only; give a passage to score.")
    return text


def _print_table(analysis, labels: dict[str, str], model_line: str) -> None:
    rec = analysis.records
    print(f"model: {model_line}")
    about = "" if rec.n_dropped_exact else "about "
    print(f"tokens scored: {rec.n_tokens}" + (f" ({about}{rec.n_dropped} dropped)" if rec.n_dropped else ""))
    print(f"perplexity: {analysis.perplexity:.2f}\n")
    print(f"{'#':>4}  {'token':<20} {'logprob':>9} {'prob':>7} {'rank':>6}")
    for row in rec.table():
        token = repr(row["token"])[1:-1][:20]
        print(f"{row['position']:>4}  {token:<20} {row['logprob']:>9.3f} {row['prob']:>7.3f} {row['rank']:>6}")
    print("\nscores (higher = more likely seen in training):")
    width = max(len(label) for label in labels.values())
    for key, value in analysis.scores.items():
        print(f"  {labels[key]:<{width}}  {value:>10.4f}")
