"""MCQ runs in the results store: per-question scores and the summary round-trip."""

from __future__ import annotations

from pathlib import Path

from core.data.questions import load_mcq
from core.mcq.stored import KIND, benchmark_fingerprint, run_stored_benchmark
from core.mcq.study import run_benchmark
from core.store.results import ResultStore

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def test_save_report_round_trip(tiny_lm, tmp_path):
    from core.mcq.completion import MCQConfig

    questions = load_mcq(str(DATA / "mmlu_sample.jsonl"), limit=2).questions
    store = ResultStore(tmp_path / "results.sqlite")
    common = dict(load=lambda: tiny_lm, store=store, model="tiny-random", benchmark="mmlu_sample", shuffle_seed=2)
    report, run, _ = run_stored_benchmark(questions, MCQConfig(), **common)
    assert run.finished and run.kind == KIND and run.n_done == 2
    expected = list(report.original.summary("completion").distribution)
    assert run.summary["original"]["completion"]["distribution"] == expected
    assert run.summary["permutation"] is None and "questions" not in run.summary
    samples = {s.sample_id: s for s in store.load_samples(run.run_id)}
    for result, shuffled in zip(report.original.results, report.shuffled.results):
        stored = samples[str(result.question.index)]
        assert stored.scores["next_token"] == result.score("next_token")
        assert stored.scores["completion_shuffled"] == shuffled.score("completion")
    # Running the same study again returns the finished run; another benchmark is another run.
    assert run_stored_benchmark(questions, MCQConfig(), **common)[1].run_id == run.run_id
    assert benchmark_fingerprint(questions) != benchmark_fingerprint(questions[:1])
    assert [r.run_id for r in store.list_runs(KIND)] == [run.run_id]


def test_interrupted_mcq_run_resumes_and_matches_the_in_memory_study(tiny_lm, tmp_path):
    from core.mcq.completion import MCQConfig

    questions = load_mcq(str(DATA / "mmlu_sample.jsonl"), limit=5).questions
    config = MCQConfig()
    store = ResultStore(tmp_path / "results.sqlite")
    expected = run_benchmark(tiny_lm, questions, config, shuffle_seed=1, permutation=True)

    class Stop(Exception):
        pass

    def stop_after_first_batch(done, total):
        if 0 < done < total:
            raise Stop

    common = dict(store=store, model="tiny-random", benchmark="mmlu", shuffle_seed=1, permutation=True, batch_size=2)
    try:
        run_stored_benchmark(questions, config, load=lambda: tiny_lm, progress=stop_after_first_batch, **common)
    except Stop:
        pass
    (interrupted,) = store.list_runs(KIND)
    assert not interrupted.finished and interrupted.n_done == 2

    report, run, n_computed = run_stored_benchmark(questions, config, load=lambda: tiny_lm, **common)
    assert run.finished and n_computed == 3  # only the questions the interrupted run had not stored
    assert report.to_dict(model="m", benchmark="b") == expected.to_dict(model="m", benchmark="b")

    def no_model():
        raise AssertionError("a finished MCQ run must be rebuilt without loading the model")

    again, _, n_again = run_stored_benchmark(questions, config, load=no_model, **common)
    assert n_again == 0 and again.to_dict(model="m", benchmark="b") == expected.to_dict(model="m", benchmark="b")
