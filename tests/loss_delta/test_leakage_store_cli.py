"""Loss-delta runs in the results store, and the ``python -m core delta`` command."""

from __future__ import annotations

import json

import pytest

from core.cli import main
from core.data.problems import ProblemSet, builtin_problems
from core.engine.handle import resolve_model
from core.loss_delta.delta import ModelRequest
from core.loss_delta.losses import solution_losses
from core.loss_delta.run import run_leakage_test
from core.loss_delta.stored import KIND, LOSS_KEY, problem_run_key, stored_set_losses
from core.store.results import ResultStore, SampleRow


def _write_reference(path, problems) -> None:
    with path.open("w") as handle:
        for i, p in enumerate(problems):
            handle.write(json.dumps({"qid": f"mine/{i}", "question": p.prompt, "answer": p.solution}) + "\n")


def test_losses_are_stored_resumed_and_reused(tiny_lm, tmp_path):
    store = ResultStore(tmp_path / "results.sqlite")
    problems = builtin_problems(limit=5)
    direct = solution_losses(tiny_lm, problems.problems)
    # An interrupted earlier run stored the first two problems only.
    run = store.get_or_create_run(KIND, problem_run_key(resolve_model("tiny-random"), problems))
    store.add_samples(
        run.run_id, [SampleRow(x.task_id, None, {LOSS_KEY: x.loss}, {"n_tokens": x.n_tokens}) for x in direct[:2]]
    )
    loads: list[int] = []

    def get_model():
        loads.append(1)
        return tiny_lm

    progress: list[tuple[int, int]] = []
    resumed = stored_set_losses(
        resolve_model("tiny-random", loader=lambda _: get_model()),
        problems,
        role="test",
        store=store,
        batch_size=2,
        progress=lambda d, t: progress.append((d, t)),
    )
    assert [x.task_id for x in resumed] == problems.ids
    for got, want in zip(resumed, direct):
        assert got.loss == pytest.approx(want.loss, abs=1e-5)
        assert got.n_tokens == want.n_tokens
    assert progress == [(4, 5), (5, 5)]  # only the three missing problems were scored, in two batches
    (info,) = store.list_runs(KIND)
    assert info.finished
    assert info.n_done == 5

    def no_model():
        raise AssertionError("a finished run must be read back without loading the model")

    again = stored_set_losses(
        resolve_model("tiny-random", loader=lambda _: no_model()), problems, role="test", store=store
    )
    assert again == resumed


def test_run_with_store_scores_a_shared_base_once(tiny_lm, tmp_path):
    store = ResultStore(tmp_path / "results.sqlite")
    test = builtin_problems(limit=2)
    ref = ProblemSet("ref", builtin_problems(limit=4).problems[2:], True)
    loads: list[str] = []

    def load(spec):
        loads.append(spec)
        return tiny_lm

    first = run_leakage_test(
        test, ref, [ModelRequest("m1", "base")], model=resolve_model("m1", loader=load), store=store
    )
    second = run_leakage_test(
        test, ref, [ModelRequest("m2", "base"), ModelRequest("m1")], model=resolve_model("m2", loader=load), store=store
    )
    assert loads == ["m1", "base", "m2"]
    assert len(store.list_runs(KIND)) == 6  # three models x two problem sets
    assert second.models[1].stats == first.models[0].stats


def test_cli_delta_json(tmp_path, capsys):
    reference = tmp_path / "reference.jsonl"
    _write_reference(reference, builtin_problems().problems[10:14])
    store = tmp_path / "results.sqlite"
    code = main(
        [
            "delta",
            "--test",
            "builtin",
            "--reference",
            str(reference),
            "--id-column",
            "qid",
            "--model",
            "tiny-random",
            "--base-model",
            "tiny-random",
            "--limit",
            "4",
            "--store",
            str(store),
            "--json",
        ]
    )
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    (row,) = payload["models"]
    assert row["model"] == "tiny-random"
    assert row["base_model"] == "tiny-random"
    assert row["l_test"] > 0
    assert row["l_ref"] > 0
    assert row["delta"] == pytest.approx(row["l_test"] - row["l_ref"])
    assert row["delta_ci"][0] <= row["delta"] <= row["delta_ci"][1]
    assert row["delta2"] == pytest.approx(0.0)
    assert row["test"] == "mann-whitney u"
    assert payload["paired"] is False
    expected = {f"LeakLens/{i}" for i in range(4)} | {f"mine/{i}" for i in range(4)}
    assert {p["task_id"] for p in payload["problems"]} == expected
    assert isinstance(payload["flagged_reference"], list)
    assert len(ResultStore(store).list_runs(KIND)) == 2


def test_cli_delta_table_and_errors(tmp_path, capsys):
    code = main(
        ["delta", "--test", "builtin", "--reference", "builtin", "--model", "tiny-random", "--limit", "3", "--no-store"]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "paired by task id" in out
    assert "wilcoxon" in out
    assert "tiny-random" in out
    code = main(["delta", "--model", "a", "--model", "b", "--base-model", "c", "--no-store", "--limit", "1"])
    assert code == 2
    assert "one --base-model per --model" in capsys.readouterr().err
    code = main(["delta", "--reference", str(tmp_path / "missing.jsonl"), "--model", "tiny-random", "--no-store"])
    assert code == 2
    assert "File not found" in capsys.readouterr().err
