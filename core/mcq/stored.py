"""MCQ memorization runs in the shared results store (kind ``mcq``), one run per model, benchmark
fingerprint and probe settings, so the Results page lists them beside the other tests."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from core.data.questions import MCQuestion
from core.mcq.study import MCQReport
from core.store.results import ResultStore, RunInfo, SampleRow

KIND = "mcq"
SCORE_KEYS = ("next_token", "completion", "similar", "next_token_shuffled", "completion_shuffled",
              "similar_shuffled", "order_percentile")


def benchmark_fingerprint(questions: Sequence[MCQuestion]) -> str:
    """sha256 over questions and options in order: the same benchmark from a file or an upload matches."""
    digest = hashlib.sha256()
    for q in questions:
        digest.update(json.dumps([q.question, list(q.options), q.answer], ensure_ascii=False).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def save_report(store: ResultStore, report: MCQReport, *, model: str, benchmark: str) -> RunInfo:
    """Store a finished report: per-question scores as samples, the JSON summary (without questions)."""
    config = report.original.config
    questions = [r.question for r in report.original.results]
    key = {
        "model": model,
        "benchmark": benchmark_fingerprint(questions),
        "cut": config.cut,
        "metric": config.metric,
        "threshold": config.threshold,
        "layout": [config.layout.question_template, config.layout.option_template, config.layout.separator],
        "shuffle_seed": report.mitigation.seed,
        "permutation": report.permutation is not None,
    }
    meta = {"dataset": benchmark, "model": model, "n_total": len(questions), "task": "mcq-memorization"}
    run = store.get_or_create_run(KIND, key, meta)
    if run.finished:
        return run
    rows = []
    for row in report.question_rows():
        scores = {k: float(row[k]) for k in SCORE_KEYS if k in row}
        rows.append(SampleRow(sample_id=str(row["index"]), label=None, scores=scores,
                              summary={"question": str(row["question"])[:200], "answer": row["answer"]}))
    store.add_samples(run.run_id, rows)
    payload = report.to_dict(model=model, benchmark=benchmark)
    payload.pop("questions")
    return store.finish_run(run.run_id, payload)
