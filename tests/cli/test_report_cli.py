"""``python -m core report``: the HTML report of stored runs (membership and MCQ), rebuilt from the store alone."""

from __future__ import annotations

import re
from html import escape

import pytest
from plotly.offline import get_plotlyjs

from core.cli import main
from core.config import SHARED_DATA_DIR
from core.data.labelled import load_labelled_dataset
from core.data.questions import load_mcq
from core.engine.handle import resolve_model
from core.mcq.completion import MCQConfig
from core.mcq.finding import mcq_finding
from core.mcq.stored import run_stored_benchmark
from core.membership.benchmark import result_from_store, run_membership_benchmark
from core.membership.finding import membership_finding
from core.methods import parse_methods
from core.results.overview import delta_table, run_table
from core.store.results import ResultStore, SampleRow

DATA = SHARED_DATA_DIR


@pytest.fixture(scope="module")
def stored(tmp_path_factory, tiny_lm):
    """A store with a finished membership run, a finished MCQ run and a model's two loss-delta runs."""
    path = tmp_path_factory.mktemp("report") / "results.sqlite"
    store = ResultStore(path)
    dataset = load_labelled_dataset(str(DATA / "wikimia_length128.parquet"), limit=12)
    membership = run_membership_benchmark(
        dataset, resolve_model("tiny-random", loader=lambda spec: tiny_lm), parse_methods(["loss", "zlib"]), store=store
    )
    questions = load_mcq(str(DATA / "mmlu_sample.jsonl"), limit=3).questions
    mcq, mcq_run, _ = run_stored_benchmark(
        questions,
        MCQConfig(),
        model=resolve_model("tiny-random", loader=lambda _: tiny_lm),
        store=store,
        benchmark="mmlu_sample",
        shuffle_seed=1,
    )
    for name, role, losses in (("HumanEval", "test", [1.0, 2.0]), ("reference", "reference", [3.0, 5.0, 4.0])):
        run = store.get_or_create_run(
            "delta",
            {"model": "tiny-random", "problems": name},
            {"dataset": name, "model": "tiny-random", "role": role, "n_total": len(losses)},
        )
        store.add_samples(run.run_id, [SampleRow(str(i), None, {"solution_loss": x}) for i, x in enumerate(losses)])
        store.finish_run(run.run_id, {"mean_loss": sum(losses) / len(losses), "n": len(losses)})
    return {"path": path, "membership": membership, "mcq": mcq, "mcq_run": mcq_run}


def _report(stored, tmp_path, *ids: str) -> tuple[int, str]:
    out = tmp_path / "sub" / "report.html"
    code = main(["report", *ids, "--out", str(out), "--store", str(stored["path"])])
    return code, out.read_text(encoding="utf-8") if out.exists() else ""


def test_report_of_a_stored_membership_run_and_a_stored_mcq_run(stored, tmp_path, capsys):
    membership_id = stored["membership"].run_id
    code, html = _report(stored, tmp_path, membership_id, stored["mcq_run"].run_id[:10])
    assert code == 0, capsys.readouterr().err
    assert "wrote the report of 2 run(s)" in capsys.readouterr().out
    store = ResultStore(stored["path"])
    body = html[html.index("<body>") :]
    first = re.sub(r"^<body>\s*<h1>[^<]*</h1>\s*", "", body)
    assert first.startswith('<div class="findings">\n<div class="leaklens-finding"'), first[:200]
    headlines = [
        escape(membership_finding(result_from_store(store, store.get_run(membership_id))).headline),
        escape(mcq_finding(stored["mcq"]).headline),
    ]
    positions = [body.index(h) for h in headlines]
    assert positions == sorted(positions)
    assert positions[-1] < body.index('class="plotly-graph-div"')
    assert "<h1>LeakLens report</h1>" in body
    assert "Multiple-choice memorisation · mmlu_sample · tiny-random" in body
    library = get_plotlyjs()
    assert html.count(library[:400]) == 1
    assert html.count(library[-400:]) == 1
    assert body.count('class="plotly-graph-div"') == 2 + 2  # membership: bars + ROC; MCQ: two probes


def test_report_of_an_mcq_run_alone_matches_the_in_memory_section(stored, tmp_path):
    from core.viz.reports.mcq import mcq_section

    code, html = _report(stored, tmp_path, stored["mcq_run"].run_id)
    assert code == 0
    expected = mcq_section(stored["mcq"], model="tiny-random", benchmark="mmlu_sample")
    assert escape(expected.finding.headline) in html
    assert expected.details in html
    assert "AUROC" not in html[html.index("<body>") :]


def test_a_run_named_twice_is_reported_once(stored, tmp_path, capsys):
    """Its id and a prefix of it name one run: one section, not "a report of 2 runs" comparing it with itself."""
    run_id = stored["membership"].run_id
    code, html = _report(stored, tmp_path, run_id, run_id[:10])
    assert code == 0, capsys.readouterr().err
    assert "wrote the report of 1 run(s)" in capsys.readouterr().out
    body = html[html.index("<body>") :]
    assert body.count('<div class="leaklens-finding"') == 1


