"""MCQ memorisation runs in the shared results store (kind ``mcq``), one run per model, benchmark
fingerprint and probe settings, so the Results page lists them beside the other tests.

Runs go through the one resumable run loop: questions are probed a batch at a time and each question's
full outcome (every probe's continuation, the shuffled probes, the order scores) is stored as it is
measured, so an interrupted run resumes and a finished one is rebuilt without loading the model.
Each question's full text, options and answer are stored with it, so a finished run also opens from
the store alone (``mcq_report_from_run``: Results page, ``python -m core report``), without the file.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from core.data.fingerprint import fingerprint_rows
from core.data.questions import MCQuestion, PromptLayout
from core.engine.handle import ModelHandle
from core.engine.model_source import ScoringModel
from core.engine.progress import ProgressCallback
from core.errors import LeakLensError
from core.mcq.completion import MCQConfig, ProbeResult, QuestionResult
from core.mcq.permutation import QuestionOrders
from core.mcq.probes import Probe
from core.mcq.shuffle import shuffle_questions
from core.mcq.study import MCQReport, QuestionOutcome, assemble_report, probe_questions
from core.store.results import ResultStore, RunInfo, SampleRow
from core.store.runloop import RunRequest
from core.store.stored_run import finished_run, run_meta, run_stored

KIND = "mcq"
DEFAULT_BATCH_SIZE = 16
"""Questions per stored batch. The probes of a batch share their passes and decoding steps, so larger
batches run faster (docs/benchmarks.md, MCQ probe speed); 16 keeps what an interruption loses, and the
wait between progress updates, to seconds."""
SAMPLE_FORMAT = 2
"""Version of what each stored question holds; 2 added the full question, its options and answer. It is
part of the run key, so a run stored before it is never reused: running the test again stores a complete one."""


def benchmark_fingerprint(questions: Sequence[MCQuestion]) -> str:
    """Fingerprint over questions, options and answers in order: a file and its upload match."""
    rows = ((q.question, json.dumps(list(q.options), ensure_ascii=False), q.answer or "") for q in questions)
    return fingerprint_rows(rows)


def mcq_run_key(
    model: ModelHandle,
    questions: Sequence[MCQuestion],
    config: MCQConfig,
    *,
    shuffle_seed: int,
    permutation: bool,
) -> dict[str, Any]:
    """What identifies an MCQ run: model weights and start token, benchmark content, every probe setting."""
    return {
        **model.key,
        "benchmark": benchmark_fingerprint(questions),
        "cut": config.cut,
        "metric": config.metric,
        "threshold": config.threshold,
        "layout": [config.layout.question_template, config.layout.option_template, config.layout.separator],
        "shuffle_seed": shuffle_seed,
        "permutation": permutation,
        "sample_format": SAMPLE_FORMAT,
    }


def run_stored_benchmark(
    questions: Sequence[MCQuestion],
    config: MCQConfig,
    *,
    model: ModelHandle,
    store: ResultStore,
    benchmark: str,
    shuffle_seed: int = 0,
    permutation: bool = False,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: ProgressCallback | None = None,
    provenance: Mapping[str, Any] | None = None,
) -> tuple[MCQReport, RunInfo, int]:
    """The study through the store: (report, finished run, questions measured by this call).

    The model is loaded only when questions are left to measure; ``progress`` counts questions.
    """
    shuffled = shuffle_questions(questions, shuffle_seed)
    key = mcq_run_key(model, questions, config, shuffle_seed=shuffle_seed, permutation=permutation)
    meta = run_meta(
        dataset=benchmark, model=model.spec, n_total=len(questions), task="mcq-memorization", provenance=provenance
    )
    order = longest_options_first(questions)

    def score(lm: ScoringModel, positions: list[int]) -> list[SampleRow]:
        chosen = sorted(order[p] for p in positions)  # stored in the benchmark's order within a batch
        batch = [questions[i] for i in chosen]
        outcomes = probe_questions(lm, batch, [shuffled[i] for i in chosen], config, permutation=permutation)
        return [_outcome_row(o) for o in outcomes]

    def summarise(samples: list[SampleRow]) -> dict[str, Any]:
        report = _report_from_samples(questions, shuffled, samples, config, shuffle_seed)
        payload = report.to_dict(model=model.spec, benchmark=benchmark)
        payload.pop("questions")
        return payload

    ids = [str(questions[i].index) for i in order]
    outcome = run_stored(
        store,
        RunRequest(KIND, key, meta, model.setup.to_dict()),
        ids,
        load=model.load,
        score=score,
        summarise=summarise,
        batch_size=batch_size,
        progress=progress,
    )
    report = _report_from_samples(questions, shuffled, outcome.samples, config, shuffle_seed)
    return report, outcome.run, outcome.n_computed


def longest_options_first(questions: Sequence[MCQuestion]) -> list[int]:
    """Question positions by their longest option, longest first (ties in the benchmark's order).

    A batch decodes until its longest continuation is done, a step for every token, and a step costs
    about the same for one row as for many: batches of long options together and of short ones together
    finish sooner than batches that each wait on a few long options (docs/benchmarks.md, MCQ probe speed)."""
    return sorted(range(len(questions)), key=lambda i: -max((len(o) for o in questions[i].options), default=0))


def _outcome_row(outcome: QuestionOutcome) -> SampleRow:
    question = outcome.original.question
    scores: dict[str, float | None] = {}  # SampleRow's type
    for kind in ("next_token", "completion", "similar"):
        scores[kind] = float(outcome.original.score(kind))
        scores[f"{kind}_shuffled"] = float(outcome.shuffled.score(kind))
    if outcome.orders is not None:
        scores["order_percentile"] = float(outcome.orders.percentile)
    summary = {
        "question": question.question[:200],
        "answer": question.answer,
        "question_text": question.question,
        "options": list(question.options),
        "original": [_probe_json(p) for p in outcome.original.probes],
        "shuffled": [_probe_json(p) for p in outcome.shuffled.probes],
        "orders": None if outcome.orders is None else list(outcome.orders.logprobs),
    }
    return SampleRow(sample_id=str(question.index), label=None, scores=scores, summary=summary)


def _probe_json(result: ProbeResult) -> dict[str, Any]:
    return dataclasses.asdict(result)


def _probe_from_json(data: Mapping[str, Any]) -> ProbeResult:
    probe = dict(data["probe"])
    probe["context_ids"] = tuple(probe["context_ids"])
    fields = {k: v for k, v in data.items() if k != "probe"}
    return ProbeResult(probe=Probe(**probe), **fields)


def _report_from_samples(
    questions: Sequence[MCQuestion],
    shuffled: Sequence[MCQuestion],
    samples: Sequence[SampleRow],
    config: MCQConfig,
    shuffle_seed: int,
) -> MCQReport:
    by_id = {s.sample_id: s for s in samples}
    outcomes = []
    for question, shuffled_question in zip(questions, shuffled, strict=True):
        stored = by_id[str(question.index)].summary
        orders = stored.get("orders")
        outcomes.append(
            QuestionOutcome(
                original=QuestionResult(question, tuple(_probe_from_json(p) for p in stored["original"])),
                shuffled=QuestionResult(shuffled_question, tuple(_probe_from_json(p) for p in stored["shuffled"])),
                orders=None if orders is None else QuestionOrders(index=question.index, logprobs=tuple(orders)),
            )
        )
    return assemble_report(questions, shuffled, outcomes, config, shuffle_seed=shuffle_seed)


def mcq_report_from_run(store: ResultStore, run: RunInfo) -> MCQReport:
    """Rebuild a finished MCQ run's report from the store alone: no model, no benchmark file.

    The questions, probe settings and shuffle seed come from the run's key and its stored questions, so
    ``report.to_dict(...)`` equals the report of the run that stored it. Model and benchmark names for
    display are ``run.meta["model"]`` and ``run.meta["dataset"]``.
    """
    finished_run(run, KIND, "a multiple-choice (mcq) run")
    samples = store.load_samples(run.run_id)
    if not samples or any("options" not in s.summary or "question_text" not in s.summary for s in samples):
        raise LeakLensError(
            f"The multiple-choice run on {run.dataset or 'its benchmark'} with {run.model or 'its model'} was "
            "stored by an older LeakLens without its questions' options, so it cannot be opened from the store. "
            "Run the multiple-choice test again (same benchmark and model) to store a run that can be opened."
        )
    try:
        key = run.key
        config = MCQConfig(
            layout=PromptLayout(*key["layout"]), cut=key["cut"], metric=key["metric"], threshold=float(key["threshold"])
        )
        seed = int(key["shuffle_seed"])
        samples = sorted(samples, key=lambda s: int(s.sample_id))
        questions = [
            MCQuestion(
                index=int(s.sample_id),
                question=str(s.summary["question_text"]),
                options=tuple(str(o) for o in s.summary["options"]),
                answer=s.summary.get("answer"),
            )
            for s in samples
        ]
    except (KeyError, TypeError, ValueError) as exc:
        raise LeakLensError(
            f"The multiple-choice run {run.run_id} in the store is incomplete ({exc!r}); run the test again."
        ) from exc
    return _report_from_samples(questions, shuffle_questions(questions, seed), samples, config, seed)
