"""``python -m core mcq``: option-completion memorisation, before and after shuffling the options."""

from __future__ import annotations

import argparse
import sys
import time

from core.cli.common import (
    add_column,
    command_provenance,
    dataset_options,
    emit_json,
    limit_options,
    model_options,
    open_store,
    output_options,
    print_finding,
    store_options,
    tested_model,
)
from core.data.questions import MCQColumns, PromptLayout, parse_option_columns
from core.engine.distributed import is_main_process
from core.mcq.match import SIMILARITY_METRICS
from core.mcq.probes import CUT_MODES


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "mcq",
        parents=[
            model_options(),
            dataset_options(
                sample=False, help_text="demo:mcq, a JSONL / CSV / Parquet file or a hub id (e.g. cais/mmlu)"
            ),
            output_options(),
            store_options(),
        ],
        help="multiple-choice memorisation: can the model finish benchmark options word for word?",
        description=(
            "Cut every option of every question in half and ask the model to continue (next-token and "
            "completion probes); score = options reproduced per question. Then shuffle the options and measure "
            "again; optionally rank the original option order among all orders. Runs are stored question by "
            "question: an interrupted run resumes, a finished one is read back."
        ),
    )
    columns = parser.add_argument_group("columns")
    add_column(columns, "question", "question column (default question)", default="question")
    columns.add_argument(
        "--option-cols",
        nargs="+",
        default=["A,B,C,D"],
        metavar="COL",
        help="option columns, as A,B,C,D or A B C D E F (default A,B,C,D)",
    )
    add_column(
        columns,
        "answer",
        "answer column: letter(s), 0-based index or the exact text of one option (default answer)",
        default="answer",
    )
    parser.add_argument("--cut", choices=CUT_MODES, default="chars", help="cut after half the characters or words")
    parser.add_argument("--similarity", choices=SIMILARITY_METRICS, default="rouge_l")
    parser.add_argument(
        "--threshold", type=float, default=0.75, help="similarity counted as a near-verbatim completion"
    )
    parser.add_argument("--shuffle-seed", type=int, default=0, help="seed of the option shuffle")
    parser.add_argument("--export-shuffled", help="write the shuffled benchmark to this JSONL file")
    parser.add_argument(
        "--permutation-test", action="store_true", help="rank the original option order among all orders"
    )
    parser.add_argument("--question-template", default="{question}", help="prompt layout of the question")
    parser.add_argument("--option-template", default="{letter}. {text}", help="prompt layout of one option")
    parser.add_argument("--save", action="store_true", help=argparse.SUPPRESS)  # ignored: runs are always stored
    parser.set_defaults(func=run, distributed=True)  # torchrun shares its batches (docs/scaling.md)


def run(args: argparse.Namespace) -> int:
    from core.data.questions import load_mcq, write_jsonl
    from core.engine.progress import tqdm_progress
    from core.mcq.completion import MCQConfig
    from core.mcq.finding import mcq_finding
    from core.mcq.stored import run_stored_benchmark

    columns = MCQColumns(
        question=args.question_col,
        options=parse_option_columns(args.option_cols),
        answer=args.answer_col or None,
    )
    layout = PromptLayout(question_template=args.question_template, option_template=args.option_template)
    config = MCQConfig(layout=layout, cut=args.cut, metric=args.similarity, threshold=args.threshold)
    dataset = load_mcq(args.dataset, split=args.split, config=args.config, columns=columns, **limit_options(args))
    if dataset.skipped:
        print(f"warning: {dataset.skipped_summary()}", file=sys.stderr)
    for note in dataset.notes:
        print(f"note: {note}", file=sys.stderr)
    model = tested_model(args)
    provenance = command_provenance(args, "mcq", models={"model": model})
    started = time.perf_counter()
    with open_store(args) as store, tqdm_progress("mcq questions", unit="question") as progress:
        report, run_info, n_computed = run_stored_benchmark(
            dataset.questions,
            config,
            model=model,
            store=store,
            benchmark=dataset.source,
            shuffle_seed=args.shuffle_seed,
            permutation=args.permutation_test,
            progress=progress,
            provenance=provenance,
        )
    elapsed = time.perf_counter() - started
    if args.export_shuffled and is_main_process():  # one writer in a distributed run
        write_jsonl(report.shuffled_questions, args.export_shuffled)
    finding = mcq_finding(report)
    payload = {"finding": finding.to_dict(), **report.to_dict(model=model.spec, benchmark=dataset.source)}
    payload["seconds"] = round(elapsed, 2)
    payload["from_store"] = n_computed == 0
    if not args.no_store:
        payload["run_id"] = run_info.run_id
    payload["provenance"] = provenance  # this call's: a run read back keeps its own in the store
    emit_json(args, payload)
    if not args.json:
        model_line = model.load().describe() if n_computed else f"{model.spec} (read from the store)"
        print_finding(finding)
        _print(payload, model_line)
    return 0


def _print(payload: dict, model_line: str) -> None:
    print(f"benchmark: {payload['benchmark']}")
    print(f"model: {model_line}")
    print(f"questions: {payload['n']}   ({payload['seconds']} s)")
    print(f"{'':<12}{'probe':<12}{'score distribution 0..n':<32}{'mean':>6}")
    for which in ("original", "shuffled"):
        for kind in ("next_token", "completion"):
            block = payload[which][kind]
            print(f"{which:<12}{kind:<12}{str(block['distribution']):<32}{block['mean']:>6.3f}")
    print(
        f"mitigation (drop in mean): next-token {payload['mitigation']['next_token']:+.3f}, "
        f"completion {payload['mitigation']['completion']:+.3f}"
    )
    perm = payload.get("permutation")
    if perm:
        print(
            f"order test: mean percentile {perm['mean_percentile']:.3f} "
            f"(0.5 = no preference, p={perm['p_value_percentile']:.3g}); "
            f"original order most likely for {perm['top1_fraction']:.1%} "
            f"(chance {1 / perm['n_orders']:.1%}, p={perm['p_value_top1']:.3g})"
        )
