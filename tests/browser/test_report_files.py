"""Each kind of report file opened offline in headless Chromium: charts draw, the verdict is on the first screen.

Screenshots ``report_<kind>_1440x900.png`` (the first screen a reader sees) go to ``test-output/screenshots``.
"""

from __future__ import annotations

import pytest

from core.config import SHARED_DATA_DIR
from core.engine.handle import resolve_model
from tests.viz.test_report_kinds import build_leakage_report, build_overlap_outcome, build_passage_report

pytestmark = pytest.mark.browser
DATA = SHARED_DATA_DIR


def _open_offline(page, path) -> list[str]:
    """Open a report file with every network request refused; returns the page's errors."""
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
    page.goto(path.as_uri())
    page.wait_for_function("() => document.querySelectorAll('.plotly-graph-div .main-svg').length > 0")
    return errors


def _stored_reports(tiny_lm, tmp_path) -> dict[str, str]:
    """Membership, multiple-choice and loss-delta runs stored by real (tiny-model) runs, reported from the store."""
    from core.data.labelled import load_labelled_dataset
    from core.data.problems import ProblemSet, builtin_problems
    from core.data.questions import load_mcq
    from core.data.text_sets import load_text_set
    from core.dataset_inference.run import run_dataset_inference
    from core.loss_delta.delta import ModelRequest
    from core.loss_delta.run import run_leakage_test
    from core.mcq.completion import MCQConfig
    from core.mcq.stored import run_stored_benchmark
    from core.membership.benchmark import run_membership_benchmark
    from core.methods import parse_methods
    from core.results.report import stored_runs_report
    from core.store.results import ResultStore

    store = ResultStore(tmp_path / "results.sqlite")
    dataset = load_labelled_dataset(str(DATA / "wikimia_length128.parquet"), limit=24)
    run_membership_benchmark(
        dataset,
        resolve_model("tiny-random", loader=lambda spec: tiny_lm),
        parse_methods(["loss", "zlib", "min_k"]),
        store=store,
    )
    questions = load_mcq(str(DATA / "mmlu_sample.jsonl"), limit=4).questions
    run_stored_benchmark(
        questions,
        MCQConfig(),
        model=resolve_model("tiny-random", loader=lambda _: tiny_lm),
        store=store,
        benchmark="mmlu_sample.jsonl",
        permutation=True,
    )
    ref = ProblemSet("fresh set", builtin_problems(limit=16).problems[8:], True)
    run_leakage_test(
        builtin_problems(limit=8),
        ref,
        [ModelRequest("tiny-random")],
        model=resolve_model("tiny-random", loader=lambda _: tiny_lm),
        store=store,
    )
    wikimia = str(DATA / "wikimia_length128.parquet")
    run_dataset_inference(
        load_text_set(wikimia, where=("label", "1"), limit=40),
        load_text_set(wikimia, where=("label", "0"), limit=40),
        resolve_model("tiny-random", loader=lambda spec: tiny_lm),
        parse_methods(["loss", "zlib", "min_k"]),
        n_splits=5,
        store=store,
    )
    return {
        kind: stored_runs_report(store, store.list_runs(kind))
        for kind in ("mia", "mcq", "delta-comparison", "dataset-inference")
    }


@pytest.fixture()
def report_files(tiny_lm, tmp_path):
    from core.viz.reports.overlap import overlap_report

    files = {
        "passage": build_passage_report(tiny_lm, tmp_path)[0],
        "delta": build_leakage_report(tiny_lm)[0],
        "overlap": overlap_report(build_overlap_outcome(tmp_path)),
        **{f"stored_{kind}": html for kind, html in _stored_reports(tiny_lm, tmp_path).items()},
    }
    paths = {}
    for kind, html in files.items():
        paths[kind] = tmp_path / f"report_{kind}.html"
        paths[kind].write_text(html, encoding="utf-8")
    return paths


def test_each_report_file_opens_offline_with_its_verdict_first(browser_page, report_files, screenshot_dir):
    page = browser_page
    for kind, path in report_files.items():
        errors = _open_offline(page, path)
        assert not errors, (kind, errors)
        n_divs = page.locator(".plotly-graph-div").count()
        assert page.locator(".plotly-graph-div .main-svg").count() >= n_divs > 0, kind  # every chart drew
        banner = page.locator(".leaklens-finding").first
        box = banner.bounding_box()
        assert box is not None, kind
        assert box["y"] + box["height"] <= 900, kind  # the verdict is on the first screen
        assert page.locator(".leaklens-headline").first.inner_text().strip(), kind
        page.screenshot(path=str(screenshot_dir / f"report_{kind}_1440x900.png"))
