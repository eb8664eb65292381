"""``python -m core report``: the self-contained HTML report of stored runs, without the app or a model."""

from __future__ import annotations

import argparse
from pathlib import Path

from core.cli.common import open_store, store_options, write_output
from core.errors import LeakLensError

HTML_SUFFIXES = (".html", ".htm")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        parents=[store_options()],
        help="write the self-contained HTML report of stored runs (any kind of test)",
        description=(
            "Build one HTML file from runs already in the results store: each run's finding first, then its "
            "charts and tables. Every test's stored run with a verdict of its own is supported (for the loss-delta "
            "test, its comparison run, not the per-set 'delta' runs it reuses); the Results page lists run ids "
            "under 'Run details' (a unique prefix is enough). The file embeds Plotly once and opens offline in any "
            "browser."
        ),
    )
    parser.add_argument("run_ids", nargs="+", metavar="RUN_ID", help="id (or unique prefix) of a stored run")
    parser.add_argument(
        "--out",
        required=True,
        metavar="FILE.html",
        help="write the HTML report here (unlike other commands' --out, this is HTML, not JSON)",
    )
    parser.add_argument("--title", help="report title (default: by the kinds of runs reported)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.results.report import find_stored_runs, stored_runs_report

    if args.no_store:
        raise LeakLensError("report reads runs from the results store; drop --no-store (use --store PATH).")
    if Path(args.out).suffix.lower() not in HTML_SUFFIXES:
        raise LeakLensError(
            f"The report is an HTML page, so --out must end in .html (got {args.out}); a browser can print it to PDF."
        )
    with open_store(args) as store:
        runs = find_stored_runs(store, args.run_ids)
        text = stored_runs_report(store, runs, title=args.title)
    path = write_output(args.out, text)
    print(f"wrote the report of {len(runs)} run(s) to {path}")
    return 0
