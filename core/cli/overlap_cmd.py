"""``python -m core overlap index|search|list|delete``: train/test overlap and decontamination."""

from __future__ import annotations

import argparse
import sys

from core.cli.common import (
    add_column,
    command_provenance,
    dataset_options,
    emit_json,
    output_options,
    print_finding,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "overlap",
        help="index training sets, search them with test sets, report contamination, decontaminate",
        description="Train/test overlap search on an embedded index (default) or Elasticsearch.",
    )
    actions = parser.add_subparsers(dest="overlap_action", required=True, metavar="ACTION")

    index = actions.add_parser(
        "index",
        parents=[
            backend_options(),
            dataset_options(
                required=False,
                repeatable=True,
                limit=False,
                config=False,
                help_text="training set: demo:overlap-train, a file or a hub id",
            ),
            output_options(),
        ],
        help="index training sets",
        description="Index training sets.",
    )
    index.add_argument("--name", required=True, help="index name (lower-case letters, digits, '-', '_')")
    index.add_argument("--dataset-mixer-config", help="YAML with a 'dataset_mixer:' mapping dataset -> proportion")
    columns = index.add_argument_group("columns")
    add_column(columns, "text", "plain text column (default text)", aliases=("--text-field",), default="text")
    add_column(
        columns, "messages", "conversation column: each kept turn is one document", aliases=("--messages-field",)
    )
    columns.add_argument("--query-filter", help="keep turns with FIELD:VALUE, e.g. role:user")
    add_column(
        columns, "query", "turn field holding the text (default content)", aliases=("--query-field",), default="content"
    )
    index.add_argument("--index-type", choices=["text", "vector"], default="text")
    index.add_argument("--model", help="sentence-transformers model for vector indexes (default all-MiniLM-L6-v2)")
    index.add_argument(
        "--ngram-size",
        type=int,
        default=8,
        help="n-gram size a text index stores (default 8); searches of other sizes are slower on "
        "Elasticsearch and refused below it by the embedded index",
    )
    index.add_argument("--overwrite", action="store_true", help="replace an existing index of that name")
    index.set_defaults(func=run_index)

    search = actions.add_parser(
        "search",
        parents=[
            backend_options(),
            dataset_options(
                repeatable=True, limit=False, config=False, help_text="test set: demo:overlap-test, a file or a hub id"
            ),
            output_options(),
        ],
        help="search indexes with a test set",
        description="Search indexes.",
    )
    search.add_argument("--index", required=True, help="index name(s), comma-separated")
    columns = search.add_argument_group("columns")
    add_column(columns, "text", "text column of the test set (default text)", aliases=("--field",), default="text")
    add_column(columns, "id", "id column of the test set (default: row number)", aliases=("--id-field",))
    search.add_argument("--mode", choices=["ngram", "exact", "vector"], default="ngram")
    search.add_argument("--ngram-size", type=int, default=8)
    search.add_argument("--match-threshold", type=float, help="score 1/0 at this value; also the removal threshold")
    search.add_argument(
        "--search-size",
        type=int,
        default=100,
        help="Elasticsearch: at most this many candidate documents per test instance (per n-gram "
        "when --ngram-size differs from the index's) and training set (default 100)",
    )
    search.add_argument("--output-dir", required=True, help="where the per-instance JSONL and the report go")
    search.add_argument(
        "--decontaminate",
        action="store_true",
        help="also write each training set without its matched rows (JSONL files: every other line byte for byte)",
    )
    search.add_argument(
        "--drop-malformed",
        action="store_true",
        help="with --decontaminate: also leave out unreadable lines, and list them",
    )
    search.set_defaults(func=run_search)

    listing = actions.add_parser(
        "list",
        parents=[backend_options(), output_options()],
        help="list indexes",
        description="List indexes with their sizes.",
    )
    listing.set_defaults(func=run_list)

    delete = actions.add_parser(
        "delete", parents=[backend_options(), output_options()], help="delete an index", description="Delete an index."
    )
    delete.add_argument("--name", required=True)
    delete.set_defaults(func=run_delete)


