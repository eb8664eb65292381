"""``python -m core inspect``: per-token records and every detector's score for one passage."""

from __future__ import annotations

import argparse
import sys
import warnings
from contextlib import ExitStack

from core.cli.common import (
    command_provenance,
    emit_json,
    model_options,
    open_store,
    output_options,
    print_finding,
    require_positive,
    store_options,
    tested_model,
)
from core.data.text import check_unicode, decode_utf8
from core.errors import InputTextError, LeakLensError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "inspect",
        parents=[model_options(), output_options(), store_options()],
        help="score one passage: its finding, per-token log-probs and every detector",
        description=(
            "Score one passage with a model: the finding first (where it sits among LeakLens's freshly written "
            "passages, and whether the model continues it word for word), then per-token records and every "
            "detector's score. The fresh passages are scored once per model and kept in the results store."
        ),
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
    parser.add_argument(
        "--extract",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="give the model the passage's first half and compare its continuation with the rest (default: on)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.engine.progress import announced, tqdm_progress
    from core.methods import parse_methods
    from core.passage.calibration import one_time_line
    from core.passage.run import EXTRACTION, FRESH, inspect_passage

    text = _read_text(args)
    require_positive(args.max_tokens, "--max-tokens")
    model = tested_model(args)
    lm = model.load()
    asked = parse_methods(args.methods)
    with ExitStack() as bars, open_store(args) as store, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")

        def progress(stage: str):
            if stage == FRESH:
                return announced(one_time_line, bars.enter_context(tqdm_progress("fresh passages", unit="passage")))
            if stage == EXTRACTION:
                return bars.enter_context(tqdm_progress("extraction", unit="passage"))
            return None

        result = inspect_passage(
            model,
            [("Passage", text)],
            store=store,
            max_tokens=args.max_tokens,
            methods=asked,
            kgram_columns=False,
            extraction=args.extract,
            progress=progress,
        )
    for note in result.left_out:
        print(f"note: {note}", file=sys.stderr)
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    if result.placement_error:
        raise LeakLensError(result.placement_error)
    (passage,) = result.passages
    (verdict,) = result.verdicts
    if passage.n_dropped:
        kept = passage.analysis.records.n_tokens
        print(
            f"warning: only the passage's first {kept:,} tokens were scored; the last {passage.n_dropped_text} "
            "tokens were dropped (--max-tokens, or the model's context length).",
            file=sys.stderr,
        )
    analysis = passage.analysis
    shown = {m.key for m in asked}
    labels = {m.key: m.label for m in asked}
    scores = {key: value for key, value in analysis.scores.items() if key in shown}
    payload = {
        **verdict.to_dict(),
        "model": model.spec,
        "device": lm.device_label,
        "left_out": list(result.left_out),
        "n_tokens": analysis.records.n_tokens,
        "n_dropped": analysis.records.n_dropped,
        "n_dropped_exact": analysis.records.n_dropped_exact,
        "perplexity": analysis.perplexity,
        "tokens": analysis.records.table(),
        "scores": scores,
        "calibration": result.fresh,
        "run_id": None if args.no_store else result.run_id,
        "provenance": command_provenance(args, "inspect", models={"model": model}),
    }
    emit_json(args, payload)
    if not args.json:
        print_finding(verdict.finding)
        if verdict.view is not None:
            _print_extraction(verdict)
        _print_table(analysis, scores, labels, lm.describe())
        if not args.no_store:
            print(f"\nstored as run {result.run_id} (python -m core report {result.run_id[:12]} --out report.html)")
    return 0


def _print_extraction(verdict) -> None:
    view = verdict.view
    print(f"given (the passage's first {view.prompt_words} words): {_short(view.prompt, 200, tail=True)}")
    print(f"model wrote: {_short(''.join(view.generated_pieces), 300)}")
    print(f"passage has: {_short(''.join(view.truth_pieces), 300)}\n")


def _short(text: str, limit: int, *, tail: bool = False) -> str:
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return "…" + flat[-limit:] if tail else flat[:limit] + "…"


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


def _print_table(analysis, scores: dict[str, float], labels: dict[str, str], model_line: str) -> None:
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
    for key, value in scores.items():
        print(f"  {labels[key]:<{width}}  {value:>10.4f}")
