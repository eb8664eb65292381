"""AppTest of shared presentation links: ``?present=1`` opens a page's most recent stored run, ``&run=RUN_ID`` a
given one, and a page with nothing to show says so in one line (never a blank page)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.data.labelled import load_labelled_dataset
from core.engine.handle import resolve_model
from core.membership.benchmark import run_membership_benchmark
from core.membership.finding import membership_finding
from core.methods import parse_methods
from core.store.results import ResultStore

REPO = Path(__file__).resolve().parents[2]
PAGES = {
    "1_Inspect_a_passage.py": "analyse a passage",
    "2_Membership_benchmark.py": "run the benchmark",
    "3_Loss_delta.py": "run the test",
    "4_MCQ_memorisation.py": "run the test",
    "5_Overlap_search.py": "search an index",
    "6_Dataset_inference.py": "run the test",
    "8_Benchmark_order.py": "run the test",
}


def _open(page: str, **params: str) -> AppTest:
    app = AppTest.from_file(str(REPO / "pages" / page), default_timeout=240)
    for name, value in params.items():
        app.query_params[name] = value
    app.run()
    assert not app.exception, app.exception
    return app


def _markdown(app: AppTest) -> str:
    return "\n".join(m.value for m in app.markdown)


@pytest.fixture()
def stored_membership(store_path, tiny_lm):
    """A finished membership run on 8 texts of the shipped demo, in the pages' store."""
    dataset = load_labelled_dataset("demo:famous-vs-fresh", limit=8)
    result = run_membership_benchmark(
        dataset,
        resolve_model("tiny-random", loader=lambda s: tiny_lm),
        parse_methods(["loss", "zlib"]),
        store=ResultStore(store_path),
    )
    return result


@pytest.mark.parametrize("page", list(PAGES))
def test_a_present_link_to_a_page_with_nothing_stored_says_so_in_one_line(store_path, page):
    app = _open(page, present="1")
    notes = [i.value for i in app.info]  # the first is the result area's; any others sit in Setup, hidden
    assert notes[0].startswith("Nothing to present yet"), notes
    assert sum(n.startswith("Nothing to present") for n in notes) == 1
    assert f"Turn Present off, {PAGES[page]} in Setup, then turn Present on" in notes[0]


def test_a_present_link_opens_the_newest_stored_run_of_its_page(stored_membership):
    app = _open("2_Membership_benchmark.py", present="1")
    assert app.info == [] or all("Nothing to present" not in i.value for i in app.info)
    headline = membership_finding(stored_membership).headline
    assert headline.split(":")[0] in _markdown(app)
    assert len(app.get("plotly_chart")) >= 1
    assert any("the most recent run of this test" in c.value for c in app.caption)


def test_a_link_with_its_run_opens_that_run_on_its_page_and_elsewhere_says_where_it_belongs(stored_membership):
    run_id = stored_membership.run_id
    app = _open("2_Membership_benchmark.py", present="1", run=run_id)
    assert any("opened from a shared link" in c.value for c in app.caption)
    assert membership_finding(stored_membership).headline.split(":")[0] in _markdown(app)

    app = _open("4_MCQ_memorisation.py", present="1", run=run_id)
    note = app.info[0].value
    assert note == f"The linked run {run_id} is a membership benchmark run: open it on the Results page."

    app = _open("7_Results.py", present="1", run=run_id)
    assert any("opened from a shared link" in c.value for c in app.caption)


def test_a_link_to_a_run_no_longer_stored_names_it(store_path):
    app = _open("2_Membership_benchmark.py", present="1", run="0123abcd")
    note = app.info[0].value
    assert note.startswith("The linked run 0123abcd is not stored here: the Results page lists every stored run.")


@pytest.mark.usefixtures("tiny_calibration")
def test_an_inspected_passage_is_stored_and_its_link_opens_it_with_no_model(store_path, tmp_path):
    """An inspection from the command line is kept as a stored run: the Inspect page's present link (with its
    run, or plain: the most recent) opens its verdict and the strip that carries it, from the store alone."""
    import json

    from core.cli import main
    from core.data.examples import GETTYSBURG

    out = tmp_path / "inspect.json"
    args = ["inspect", "--text", GETTYSBURG.text, "--model", "tiny-random", "--store", str(store_path)]
    assert main([*args, "--out", str(out)]) == 0
    headline = json.loads(out.read_text())["finding"]["headline"]
    (run,) = ResultStore(store_path).list_runs("passage")
    assert run.finished and run.dataset == "The Gettysburg Address (example)"
    for params in ({"present": "1", "run": run.run_id}, {"present": "1"}):
        app = _open("1_Inspect_a_passage.py", **params)
        assert all("Nothing to present" not in i.value for i in app.info)
        assert headline.split(":")[0] in _markdown(app)
        (strip,) = app.get("plotly_chart")
        assert "freshly written passages" in strip.proto.spec
    assert main([*args, "--out", str(out)]) == 0  # asked again: the same stored run, not a second one
    assert [r.run_id for r in ResultStore(store_path).list_runs("passage")] == [run.run_id]
