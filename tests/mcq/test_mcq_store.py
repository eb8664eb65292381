"""MCQ runs in the results store: per-question scores and the summary round-trip."""

from __future__ import annotations

from core.config import SHARED_DATA_DIR
from core.data.questions import load_mcq
from core.engine.handle import resolve_model
from core.mcq.stored import KIND, benchmark_fingerprint, run_stored_benchmark
from core.store.results import ResultStore, SampleRow
from tests.helpers.mcq import run_benchmark

DATA = SHARED_DATA_DIR


def test_save_report_round_trip(tiny_lm, tmp_path):
    from core.mcq.completion import MCQConfig

    questions = load_mcq(str(DATA / "mmlu_sample.jsonl"), limit=2).questions
    store = ResultStore(tmp_path / "results.sqlite")
    common = dict(
        model=resolve_model("tiny-random", loader=lambda _: tiny_lm),
        store=store,
        benchmark="mmlu_sample",
        shuffle_seed=2,
    )
    report, run, _ = run_stored_benchmark(questions, MCQConfig(), **common)
    assert run.finished
    assert run.kind == KIND
    assert run.n_done == 2
    expected = list(report.original.summary("completion").distribution)
    assert run.summary["original"]["completion"]["distribution"] == expected
    assert run.summary["permutation"] is None
    assert "questions" not in run.summary
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

    common = dict(store=store, benchmark="mmlu", shuffle_seed=1, permutation=True, batch_size=2)
    try:
        run_stored_benchmark(
            questions,
            config,
            model=resolve_model("tiny-random", loader=lambda _: tiny_lm),
            progress=stop_after_first_batch,
            **common,
        )
    except Stop:
        pass
    (interrupted,) = store.list_runs(KIND)
    assert not interrupted.finished
    assert interrupted.n_done == 2

    report, run, n_computed = run_stored_benchmark(
        questions, config, model=resolve_model("tiny-random", loader=lambda _: tiny_lm), **common
    )
    assert run.finished
    assert n_computed == 3  # only the questions the interrupted run had not stored
    assert report.to_dict(model="m", benchmark="b") == expected.to_dict(model="m", benchmark="b")

    def no_model():
        raise AssertionError("a finished MCQ run must be rebuilt without loading the model")

    again, _, n_again = run_stored_benchmark(
        questions, config, model=resolve_model("tiny-random", loader=lambda _: no_model()), **common
    )
    assert n_again == 0
    assert again.to_dict(model="m", benchmark="b") == expected.to_dict(model="m", benchmark="b")


def test_finished_mcq_run_opens_from_the_store_alone(tiny_lm, tmp_path):
    from core.mcq.completion import MCQConfig
    from core.mcq.stored import mcq_report_from_run

    questions = load_mcq(str(DATA / "mmlu_sample.jsonl"), limit=3).questions
    config = MCQConfig(cut="words", threshold=0.5)
    store = ResultStore(tmp_path / "results.sqlite")
    report, run, _ = run_stored_benchmark(
        questions,
        config,
        model=resolve_model("tiny-random", loader=lambda _: tiny_lm),
        store=store,
        benchmark="mmlu_sample",
        shuffle_seed=3,
        permutation=True,
    )
    sample = store.load_samples(run.run_id)[0].summary
    assert sample["question_text"] == questions[0].question
    assert sample["options"] == list(questions[0].options)
    assert sample["answer"] == questions[0].answer
    assert sample["question"] == questions[0].question[:200]

    # A fresh store object over the same file: no questions, no model, no config passed in.
    rebuilt = mcq_report_from_run(ResultStore(store.path), ResultStore(store.path).get_run(run.run_id))
    assert rebuilt.to_dict(model="m", benchmark="b") == report.to_dict(model="m", benchmark="b")
    assert rebuilt.original.config.cut == "words"
    assert rebuilt.original.config.threshold == 0.5
    assert rebuilt.shuffled_questions == report.shuffled_questions
    assert rebuilt.permutation is not None


def test_mcq_report_from_run_says_what_to_do_with_old_unfinished_or_foreign_runs(tmp_path):
    import pytest

    from core.errors import LeakLensError
    from core.mcq.stored import mcq_report_from_run

    store = ResultStore(tmp_path / "results.sqlite")
    # An MCQ run stored before the questions' options were kept: its samples hold the truncated text only.
    old = store.get_or_create_run(
        KIND, {"benchmark": "f", "cut": "chars"}, {"dataset": "mmlu", "model": "m", "n_total": 1}
    )
    store.add_samples(
        old.run_id,
        [SampleRow("0", None, {"completion": 0.0}, {"question": "Q?", "answer": "A", "original": [], "shuffled": []})],
    )
    old = store.finish_run(old.run_id, {})
    with pytest.raises(LeakLensError, match="older LeakLens.*Run the multiple-choice test again"):
        mcq_report_from_run(store, old)

    unfinished = store.get_or_create_run(KIND, {"other": 1}, {"dataset": "mmlu", "model": "m", "n_total": 2})
    with pytest.raises(LeakLensError, match="not finished.*resume"):
        mcq_report_from_run(store, unfinished)

    membership = store.get_or_create_run("mia", {"x": 1}, {"dataset": "d", "model": "m"})
    with pytest.raises(LeakLensError, match="'mia' run, not a multiple-choice"):
        mcq_report_from_run(store, membership)


def test_stored_runs_probe_batches_of_the_longest_options_first(tiny_lm, tmp_path):
    """Long continuations decode together (a batch waits on its longest): questions are taken longest option
    first, and each batch is stored in the benchmark's order. Longest options of the first five MMLU
    questions: 21, 20, 145, 6 and 2 characters."""
    from core.mcq.completion import MCQConfig
    from core.mcq.stored import longest_options_first

    questions = load_mcq(str(DATA / "mmlu_sample.jsonl"), limit=5).questions
    assert longest_options_first(questions) == [2, 0, 1, 3, 4]
    assert longest_options_first([]) == []
    store = ResultStore(tmp_path / "results.sqlite")
    _, run, _ = run_stored_benchmark(
        questions,
        MCQConfig(),
        model=resolve_model("tiny-random", loader=lambda _: tiny_lm),
        store=store,
        benchmark="mmlu",
        batch_size=2,
    )
    assert [s.sample_id for s in store.load_samples(run.run_id)] == ["0", "2", "1", "3", "4"]