def backend_options() -> argparse.ArgumentParser:
    """``--backend --index-dir --es-url --es-ca-certs --es-no-verify-certs``: where indexes live (overlap, audit)."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("index backend")
    group.add_argument("--backend", choices=["embedded", "elasticsearch"], default="embedded")
    group.add_argument("--index-dir", help="embedded index directory (default <cache>/indexes)")
    group.add_argument("--es-url", help="Elasticsearch URL (default $ES_URL; credentials from ELASTIC_PASSWORD)")
    group.add_argument(
        "--es-ca-certs",
        metavar="PEM",
        help="CA certificate of an HTTPS cluster (default $ELASTIC_CA_CERTS; ES 8+ writes it to "
        "config/certs/http_ca.crt)",
    )
    group.add_argument(
        "--es-no-verify-certs",
        action="store_true",
        help="do not verify the cluster's TLS certificate (insecure: prints a warning)",
    )
    return parent


def backend_from_args(args: argparse.Namespace):
    """The index backend the backend options name."""
    from core.overlap.backends import get_backend

    return get_backend(
        args.backend,
        root=args.index_dir,
        es_url=args.es_url,
        es_ca_certs=args.es_ca_certs,
        es_verify_certs=not args.es_no_verify_certs,
    )


def run_index(args: argparse.Namespace) -> int:
    from core.data.tables import check_hub_options
    from core.engine.progress import tqdm_progress
    from core.overlap.indexing import build_index
    from core.overlap.sources import skipped_note, source_file, training_sources

    sources = training_sources(
        args.dataset or [],
        text_field=args.text_col,
        messages_field=args.messages_col,
        query_filter=args.query_filter,
        query_field=args.query_col,
        split=args.split,
        mixer_config=args.dataset_mixer_config,
    )
    check_hub_options([s.source for s in sources], split=args.split)
    _plan(args).add_inputs(("training source", source_file(s)) for s in sources)  # a mixer's files too
    backend = backend_from_args(args)
    with tqdm_progress("indexing", unit="doc") as progress:
        result = build_index(
            backend,
            args.name,
            sources,
            index_type=args.index_type,
            ngram_size=args.ngram_size,
            model=args.model,
            overwrite=args.overwrite,
            progress=progress,
        )
    info = result.info
    skipped = {dataset: [s.line for s in rows] for dataset, rows in result.skipped.items() if rows}
    emit_json(
        args,
        {
            "index": _info_json(info),
            "rows": dict(result.n_rows),
            "reused": result.reused,
            "skipped_lines": skipped,
            "provenance": command_provenance(args, "overlap index", uses_model=False),
        },
    )
    for dataset, rows in result.skipped.items():
        if rows:
            print(f"warning: {skipped_note(dataset, rows)}", file=sys.stderr)
    if args.json:
        return 0
    print(f"index {info.name} ({info.backend}, {info.index_type}): {info.n_docs} documents, {_size(info.size_bytes)}")
    if result.reused:
        print(
            f"  already built from these unchanged training sets, so it was kept as it is (pass --overwrite to "
            f"build it again): {', '.join(f'{d} {n} documents' for d, n in info.datasets.items())}"
        )
        return 0
    for dataset, count in info.datasets.items():
        print(f"  {dataset}: {count} documents from {result.n_rows.get(dataset, 0)} rows")
    return 0


def run_search(args: argparse.Namespace) -> int:
    from core.data.tables import check_hub_options
    from core.engine.progress import tqdm_progress
    from core.overlap.finding import overlap_finding
    from core.overlap.matching import SearchSettings
    from core.overlap.run import run_search as search_and_write
    from core.overlap.sources import load_eval_set, skipped_note

    settings = SearchSettings(
        mode=args.mode,
        ngram_size=args.ngram_size,
        match_threshold=args.match_threshold,
        search_size=args.search_size,
    )
    names = [n.strip() for n in args.index.split(",") if n.strip()]
    check_hub_options(args.dataset, split=args.split)
    test_sets = [load_eval_set(d, args.text_col, id_field=args.id_col, split=args.split) for d in args.dataset]
    for test_set in test_sets:
        if test_set.skipped:
            print(f"warning: {skipped_note(test_set.name, test_set.skipped)}", file=sys.stderr)
    backend = backend_from_args(args)
    with tqdm_progress("searching", unit="instance") as progress:
        outcome = search_and_write(
            backend,
            names,
            test_sets,
            settings,
            args.output_dir,
            clean=args.decontaminate,
            drop_malformed=args.drop_malformed,
            progress=progress,
            plan=_plan(args),
        )
    report, paths, cleaned_files = outcome.report, outcome.paths, outcome.cleaned
    finding = overlap_finding(report)
    document = {
        "finding": finding.to_dict(),
        "contamination": [
            {
                "eval_dataset": e,
                "train_dataset": tr,
                "score": report.scores[(e, tr)],
                "matched": report.matched[(e, tr)],
                "instances": report.counts[e],
            }
            for e in report.evals
            for tr in report.trains
        ],
        "files": [str(path) for path in paths],
        "decontaminated": [
            {
                "dataset": c.dataset,
                "removed": c.n_removed,
                "rows": c.n_rows,
                "path": str(c.path),
                "still_matching": c.still_matching,
                "dropped_lines": c.dropped_lines,
            }
            for c in cleaned_files
        ],
        "provenance": command_provenance(args, "overlap search", uses_model=False),
    }
    emit_json(args, document)
    if args.json:
        return 0
    print_finding(finding)
    print(report.format())
    print(f"wrote {len(paths)} files to {args.output_dir}")
    for cleaned in cleaned_files:
        line = f"{cleaned.dataset}: removed {cleaned.n_removed} of {cleaned.n_rows} rows -> {cleaned.path}"
        if cleaned.still_matching is not None:
            line += f" (re-check: {cleaned.still_matching} test instances still match)"
        if cleaned.dropped_lines:
            line += f"; dropped {len(cleaned.dropped_lines)} malformed lines ({_line_list(cleaned.dropped_lines)})"
        print(line)
    return 0


def run_list(args: argparse.Namespace) -> int:
    infos = backend_from_args(args).list()
    emit_json(
        args,
        {
            "indexes": [_info_json(info) for info in infos],
            "provenance": command_provenance(args, "overlap list", uses_model=False),
        },
    )
    if args.json:
        return 0
    if not infos:
        print("no indexes")
    for info in infos:
        sets = ", ".join(f"{d}={n}" for d, n in info.datasets.items())
        if info.unreadable:
            state = f"\tUNREADABLE ({info.unreadable}: rebuild it with overlap index --overwrite, or delete it)"
        elif not info.complete:
            state = "\tINCOMPLETE (build did not finish: rebuild it with overlap index)"
        else:
            state = ""
        print(f"{info.name}\t{info.index_type}\t{info.n_docs} docs\t{_size(info.size_bytes)}\t{sets}{state}")
    return 0


def run_delete(args: argparse.Namespace) -> int:
    backend_from_args(args).delete(args.name)
    emit_json(args, {"deleted": args.name, "provenance": command_provenance(args, "overlap delete", uses_model=False)})
    if not args.json:
        print(f"deleted {args.name}")
    return 0


def _plan(args: argparse.Namespace):
    """The command's inputs and outputs, checked before it started (a fresh plan when called directly)."""
    from core.files.outputs import OutputPlan

    return getattr(args, "output_plan", None) or OutputPlan()


def _info_json(info) -> dict:
    return {
        "name": info.name,
        "backend": info.backend,
        "index_type": info.index_type,
        "n_docs": info.n_docs,
        "datasets": dict(info.datasets),
        "size_bytes": info.size_bytes,
        "ngram_size": info.ngram_size,
        "model": info.model,
        "complete": info.complete,
        "unreadable": info.unreadable,
    }


def _line_list(lines: list[int], limit: int = 30) -> str:
    more = f" and {len(lines) - limit} more" if len(lines) > limit else ""
    return "lines " + ", ".join(map(str, lines[:limit])) + more


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 1024:.1f} KiB"
