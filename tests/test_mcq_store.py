"""MCQ runs in the results store: per-question scores and the summary round-trip."""

from __future__ import annotations

from pathlib import Path

from core.data.questions import load_mcq
from core.mcq.study import run_benchmark
from core.mcq.stored import KIND, benchmark_fingerprint, save_report
from core.store.results import ResultStore

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def test_save_report_round_trip(tiny_lm, tmp_path):
    questions = load_mcq(str(DATA / "mmlu_sample.jsonl"), limit=2).questions
    report = run_benchmark(tiny_lm, questions, shuffle_seed=2)
    store = ResultStore(tmp_path / "results.sqlite")
    run = save_report(store, report, model="tiny-random", benchmark="mmlu_sample")
    assert run.finished and run.kind == KIND and run.n_done == 2
    assert run.summary["original"]["completion"]["distribution"] == list(report.original.summary("completion").distribution)
    assert run.summary["permutation"] is None and "questions" not in run.summary
    samples = {s.sample_id: s for s in store.load_samples(run.run_id)}
    for result, shuffled in zip(report.original.results, report.shuffled.results):
        stored = samples[str(result.question.index)]
        assert stored.scores["next_token"] == result.score("next_token")
        assert stored.scores["completion_shuffled"] == shuffled.score("completion")
    # Saving the same run again returns the finished run; another benchmark is another run.
    assert save_report(store, report, model="tiny-random", benchmark="mmlu_sample").run_id == run.run_id
    assert benchmark_fingerprint(questions) != benchmark_fingerprint(questions[:1])
    assert [r.run_id for r in store.list_runs(KIND)] == [run.run_id]
