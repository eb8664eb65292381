"""AppTest of the Membership benchmark page: a real run on the tiny model into a temporary store."""

from __future__ import annotations

import html
import json
import shlex

import pytest

from core.cli import main
from core.config import PROJECT_ROOT
from core.membership.benchmark import KIND
from core.store.results import ResultStore
from tests.ui.helpers import computed_for, stale_notes
from ui.freshness import STALE_HEADLINE

PAGE = "2_Membership_benchmark.py"


def test_run_on_ready_example_shows_table_and_stores_run(store_path, open_page):
    app = open_page(PAGE)
    assert app.radio(key="mb_source").value == "Ready example"
    assert "WikiMIA" in app.selectbox(key="mb_example").value
    app.number_input(key="mb_limit").set_value(12).run()
    app.multiselect(key="mb_methods").set_value(["loss", "zlib"]).run()
    assert any("Model: **tiny-random**" in c.value for c in app.caption)  # the sidebar's model, no list of its own
    assert any("12 texts" in c.value for c in app.caption)
    app.button(key="mb_run").click().run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]

    (run,) = ResultStore(store_path).list_runs(KIND)
    assert run.finished
    assert run.n_done == 12
    assert run.model == "tiny-random"
    assert run.dataset == "wikimia_length128.parquet"
    table = app.dataframe[0].value
    assert list(table["key"]) == ["loss", "zlib", "blind_baseline", "ensemble"]
    assert table["AUROC"].iloc[0] == pytest.approx(run.summary["methods"]["loss"]["auroc"])
    assert table["CI low"].iloc[2] == pytest.approx(run.summary["blind_baseline"]["ci"][0])
    assert any("Blind baseline AUROC" in m.value for m in [*app.info, *app.warning])
    assert len(app.get("plotly_chart")) == 3  # bars, ROC, distribution
    assert any("12 texts scored" in c.value for c in app.caption)

    app.button(key="mb_run").click().run()  # the same run again: read from the store
    assert not app.exception
    assert any("read from the store" in c.value for c in app.caption)
    assert len(ResultStore(store_path).list_runs(KIND)) == 1


def test_missing_file_and_bad_column_give_clear_errors(store_path, open_page):
    app = open_page(PAGE)
    app.radio(key="mb_source").set_value("Local path").run()
    app.text_input(key="mb_path").set_value("/nowhere/data.csv").run()
    assert not app.exception
    assert any("File not found" in e.value for e in app.error)

    app.radio(key="mb_source").set_value("Ready example").run()
    app.text_input(key="mb_text_col").set_value("no_such_column").run()
    assert not app.exception
    assert any("no_such_column" in e.value and "Columns found" in e.value for e in app.error)
    app.button(key="mb_run").click().run()
    assert not app.exception
    assert ResultStore(store_path).list_runs() == []


def test_demo_is_offered_and_extra_methods_show_the_passes_they_cost(store_path, open_page):
    from core.methods import parse_methods
    from core.methods.auxiliary import auxiliary_cost

    app = open_page(PAGE)
    assert "Famous vs fresh passages (demo)" in app.selectbox(key="mb_example").options
    options = app.multiselect(key="mb_methods").options
    neighbours = auxiliary_cost(parse_methods(["neighbourhood"]))
    assert neighbours > 1
    assert f"Neighbourhood comparison (reworded neighbours; +{neighbours} passes per text)" in options
    assert "ReCaLL (non-member prefix; +1 pass per text)" in options
    assert "Reference model (needs a second model; +1 pass per text)" in options


def test_start_token_option_keys_a_separate_run(store_path, open_page):
    app = open_page(PAGE)
    start = app.sidebar.text_input(key="leaklens_start_token")
    assert start.value == ""
    assert "<|endoftext|>" in start.placeholder  # the rule's choice, shown
    app.number_input(key="mb_limit").set_value(8).run()
    app.multiselect(key="mb_methods").set_value(["loss"]).run()
    app.button(key="mb_run").click().run()
    start.set_value("<|im_start|>").run()
    app.button(key="mb_run").click().run()
    assert not app.exception, app.exception
    runs = ResultStore(store_path).list_runs(KIND)
    assert len(runs) == 2  # another start token is another run, never the stored one read back
    assert {r.key["start_token"] for r in runs} == {"<|endoftext|>", "<|im_start|>"}


def test_result_leads_with_the_verdict_banner(store_path, open_page):
    from core.membership.benchmark import result_from_store
    from core.membership.finding import membership_finding

    app = open_page(PAGE)
    app.number_input(key="mb_limit").set_value(12).run()
    app.multiselect(key="mb_methods").set_value(["loss"]).run()
    app.button(key="mb_run").click().run()
    assert not app.exception, app.exception
    (run,) = ResultStore(store_path).list_runs(KIND)
    finding = membership_finding(result_from_store(ResultStore(store_path), run))
    banners = [m.value for m in app.markdown if 'class="leaklens-finding"' in m.value]
    assert len(banners) == 1
    assert f'data-level="{finding.level}"' in banners[0]
    # On a random model and 12 texts nothing can be concluded: the banner must not claim evidence.
    assert finding.level in ("inconclusive", "none", "confounded")


