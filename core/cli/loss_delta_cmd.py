"""``python -m core delta``: the loss-delta leakage test (benchmark vs fresh reference), headless."""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from collections.abc import Sequence

from core.cli.common import (
    add_column,
    command_provenance,
    emit_json,
    limit_options,
    model_options,
    open_store,
    output_options,
    print_finding,
    store_options,
    tested_handles,
)
from core.errors import DataError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "delta",
        parents=[model_options(repeatable=True), output_options(), store_options()],
        help="loss-delta leakage test: benchmark solutions vs a fresh reference set (Δ, Δ²)",
        description=(
            "Compare a model's loss on a benchmark's solutions (given their prompts) with its loss on a freshly "
            "written reference set: Δ = L_test − L_ref, with a bootstrap CI and a significance test. With "
            "--base-model, Δ² = Δ_model − Δ_base. Losses are kept in the shared results store."
        ),
    )
    data = parser.add_argument_group("data")
    data.add_argument(
        "--test",
        "--dataset",
        dest="test",
        default="humaneval",
        help="the benchmark: humaneval (default), builtin, a file or a hub id",
    )
    data.add_argument(
        "--reference",
        default="builtin",
        help="builtin (LeakLens's own problems, default), a file, or a hub id such as "
        "Miaosen/openai-humaneval-sky-shadow",
    )
    data.add_argument("--split", help="split of a hub dataset (default: test for the shadow set)")
    data.add_argument("--config", help="configuration of a hub dataset")
    data.add_argument("--limit", type=int, help="use the first N problems of each set")
    columns = parser.add_argument_group("columns (of a file or hub set)")
    add_column(columns, "id", "task id column", aliases=("--id-column",))
    add_column(columns, "prompt", "prompt column (default: auto-detected, e.g. prompt)", aliases=("--prompt-column",))
    add_column(
        columns,
        "solution",
        "solution column (default: auto-detected, e.g. canonical_solution)",
        aliases=("--solution-column",),
    )
    parser.add_argument(
        "--base-model",
        action="append",
        help="base model of the preceding --model, for Δ² (repeat once per --model; 'none' skips)",
    )
    parser.add_argument(
        "--pairing",
        choices=["auto", "paired", "unpaired"],
        default="auto",
        help="pair problems by task id (auto: when both sets share ids)",
    )
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.set_defaults(func=run, distributed=True)  # torchrun shares its batches (docs/scaling.md)


def requests_from_args(models: list[str], bases: list[str] | None) -> list:
    from core.loss_delta.delta import ModelRequest

    if bases and len(bases) != len(models):
        raise DataError(
            f"Give one --base-model per --model ({len(models)} models, {len(bases)} base models); "
            "use 'none' for a model without a base."
        )
    padded: Sequence[str | None] = bases or [None] * len(models)
    pairs = zip(models, padded)
    return [ModelRequest(m.strip(), None if not b or b.strip().lower() == "none" else b.strip()) for m, b in pairs]


def run(args: argparse.Namespace) -> int:
    from core.data.problems import BUILTIN, HUMANEVAL, load_problem_set
    from core.data.tables import check_hub_options
    from core.engine.progress import tqdm_progress
    from core.loss_delta.finding import leakage_finding
    from core.loss_delta.run import run_leakage_test

    if args.resamples < 1:
        raise DataError("--resamples must be at least 1.")
    handles = tested_handles(args)
    model = handles[0]  # the others resolve beside it: one setup, one loader
    requests = requests_from_args([h.spec for h in handles], args.base_model)
    columns = {
        "id_column": args.id_col,
        "prompt_column": args.prompt_col,
        "solution_column": args.solution_col,
        "split": args.split,
        "config": args.config,
        **limit_options(args),
    }
    check_hub_options([args.test, args.reference], split=args.split, config=args.config, shipped=(HUMANEVAL, BUILTIN))
    test = load_problem_set(args.test, **columns)
    ref = load_problem_set(args.reference, **columns)
    roles = {f"model {i + 1}": model.beside(r.model, tested=True) for i, r in enumerate(requests)}
    roles.update({f"base of model {i + 1}": model.beside(r.base_model) for i, r in enumerate(requests) if r.base_model})
    provenance = command_provenance(args, "delta", models=roles)

    started = time.perf_counter()
    with (
        open_store(args) as store,
        warnings.catch_warnings(record=True) as caught,
        tqdm_progress("scoring solutions", unit="problem") as bar,
    ):
        warnings.simplefilter("always")
        report = run_leakage_test(
            test,
            ref,
            requests,
            model=model,
            pairing=args.pairing,
            store=store,
            n_resamples=args.resamples,
            seed=args.seed,
            progress=bar,
            provenance=provenance,
        )
    elapsed = time.perf_counter() - started
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    finding = leakage_finding(report)
    payload = {"finding": finding.to_dict(), **report.to_dict()}
    payload["elapsed_s"] = round(elapsed, 2)
    payload["provenance"] = provenance
    emit_json(args, payload)
    if not args.json:
        print_finding(finding)
        _print_report(report, elapsed, stored=not args.no_store)
    return 0


def _fmt(value: float | None, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.{digits}f}"


def _print_report(report, elapsed: float, *, stored: bool) -> None:
    print(f"test set:      {report.test_name} ({report.models[0].stats.n_test} problems)")
    print(f"reference set: {report.ref_name} ({report.models[0].stats.n_ref} problems)")
    print(f"{'paired by task id' if report.paired else 'unpaired'}; significance test: {report.test_used}\n")
    print(f"{'model':<32} {'L_test':>8} {'L_ref':>8} {'Δ':>8}  {'95% CI':<19} {'p':>8}")
    for m in report.models:
        s = m.stats
        ci = f"[{s.ci[0]:.4f}, {s.ci[1]:.4f}]"
        print(f"{m.model:<32} {s.l_test:>8.4f} {s.l_ref:>8.4f} {s.delta:>8.4f}  {ci:<19} {_fmt(s.p_value, 3):>8}")
    with_base = [m for m in report.models if m.base_stats is not None]
    if with_base:
        print(f"\n{'model':<32} {'base':<24} {'Δ_SFT':>8} {'Δ_base':>8} {'Δ²':>8}")
        for m in with_base:
            print(f"{m.model:<32} {m.base_model:<24} {m.stats.delta:>8.4f} {m.base_stats.delta:>8.4f} {m.delta2:>8.4f}")
    if report.flag_note:
        print(f"\nnote: {report.flag_note}")
    if report.flagged:
        print(f"\nflagged reference problems ({len(report.flagged)}):")
        for f in report.flagged:
            print(f"  {f.task_id}: {'; '.join(f.reasons)}")
    note = " (losses already in the results store were reused)" if stored else ""
    print(f"\n{elapsed:.1f} s{note}")
