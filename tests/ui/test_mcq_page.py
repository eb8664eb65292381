"""AppTest of the MCQ memorisation page: a real run of the tiny model on the bundled samples."""

from __future__ import annotations

import html
import json
import shlex

from core.cli import main
from core.config import PROJECT_ROOT
from core.store.results import ResultStore
from tests.ui.helpers import computed_for, stale_notes
from ui.freshness import STALE_HEADLINE

PAGE = "4_MCQ_memorisation.py"


def test_run_shows_distribution_summary_ranks_and_question_view(store_path, open_page):
    app = open_page(PAGE)
    app.selectbox(key="mcq_example").set_value("MMLU questions (demo)")
    app.number_input(key="mcq_limit").set_value(3)
    app.checkbox(key="mcq_perm").check()
    app.button(key="mcq_run").click().run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Questions"] == "3"
    summary = app.dataframe[0].value
    assert list(summary["probe"]) == ["next_token", "completion"]
    assert "memorisation (single-choice)" in summary.columns
    assert "mitigation" in summary.columns
    questions = app.dataframe[1].value
    assert len(questions) == 3
    assert "order_rank" in questions.columns
    assert len(app.get("plotly_chart")) == 2
    html_blocks = [h.proto.body for h in app.get("html")]
    assert any("Ground truth" in body and "mcq-probe" in body for body in html_blocks)
    assert app.success
    assert "3 questions measured" in app.success[0].value  # stored as it ran
    app.radio(key="mcq_which").set_value("shuffled").run()
    assert not app.exception, app.exception
    app.button(key="mcq_run").click().run()  # the identical run again: read back, nothing recomputed
    assert not app.exception, app.exception
    assert app.success
    assert "Read from the store" in app.success[0].value
    assert app.dataframe[1].value.equals(questions)
    runs = ResultStore(store_path).list_runs("mcq")
    # no run ids or full paths in the main view: the benchmark is named by its file name
    assert runs[0].run_id not in app.success[0].value
    assert "kind mcq" not in app.success[0].value
    assert all("/" not in str(name) for name in app.dataframe[0].value["benchmark"])
    assert len(runs) == 1
    assert runs[0].n_done == 3
    assert runs[0].summary["permutation"]["n_orders"] == 24


def test_chinese_sample_and_bad_path(open_page):
    app = open_page(PAGE)
    app.selectbox(key="mcq_example").set_value("Chinese exam sample (single + multi-choice)")
    app.number_input(key="mcq_limit").set_value(15)
    app.button(key="mcq_run").click().run()
    assert not app.exception, app.exception
    summary = app.dataframe[0].value
    assert summary["memorisation (multi-choice)"].notna().all()
    assert {m.label: m.value for m in app.metric}["Questions"] == "15"
    app.radio(key="mcq_source").set_value("Local path").run()
    app.text_input(key="mcq_path").input("/nonexistent/exam.jsonl")
    app.button(key="mcq_run").click().run()
    assert not app.exception, app.exception
    assert app.error
    assert "exam.jsonl" in app.error[0].value


def test_the_shipped_demo_runs_and_stores(store_path, open_page):
    app = open_page(PAGE)
    assert app.radio(key="mcq_source").value == "Ready example"
    app.selectbox(key="mcq_example").set_value("General-knowledge questions (demo)")
    app.number_input(key="mcq_limit").set_value(2)
    app.button(key="mcq_run").click().run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]
    assert {m.label: m.value for m in app.metric}["Questions"] == "2"
    assert any("benchmark `demo:mcq`" in c.value for c in app.caption)
    (run,) = ResultStore(store_path).list_runs("mcq")
    assert run.finished
    assert run.dataset == "demo:mcq"


def test_committing_a_setting_never_starts_a_run_only_the_run_button_does(store_path, open_page):
    app = open_page(PAGE)
    app.selectbox(key="mcq_example").set_value("General-knowledge questions (demo)").run()
    # What Enter in "Sample size" does in a browser: the value is committed and the page reruns.
    app.number_input(key="mcq_limit").set_value(2).run()
    app.text_input(key="mcq_otemplate").input("{letter}) {text}").run()
    assert not app.exception, app.exception
    assert not app.metric
    assert not app.success
    assert ResultStore(store_path).list_runs("mcq") == []
    app.button(key="mcq_run").click().run()
    assert not app.exception, app.exception
    assert {m.label: m.value for m in app.metric}["Questions"] == "2"
    assert len(ResultStore(store_path).list_runs("mcq")) == 1


def test_changed_settings_mark_the_shown_run_out_of_date(store_path, open_page):
    app = open_page(PAGE)
    app.selectbox(key="mcq_example").set_value("General-knowledge questions (demo)").run()
    app.number_input(key="mcq_limit").set_value(2).run()
    app.button(key="mcq_run").click().run()
    assert not app.exception, app.exception
    caption = computed_for(app)
    assert "sample size `2`" in caption
    assert "model `tiny-random`" in caption
    assert "option-order test `off`" in caption
    app.selectbox(key="mcq_probe").set_value("next_token").run()  # another view of the same measurements
    assert stale_notes(app) == []
    app.number_input(key="mcq_limit").set_value(40).run()
    app.slider(key="mcq_threshold").set_value(0.5).run()
    (note,) = stale_notes(app)
    assert note.startswith(
        f"**{STALE_HEADLINE}** The sample size and the similarity threshold changed since they "
        "were computed; press **Run**"
    ), note
    assert "- sample size: `2` → now `40`" in note
    assert "- similarity threshold: `0.75` → now `0.5`" in note
    assert {m.label: m.value for m in app.metric}["Questions"] == "2"  # the old run, marked, not rerun
    assert len(ResultStore(store_path).list_runs("mcq")) == 1
    labels = [b.proto.label for b in app.get("download_button")]
    assert labels == ["Report (HTML)", "Per-question scores (CSV)", "Shuffled benchmark (JSONL)"]
    app.sidebar.selectbox(key="model_picker").set_value("smollm2-135m").run()  # the one model of every page
    assert "- model: `tiny-random` → now `smollm2-135m`" in stale_notes(app)[0]


def test_the_page_and_the_readme_command_ask_one_question_and_get_one_answer(store_path, open_page, tmp_path):
    """README tour step 4's ``mcq`` command and the page's defaults (the general-knowledge demo, all 24 questions)
    are one stored run, so one verdict: the page reads the command's run back instead of making a second one."""
    line = next(
        line for line in (PROJECT_ROOT / "README.md").read_text().splitlines() if " core mcq --dataset demo:" in line
    )
    argv = shlex.split(line.split(" -m core ", 1)[1])
    out = tmp_path / "mcq.json"
    assert main([*argv, "--model", "tiny-random", "--store", str(store_path), "--out", str(out)]) == 0

    app = open_page(PAGE)
    assert app.selectbox(key="mcq_example").value == "General-knowledge questions (demo)"
    assert app.number_input(key="mcq_limit").value == 300
    app.button(key="mcq_run").click().run()
    assert not app.exception, app.exception
    (run,) = ResultStore(store_path).list_runs("mcq")
    assert run.n_total == 24
    headline = json.loads(out.read_text())["finding"]["headline"]
    assert any(html.escape(headline) in m.value for m in app.markdown), headline