def test_results_name_their_inputs_and_are_marked_out_of_date_when_settings_change(store_path, open_page):
    app = open_page(PAGE)
    app.number_input(key="mb_limit").set_value(8).run()
    app.multiselect(key="mb_methods").set_value(["loss"]).run()
    app.button(key="mb_run").click().run()
    assert not app.exception, app.exception
    caption = computed_for(app)
    assert "sample size `8`" in caption
    assert "methods `loss`" in caption
    assert "model `tiny-random`" in caption
    assert "dataset `" in caption
    assert "wikimia_length128.parquet`" in caption  # a path keeps its tail
    assert stale_notes(app) == []
    # The sample size back at its default (as after visiting another page) while results for 8 are shown.
    app.number_input(key="mb_limit").set_value(100).run()
    (note,) = stale_notes(app)
    assert note.startswith(
        f"**{STALE_HEADLINE}** The sample size changed since they were computed; press **Run benchmark**"
    )
    assert "- sample size: `8` → now `100`" in note
    assert app.dataframe  # still there, marked
    app.multiselect(key="mb_methods").set_value(["loss", "zlib"]).run()
    (note,) = stale_notes(app)
    assert note.startswith(f"**{STALE_HEADLINE}** The sample size and the methods changed since")
    app.number_input(key="mb_limit").set_value(8).run()
    app.multiselect(key="mb_methods").set_value(["loss"]).run()
    assert stale_notes(app) == []  # the inputs the results were computed for again: current
    app.sidebar.text_input(key="leaklens_start_token").input("<|im_start|>").run()
    (note,) = stale_notes(app)
    assert "start token: `automatic` → now `<|im_start|>`" in note


def test_cancel_keeps_stored_texts_says_so_and_run_again_resumes(store_path, open_page, monkeypatch):
    """A run stopped by Streamlit midway (what Cancel does) leaves a plain note; running again scores the rest."""
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException

    import ui.common

    real_progress = ui.common.streamlit_progress
    updates: list[tuple[int, int]] = []

    def stopping_progress(label):
        update = real_progress(label)

        def cancel_after_four(done, total):
            updates.append((done, total))
            update(done, total)  # Streamlit stops a script at its next call: this update, after a stored batch
            if done >= 4:
                raise StopException()

        return cancel_after_four

    app = open_page(PAGE)
    app.number_input(key="mb_limit").set_value(12).run()
    app.multiselect(key="mb_methods").set_value(["loss", "zlib"]).run()
    monkeypatch.setattr(ui.common, "streamlit_progress", stopping_progress)
    app.button(key="mb_run").click().run()
    assert not app.exception, app.exception
    assert updates == [(0, 12), (1, 12), (2, 12), (3, 12), (4, 12)]  # the bar moves per text
    assert any(b.label == "Cancel" for b in app.button)  # shown while the run went
    (run,) = ResultStore(store_path).list_runs(KIND)
    assert run.status == "interrupted"
    assert run.n_done == 4

    monkeypatch.setattr(ui.common, "streamlit_progress", real_progress)
    app.run()  # the rerun Streamlit makes after the click that stopped it
    assert not app.exception, app.exception
    notes = [w.value for w in app.warning if w.value.startswith("Cancelled")]
    assert notes
    assert notes[0].startswith("Cancelled after 4 of 12 texts; run again to continue where it stopped.")
    assert "Results page" in notes[0]
    assert run.run_id not in notes[0]  # no run ids in the main view
    assert not app.dataframe  # no result pretends the run finished
    app.multiselect(key="mb_methods").set_value(["loss", "zlib"]).run()  # other clicks keep the note
    assert any(w.value.startswith("Cancelled after 4 of 12") for w in app.warning)

    app.button(key="mb_run").click().run()
    assert not app.exception, app.exception
    assert not any(w.value.startswith("Cancelled") for w in app.warning)
    assert any("8 texts scored" in c.value for c in app.caption)  # only the rest was scored
    (run,) = ResultStore(store_path).list_runs(KIND)
    assert run.finished
    assert run.n_done == 12
    assert not any(b.label == "Cancel" for b in app.button)


def test_the_page_and_the_readme_command_ask_one_question_and_get_one_answer(store_path, open_page, tmp_path):
    """README tour step 2's ``mia`` command and the page's defaults on the same demo are one stored run: the same
    texts, detectors and model, so the same verdict (and the second of them is read from the store)."""
    line = next(
        line for line in (PROJECT_ROOT / "README.md").read_text().splitlines() if " core mia --dataset demo:" in line
    )
    argv = shlex.split(line.split(" -m core ", 1)[1])
    argv[argv.index("--model") + 1] = "tiny-random"
    argv[argv.index("--out") + 1] = str(tmp_path / "r.json")
    assert main([*argv, "--store", str(store_path)]) == 0

    app = open_page(PAGE)
    app.selectbox(key="mb_example").set_value("Famous vs fresh passages (demo)").run()
    app.button(key="mb_run").click().run()
    assert not app.exception, app.exception
    assert any("read from the store" in c.value for c in app.caption)  # the CLI's run, not a second one
    assert len(ResultStore(store_path).list_runs(KIND)) == 1
    headline = json.loads((tmp_path / "r.json").read_text())["finding"]["headline"]
    assert any(html.escape(headline) in m.value for m in app.markdown), headline
