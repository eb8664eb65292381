"""A loss-delta comparison stored whole: reopened and exported without a model; what was dropped is said."""

from __future__ import annotations

import json

from core.cli import main
from core.data.problems import CodeProblem, ProblemSet, builtin_problems, load_problem_set
from core.engine.handle import resolve_model
from core.loss_delta.comparison import COMPARISON_KIND, report_from_comparison
from core.loss_delta.delta import ModelRequest
from core.loss_delta.finding import leakage_finding
from core.loss_delta.run import run_leakage_test
from core.results.report import find_stored_runs, stored_runs_report
from core.store.results import ResultStore


def test_a_stored_comparison_reopens_equal_to_the_run_without_a_model(tiny_lm, tmp_path):
    store = ResultStore(tmp_path / "results.sqlite")
    test = builtin_problems(limit=6)
    ref = ProblemSet("ref", builtin_problems(limit=12).problems[6:], True)
    loads: list[str] = []

    def load(spec):
        loads.append(spec)
        return tiny_lm

    report = run_leakage_test(
        test, ref, [ModelRequest("m1", "base")], model=resolve_model("m1", loader=load), store=store
    )
    (run,) = store.list_runs(COMPARISON_KIND)
    assert run.finished
    assert run.dataset == "LeakLens built-in reference vs ref"
    assert run.model == "m1"
    rebuilt = report_from_comparison(store, run)
    assert rebuilt.to_dict() == report.to_dict()
    assert leakage_finding(rebuilt) == leakage_finding(report)
    # the same comparison again reads every loss back and stores no second comparison
    run_leakage_test(test, ref, [ModelRequest("m1", "base")], model=resolve_model("m1", loader=load), store=store)
    assert loads == ["m1", "base"]
    assert len(store.list_runs(COMPARISON_KIND)) == 1
    # and it is exported from the store alone, opening with its verdict
    html = stored_runs_report(store, find_stored_runs(store, [run.run_id[:10]]))
    assert "Loss delta · LeakLens built-in reference vs ref" in html
    assert leakage_finding(report).headline.split(" (")[0] in html


def test_report_command_exports_a_stored_comparison(tmp_path, capsys):
    store = tmp_path / "results.sqlite"
    assert (
        main(
            [
                "delta",
                "--test",
                "builtin",
                "--reference",
                "builtin",
                "--model",
                "tiny-random",
                "--limit",
                "5",
                "--store",
                str(store),
                "--json",
            ]
        )
        == 0
    )
    capsys.readouterr()
    (run,) = ResultStore(store).list_runs(COMPARISON_KIND)
    out = tmp_path / "delta.html"
    assert main(["report", run.run_id, "--store", str(store), "--out", str(out)]) == 0
    text = out.read_text()
    assert text.count("<script") >= 1
    assert "Loss delta" in text
    assert "finding" in text.lower()


def _write(path, rows) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_dropped_problems_are_said_in_every_output(tiny_lm, tmp_path, capsys):
    """Auto-pairing keeps shared ids only, and rows without a solution are skipped: both are said, with lines."""
    problems = builtin_problems(limit=10).problems
    test_file, ref_file = tmp_path / "test.jsonl", tmp_path / "ref.jsonl"
    test_rows = [{"task_id": p.task_id, "prompt": p.prompt, "solution": p.solution} for p in problems[:5]]
    test_rows.insert(2, {"task_id": "empty", "prompt": "def f():\n", "solution": "   "})
    _write(test_file, test_rows)
    # two ids shared with the test set, three of its own
    ref_rows = [
        {"task_id": p.task_id, "prompt": p.prompt, "solution": p.solution} for p in (*problems[:2], *problems[5:8])
    ]
    _write(ref_file, ref_rows)
    code = main(
        ["delta", "--test", str(test_file), "--reference", str(ref_file), "--model", "tiny-random", "--no-store"]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "Paired by the 2 task id(s) both sets share" in out
    assert "3 benchmark problem(s) (LeakLens/2, LeakLens/3, LeakLens/4)" in out
    assert "3 reference problem(s)" in out
    assert "test.jsonl: 1 row(s) not used (lines 3)" in out  # the third line, not index 2
    assert "missing prompt or solution text" in out
    # too few pairs for the interval to mean anything: inconclusive, whatever it says
    assert "finding (inconclusive): Too few problems to tell" in out
    test = load_problem_set(str(test_file))
    ref = load_problem_set(str(ref_file))
    report = run_leakage_test(
        test, ref, [ModelRequest("m")], model=resolve_model("m", loader=lambda _: tiny_lm), store=None
    )
    payload = report.to_dict()
    assert payload["unmatched_test"] == ["LeakLens/2", "LeakLens/3", "LeakLens/4"]
    assert len(payload["skipped_test"]) == 1
    assert payload["dropped"] == report.dropped_notes()


def test_one_reference_problem_is_inconclusive_not_strong():
    from core.loss_delta.delta import LeakageReport, ModelDelta, delta_stats

    stats = delta_stats([0.2, 0.3, 0.25, 0.1, 0.2, 0.3], [3.0], paired=False)
    assert stats.ci[1] < -2  # the bootstrap alone would call this a huge, certain drop
    report = LeakageReport("bench", "one problem", False, (ModelDelta("m", None, stats),), (), ())
    finding = leakage_finding(report)
    assert finding.level == "inconclusive"
    assert "1 on one side" in finding.headline
    assert any("Only 1 problem on one side" in c for c in finding.caveats)


def test_comparison_of_a_hand_built_set_keeps_problem_text(tiny_lm, tmp_path):
    store = ResultStore(tmp_path / "results.sqlite")
    odd = ProblemSet(
        "odd",
        (CodeProblem("x", "def x():\n", "    return 'é'\n"), CodeProblem("y", "def y():\n", "    return 2\n")),
        False,
    )
    report = run_leakage_test(
        odd, odd, [ModelRequest("m")], model=resolve_model("m", loader=lambda _: tiny_lm), store=store
    )
    (run,) = store.list_runs(COMPARISON_KIND)
    samples = store.load_samples(run.run_id)
    assert [s.summary["solution"] for s in samples[:2]] == ["    return 'é'\n", "    return 2\n"]
    assert report_from_comparison(store, run).to_dict() == report.to_dict()
