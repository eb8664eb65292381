"""``python -m core mcq``: option-completion memorization, before and after shuffling the options."""

from __future__ import annotations

import argparse
import json
import sys
import time

from core.data.questions import MCQColumns, PromptLayout
from core.mcq.match import SIMILARITY_METRICS
from core.mcq.probes import CUT_MODES


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "mcq",
        help="multiple-choice memorization: can the model finish benchmark options word for word?",
        description=(
            "Cut every option of every question in half and ask the model to continue (next-token and "
            "completion probes); score = options reproduced per question. Then shuffle the options and measure "
            "again; optionally rank the original option order among all orders."
        ),
    )
    parser.add_argument("--dataset", required=True, help="JSONL/CSV/Parquet file or hub dataset id (e.g. cais/mmlu)")
    parser.add_argument("--split", help="hub split, e.g. test")
    parser.add_argument("--config", help="hub config, e.g. all")
    parser.add_argument("--model", default="smollm2-135m", help="bundled name, local directory or hub id")
    parser.add_argument("--limit", type=int, help="use the first N questions")
    parser.add_argument("--question-col", default="question")
    parser.add_argument("--option-cols", default="A,B,C,D", help="comma-separated option columns")
    parser.add_argument("--answer-col", default="answer", help="answer column (letter(s) or 0-based index)")
    parser.add_argument("--cut", choices=CUT_MODES, default="chars", help="cut after half the characters or words")
    parser.add_argument("--similarity", choices=SIMILARITY_METRICS, default="rouge_l")
    parser.add_argument("--threshold", type=float, default=0.75, help="similarity counted as a near-verbatim completion")
    parser.add_argument("--shuffle-seed", type=int, default=0, help="seed of the option shuffle")
    parser.add_argument("--export-shuffled", help="write the shuffled benchmark to this JSONL file")
    parser.add_argument("--permutation-test", action="store_true", help="rank the original option order among all orders")
    parser.add_argument("--question-template", default="{question}", help="prompt layout of the question")
    parser.add_argument("--option-template", default="{letter}. {text}", help="prompt layout of one option")
    parser.add_argument("--trust-remote-code", action="store_true", help="allow custom model code from the hub")
    parser.add_argument("--save", action="store_true", help="keep the run in the results store ($LEAKLENS_STORE)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.mcq.completion import MCQConfig
    from core.data.questions import load_mcq, write_jsonl
    from core.mcq.study import run_benchmark
    from core.engine.models import load_model
    from core.engine.progress import tqdm_progress

    columns = MCQColumns(
        question=args.question_col,
        options=tuple(c.strip() for c in args.option_cols.split(",") if c.strip()),
        answer=args.answer_col or None,
    )
    layout = PromptLayout(question_template=args.question_template, option_template=args.option_template)
    config = MCQConfig(layout=layout, cut=args.cut, metric=args.similarity, threshold=args.threshold)
    dataset = load_mcq(args.dataset, split=args.split, config=args.config, limit=args.limit, columns=columns)
    if dataset.skipped:
        print(f"warning: {dataset.skipped_summary()}", file=sys.stderr)
    lm = load_model(args.model, trust_remote_code=args.trust_remote_code)
    started = time.perf_counter()
    with tqdm_progress("mcq probes", unit="probe") as progress:
        report = run_benchmark(
            lm,
            dataset.questions,
            config,
            shuffle_seed=args.shuffle_seed,
            permutation=args.permutation_test,
            progress=progress,
        )
    elapsed = time.perf_counter() - started
    if args.export_shuffled:
        write_jsonl(report.shuffled_questions, args.export_shuffled)
    payload = report.to_dict(model=lm.spec, benchmark=dataset.source)
    payload["seconds"] = round(elapsed, 2)
    if args.save:
        from core.mcq.stored import save_report
        from core.store.results import ResultStore

        payload["run_id"] = save_report(ResultStore(), report, model=lm.spec, benchmark=dataset.source).run_id
    if args.json:
        json.dump(payload, sys.stdout, indent=2, ensure_ascii=False)
        print()
        return 0
    _print(payload, lm.describe())
    return 0


def _print(payload: dict, model_line: str) -> None:
    print(f"model: {model_line}")
    print(f"questions: {payload['n']}   ({payload['seconds']} s)")
    print(f"{'':<12}{'probe':<12}{'score distribution 0..n':<32}{'mean':>6}")
    for which in ("original", "shuffled"):
        for kind in ("next_token", "completion"):
            block = payload[which][kind]
            print(f"{which:<12}{kind:<12}{str(block['distribution']):<32}{block['mean']:>6.3f}")
    print(f"mitigation (drop in mean): next-token {payload['mitigation']['next_token']:+.3f}, "
          f"completion {payload['mitigation']['completion']:+.3f}")
    perm = payload.get("permutation")
    if perm:
        print(
            f"order test: mean percentile {perm['mean_percentile']:.3f} (0.5 = no preference, p={perm['p_value_percentile']:.3g}); "
            f"original order most likely for {perm['top1_fraction']:.1%} (chance {1 / perm['n_orders']:.1%}, p={perm['p_value_top1']:.3g})"
        )
