"""``python -m core audit``: every test that fits a benchmark, run on one model, combined into one verdict."""

from __future__ import annotations

import argparse
import sys

from core.cli.common import (
    command_provenance,
    emit_json,
    limit_options,
    model_options,
    open_store,
    output_options,
    print_finding,
    store_options,
    tested_model,
)
from core.cli.overlap_cmd import backend_from_args, backend_options
from core.errors import DataError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "audit",
        parents=[model_options(), output_options(), store_options(), backend_options()],
        help="audit: has this model seen this benchmark? every applicable test, one combined verdict",
        description=(
            "Plan which tests fit the benchmark and the evidence given (the benchmark-order test, multiple-choice "
            "memorisation and its option order, extraction on a sample of items; loss delta with --reference, "
            "dataset inference with --validation, overlap with --index), print the plan with each test's "
            "expected time, run the tests in order (each stored as its own command would store it, so an "
            "interrupted audit resumes), and combine their p-values with Holm's correction into one verdict "
            "(docs/methods.md, Audit)."
        ),
    )
    data = parser.add_argument_group("benchmark")
    data.add_argument(
        "--benchmark",
        dest="dataset",
        required=True,
        help="the benchmark in its published order: demo:NAME, a CSV / TSV / JSONL / JSON / Parquet file, or a hub "
        "dataset id",
    )
    data.add_argument("--dataset", dest="dataset", help=argparse.SUPPRESS)
    data.add_argument("--split", help="split of a hub dataset")
    data.add_argument("--config", help="configuration of a hub dataset")
    data.add_argument("--limit", type=int, help="use the first N rows")
    data.add_argument(
        "--text-template",
        help='how one item reads for the order test and extraction, e.g. "{question} {answer}" (default: every '
        "column but a row id, joined by spaces)",
    )
    evidence = parser.add_argument_group("evidence sources (each adds the test that needs it)")
    evidence.add_argument(
        "--reference",
        help="fresh problems of the same kind, for loss delta (a file, a hub id, or builtin for Python code)",
    )
    evidence.add_argument("--validation", help="held-out texts from the benchmark's source, for dataset inference")
    evidence.add_argument("--index", help="a training-data index built with `overlap index`, for overlap")
    evidence.add_argument("--base-model", help="the model the audited one was fine-tuned from, for loss delta's Δ²")
    parser.add_argument("--plan-only", action="store_true", help="print the plan and stop before any work")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.audit.estimates import plan_with_estimates
    from core.audit.plan import EvidenceSources, plan_audit
    from core.audit.run import run_audit
    from core.data.tables import load_rows

    table = load_rows(args.dataset, split=args.split, config=args.config, **limit_options(args))
    if not table.rows:
        raise DataError(f"{args.dataset} has no rows to audit.")
    sources = EvidenceSources(args.reference, args.validation, args.index, args.base_model)
    model = tested_model(args)
    plan = plan_with_estimates(plan_audit(table, sources), model, table)
    info = sys.stderr if args.json else sys.stdout
    print("\n".join(plan.lines()), file=info)
    print(file=info)
    if table.skipped:
        print(f"warning: {table.skipped_summary()}", file=sys.stderr)
    if args.plan_only:
        emit_json(
            args, {"plan": plan.to_dict(), "provenance": command_provenance(args, "audit", models={"model": model})}
        )
        return 0
    with open_store(args) as store, _Bars() as bars:
        audit = run_audit(
            table,
            model,
            sources=sources,
            store=store,
            plan=plan,
            progress=bars.step,
            template=args.text_template,
            overlap_backend=backend_from_args(args) if sources.index else None,
        )
    document = audit.to_dict()
    if args.no_store:
        document.pop("run_id")
    document["provenance"] = command_provenance(args, "audit", models={"model": model})
    emit_json(args, document)
    if not args.json:
        print_finding(audit.finding)
        _print_table(audit)
    return 0


class _Bars:
    """One progress bar per step of the audit, the step named in it; each closes as the next starts."""

    def __init__(self) -> None:
        from contextlib import ExitStack

        self._stack = ExitStack()

    def __enter__(self) -> _Bars:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def step(self, label: str):
        from core.engine.progress import tqdm_progress

        self._stack.close()
        return self._stack.enter_context(tqdm_progress(label, unit="item"))


def _print_table(audit) -> None:
    from core.audit.plan import TEST_BY_KEY

    print(f"{'test':<30} {'finding':<13} {'p-value':>8} {'Holm':>8}  key number")
    for part in audit.parts:
        title = TEST_BY_KEY[part.key].title if part.key in TEST_BY_KEY else part.key
        p = "—" if part.p_value is None else f"{part.p_value:.2g}"
        adjusted = audit.verdict.adjusted.get(part.key)
        holm = "—" if adjusted is None else f"{adjusted:.2g}"
        print(f"{title:<30} {part.finding.level:<13} {p:>8} {holm:>8}  {part.finding.numbers}")
    for part in audit.plan.left_out:
        print(f"not run: {part.why_not}")
    if audit.run_id:
        print(f"\nrun {audit.run_id} · open it on the Results page or with `python -m core report {audit.run_id}`")