def test_report_errors_name_the_problem(stored, tmp_path, capsys):
    code, html = _report(stored, tmp_path, "no-such-run")
    err = capsys.readouterr().err
    assert code == 2
    assert not html
    assert err.startswith("error: No stored run with id 'no-such-run'")
    assert "Traceback" not in err

    delta_id = ResultStore(stored["path"]).list_runs("delta")[0].run_id
    code, html = _report(stored, tmp_path, stored["mcq_run"].run_id, delta_id)
    err = capsys.readouterr().err
    assert code == 2
    assert not html
    assert err.startswith("error: ")
    assert "'delta' run" in err
    assert "python -m core delta" in err

    assert main(["report", "x", "--out", str(tmp_path / "r.html"), "--no-store"]) == 2
    assert "drop --no-store" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["report", stored["mcq_run"].run_id])  # --out is required
    capsys.readouterr()


def test_report_help_documents_out_as_html(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["report", "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert "--out FILE.html" in text
    assert "HTML" in text
    assert "--store" in text
    assert "RUN_ID" in text


def test_run_tables_group_a_models_loss_delta_sets(stored):
    runs = ResultStore(stored["path"]).list_runs()
    rows = run_table(runs)
    assert len(rows) == 3
    assert sorted(r["kind"] for r in rows) == ["delta", "mcq", "mia"]
    (delta,) = [r for r in rows if r["kind"] == "delta"]
    assert delta["dataset"] == "HumanEval vs reference"
    assert delta["done"] == 5
    assert delta["status"] == "finished"
    assert delta["test"] == "Loss delta"
    assert all("run id" not in r for r in rows)
    assert delta_table(runs) == [
        {
            "model": "tiny-random",
            "benchmark set": "HumanEval",
            "benchmark mean loss": 1.5,
            "benchmark n": 2,
            "reference set": "reference",
            "reference mean loss": 4.0,
            "reference n": 3,
        }
    ]


def test_report_of_a_stored_benchmark_order_run(tmp_path, capsys):
    """``order-test`` stores its run; ``report RUN_ID`` rebuilds it from the store alone: verdict, chart, shards."""
    from core.benchmark_order.run import KIND, order_test_from_run
    from core.viz.reports.benchmark_order import TITLE as ORDER_TITLE

    path = tmp_path / "results.sqlite"
    common = ["--model", "tiny-random", "--store", str(path)]
    assert main(["order-test", *common, "--dataset", "demo:mcq", "--shards", "8", "--permutations", "250"]) == 0
    capsys.readouterr()
    store = ResultStore(path)
    (run,) = store.list_runs(KIND)
    test = order_test_from_run(store, run)
    out = tmp_path / "order.html"
    assert main(["report", run.run_id[:10], "--out", str(out), "--store", str(path)]) == 0
    assert "wrote the report of 1 run(s)" in capsys.readouterr().out
    html = out.read_text(encoding="utf-8")
    body = html[html.index("<body>") :]
    assert f"<h1>{ORDER_TITLE}</h1>" in body
    assert body.index(escape(test.finding.headline)) < body.index('class="plotly-graph-div"')
    assert body.count('class="plotly-graph-div"') == 1
    assert "Benchmark order · General-knowledge questions (demo) · tiny-random" in body
    assert body.count("<tr>") == 1 + 8  # the shard table
    assert html.count(get_plotlyjs()[:400]) == 1


def test_a_stored_run_reused_under_another_file_name_is_reported_with_that_name(tmp_path, capsys):
    """Copies of one file share one stored run; its report names the copy given too, not only the first file."""
    import shutil

    from core.membership.benchmark import KIND as MEMBERSHIP_KIND

    first, second = tmp_path / "first_name.parquet", tmp_path / "second_name.parquet"
    shutil.copyfile(DATA / "wikimia_length128.parquet", first)
    shutil.copyfile(first, second)
    path = tmp_path / "results.sqlite"
    common = ["--model", "tiny-random", "--store", str(path), "--limit", "6", "--methods", "loss"]
    assert main(["mia", "--dataset", str(first), *common]) == 0
    assert main(["mia", "--dataset", str(second), *common]) == 0
    capsys.readouterr()
    store = ResultStore(path)
    (run,) = store.list_runs(MEMBERSHIP_KIND)
    assert run.dataset == first.name  # the run keeps the name of the call that computed it
    assert run.meta["also_given_as"] == [second.name]
    out = tmp_path / "report.html"
    assert main(["report", run.run_id, "--out", str(out), "--store", str(path)]) == 0
    body = out.read_text(encoding="utf-8").split("<body>", 1)[1]
    assert f"the same rows were also given as {second.name}" in body
