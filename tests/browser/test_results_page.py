"""Real-browser tests of the Results page: it opens on the most recent run with its verdict in view, lists every
finished run once as a verdict card, compares methods in a heatmap, and exports a report that opens offline."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.config import SHARED_DATA_DIR
from core.data.labelled import load_labelled_dataset
from core.data.problems import ProblemSet, builtin_problems
from core.data.text_sets import load_text_set
from core.dataset_inference.run import run_dataset_inference
from core.engine.handle import resolve_model
from core.loss_delta.delta import ModelRequest
from core.loss_delta.run import run_leakage_test
from core.membership.benchmark import run_membership_benchmark
from core.methods import parse_methods
from core.store.results import ResultStore
from tests.browser.helpers import (
    assert_verdict_in_viewport,
    exception_texts,
    full_page_screenshot,
    open_page,
    switch_present,
    visible_inputs,
    wait_for_charts,
    wait_for_streamlit,
)
from tests.browser.server import streamlit_server

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
DATA = SHARED_DATA_DIR
TOUR_DATA = "Famous vs fresh passages (demo)"
CARD = ".leaklens-card"


@pytest.fixture(scope="module")
def results_app_url(tmp_path_factory, tiny_lm) -> Iterator[str]:
    """A server of its own whose store holds two membership runs, a dataset inference (its scores a membership
    run of their own) and, most recent, README tour step 2's run from the command line."""
    from core.cli import main

    store_path = tmp_path_factory.mktemp("browser_results") / "results.sqlite"
    store = ResultStore(store_path)
    methods = parse_methods(["loss", "zlib", "min_k:k=20", "min_k_pp:k=20"])
    for name in ("wikimia_length128.parquet", "booktection_sample.csv"):
        dataset = load_labelled_dataset(str(DATA / name), limit=24)
        run_membership_benchmark(
            dataset, resolve_model("tiny-random", loader=lambda spec: tiny_lm), methods, store=store
        )
    wikimia = str(DATA / "wikimia_length128.parquet")
    run_dataset_inference(
        load_text_set(wikimia, where=("label", "1"), limit=16),
        load_text_set(wikimia, where=("label", "0"), limit=16),
        resolve_model("tiny-random", loader=lambda spec: tiny_lm),
        parse_methods(["loss", "zlib"]),
        n_splits=3,
        store=store,
    )
    time.sleep(0.05)
    assert (
        main(
            [
                "mia",
                "--dataset",
                "demo:famous-vs-fresh",
                "--model",
                "tiny-random",
                "--limit",
                "20",
                "--methods",
                "loss",
                "zlib",
                "min_k",
                "min_k_pp",
                "slope",
                "slope:adjust=mean",
                "slope:adjust=z",
                "--store",
                str(store_path),
            ]
        )
        == 0
    )  # README tour step 2's command (one pass per text)
    with streamlit_server(tmp_path_factory.mktemp("browser_results_log"), LEAKLENS_STORE=str(store_path)) as url:
        yield url


def test_tour_step_opens_on_the_most_recent_run_with_its_verdict_in_view(results_app_url, browser_page, screenshot_dir):
    """README tour step 7 ("every stored run, from the dashboard or the command line"): the page opens on the run
    just made from the command line with its verdict on the first screen, at 1440x900 and 1280x720; every
    finished run is one card (the dataset inference's scores are not a second one); Present mode shows no input."""
    page = browser_page
    for width, height in ((1280, 720), (1440, 900)):
        page.set_viewport_size({"width": width, "height": height})
        open_page(page, f"{results_app_url}/Results")
        assert exception_texts(page) == []
        box = assert_verdict_in_viewport(page)
        assert box["height"] == height
        heading = page.locator('[data-testid="stHeading"]').filter(has_text=TOUR_DATA).first
        assert heading.is_visible()
        assert heading.bounding_box()["y"] < box["top"]
        page.screenshot(path=str(screenshot_dir / f"results_{width}x{height}.png"))
    cards = page.locator(CARD)
    assert cards.count() == 4  # two membership runs, the dataset inference, the tour's run
    assert "shown above" in cards.first.inner_text()
    assert TOUR_DATA in cards.first.inner_text()
    texts = cards.all_inner_texts()
    assert sum("Dataset inference" in t for t in texts) == 1
    assert sum("Membership benchmark · wikimia" in t for t in texts) == 1
    full_page_screenshot(page, str(screenshot_dir / "results_full_1440.png"))

    switch_present(page, on=True)
    assert "present=1" in page.url
    assert_verdict_in_viewport(page)
    assert visible_inputs(page) == []
    assert page.locator(CARD).count() == 4  # the verdicts stay; the Open buttons, filters and downloads go
    page.screenshot(path=str(screenshot_dir / "results_present_1440x900.png"))


def test_a_card_opens_its_run_and_the_heatmap_labels_sit_above_their_cells(
    results_app_url, browser_page, screenshot_dir
):
    page = browser_page
    open_page(page, f"{results_app_url}/Results")
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot .heatmaplayer').length == 1", timeout=60_000)
    assert exception_texts(page) == []
    body = page.locator('[data-testid="stMain"]').inner_text()
    assert "Compare methods" in body
    assert "All runs" in body
    heatmap = page.locator(".js-plotly-plot").filter(has=page.locator(".heatmaplayer")).first
    heatmap.scroll_into_view_if_needed()
    # Long column names wrap onto a few lines (one tspan each): read each tick's lines joined by spaces.
    ticks = heatmap.evaluate(
        "h => [...h.querySelectorAll('.xtick text')].map(t => t.querySelectorAll('tspan')"
        ".length ? [...t.querySelectorAll('tspan')].map(s => s.textContent).join(' ') "
        ": t.textContent)"
    )
    heatmap_text = " ".join([heatmap.inner_text(), *ticks])
    for name in ("wikimia_length128.parquet", "booktection_sample.csv", TOUR_DATA, "Blind baseline"):
        assert name in heatmap_text
    assert "vs" not in heatmap_text.replace("Famous vs fresh", "")  # the inference's scores are no column
    # column names on top: right under the title, above the first row of cells
    labels_bottom = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('.heatmaplayer')].flatMap(h =>"
        " [...h.closest('.js-plotly-plot').querySelectorAll('.xtick text')])"
        ".map(e => e.getBoundingClientRect().bottom))"
    )
    cells_top = heatmap.locator(".heatmaplayer").bounding_box()["y"]
    assert labels_bottom <= cells_top + 2
    heatmap.screenshot(path=str(screenshot_dir / "results_heatmap.png"))

    card = page.locator('[data-testid="stHorizontalBlock"]').filter(has=page.locator(CARD, has_text="wikimia")).last
    card.get_by_role("button", name="Open").click()
    wait_for_streamlit(page)
    assert exception_texts(page) == []
    assert_verdict_in_viewport(page)  # brought up to the opened run, wherever the list had been scrolled to
    assert "opened from the list below" in page.locator('[data-testid="stMain"]').inner_text()
    page.get_by_text("Tables and further charts").first.click()
    wait_for_streamlit(page)
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot .legendtext').length >= 3", timeout=60_000)
    roc_legends = page.locator(".js-plotly-plot .legendtext").all_text_contents()
    assert any(t.startswith("chance") for t in roc_legends)
    assert any(t.startswith("Blind baseline") for t in roc_legends)
    page.screenshot(path=str(screenshot_dir / "results_opened_1440x900.png"))


@pytest.fixture(scope="module")
def delta_results_url(tmp_path_factory, tiny_lm) -> Iterator[str]:
    """A server whose store holds one loss-delta comparison only."""
    store_path = tmp_path_factory.mktemp("browser_results_delta") / "results.sqlite"
    ref = ProblemSet("fresh set", builtin_problems(limit=20).problems[10:], True)
    run_leakage_test(
        builtin_problems(limit=10),
        ref,
        [ModelRequest("tiny-random")],
        model=resolve_model("tiny-random", loader=lambda _: tiny_lm),
        store=ResultStore(store_path),
    )
    with streamlit_server(tmp_path_factory.mktemp("browser_results_delta_log"), LEAKLENS_STORE=str(store_path)) as url:
        yield url


def test_a_stored_loss_delta_comparison_opens_with_its_verdict(delta_results_url, browser_page, screenshot_dir):
    page = browser_page
    open_page(page, f"{delta_results_url}/Results")
    page.wait_for_selector(".leaklens-finding", timeout=60_000)
    assert exception_texts(page) == []
    assert "LeakLens built-in reference vs fresh set" in page.locator('[data-testid="stMain"]').inner_text()
    assert_verdict_in_viewport(page)  # the verdict on the first screen
    assert page.locator(CARD).count() == 1  # the comparison; its problem-set runs are parts of it
    wait_for_charts(page, 1, timeout_ms=60_000)
    assert "benchmark − reference: " in page.locator(".js-plotly-plot").first.inner_text()
    page.screenshot(path=str(screenshot_dir / "results_loss_delta_1440x900.png"))


_REPORT_LAYOUT_JS = """() => {
  const inside = (box, outer) => box.left >= outer.left - 1 && box.right <= outer.right + 1
                               && box.top >= outer.top - 1 && box.bottom <= outer.bottom + 1;
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  return plots.map(plot => {
    const frame = plot.querySelector('.main-svg').getBoundingClientRect();
    const labels = [...plot.querySelectorAll('.xtick text, .ytick text, .legendtext, .g-gtitle text')];
    const bars = [...plot.querySelectorAll('.bars path')].map(e => getComputedStyle(e).fill);
    return {
      title: (plot.querySelector('.g-gtitle text') || {}).textContent || '',
      clipped: labels.filter(e => !inside(e.getBoundingClientRect(), frame)).map(e => e.textContent),
      lines: [...plot.querySelectorAll('.scatterlayer .trace .js-line')]
        .map(e => [getComputedStyle(e).stroke, getComputedStyle(e).strokeDasharray]),
      bars: [...new Set(bars)],
      heatmap: plot.querySelectorAll('.heatmaplayer image').length,
    };
  });
}"""


def test_exported_report_reads_as_a_report(results_app_url, browser_page, screenshot_dir, tmp_path):
    """The Results page's report of the listed runs, opened offline: every run once, its verdict on top, labels
    inside, colours on every line."""
    page = browser_page
    open_page(page, f"{results_app_url}/Results")
    with page.expect_download(timeout=120_000) as download:
        page.get_by_role("button", name="Report of the 4 listed runs (HTML)").click()
    report = tmp_path / "leaklens_report.html"
    download.value.save_as(report)
    text = report.read_text(encoding="utf-8")
    # four runs, four banners: the dataset inference once, its scores inside it
    assert text.startswith("<!DOCTYPE html>")
    assert text.count('class="leaklens-finding"') == 4

    page.context.set_offline(True)  # a report that needs the network would fail to draw here
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(report.as_uri(), wait_until="load")
    wait_for_charts(page, 5, timeout_ms=60_000)
    page.wait_for_timeout(800)
    assert [url for url in requested if not url.startswith(("file:", "data:", "blob:"))] == []

    # A first-time reader sees what was found before anything else: the verdicts under the title, on screen.
    first = page.locator("body > *").nth(1)
    assert first.get_attribute("class") == "findings"
    banner = page.locator(".leaklens-finding").first
    assert banner.bounding_box()["y"] + banner.bounding_box()["height"] < 400
    assert TOUR_DATA in banner.inner_text()  # the most recent run first, as on the page
    assert banner.locator(".leaklens-headline").inner_text().strip()
    assert sum(h.startswith("Dataset inference") for h in page.locator("h2").all_inner_texts()) == 1

    plots = page.evaluate(_REPORT_LAYOUT_JS)
    assert len(plots) == 1 + 3 * 2 + 3  # the heatmap, bars and ROC per membership run, the inference's three
    assert plots[0]["heatmap"] == 1
    for plot in plots:
        assert plot["clipped"] == [], plot["title"]  # every tick label, legend entry and title inside the chart
    rocs = [p for p in plots if p["title"].startswith("ROC curves")]
    assert len(rocs) == 3
    for roc in rocs:
        curves = [tuple(line) for line in roc["lines"][:-1]]  # the last: the dotted chance diagonal, dark on purpose
        assert len(curves) == len(set(curves)) >= 3, curves  # past the palette, a colour comes back dashed
        assert len({colour for colour, _ in curves}) >= 3
        assert not {"rgb(0, 0, 0)", "rgb(0, 0, 1)"} & {colour for colour, _ in curves}
    bars = [p for p in plots if "AUROC with 95% CI" in p["title"]]
    assert len(bars) == 3
    assert all(len(p["bars"]) >= 2 for p in bars)  # methods blue, baseline grey

    page.screenshot(path=str(screenshot_dir / "report_1440x900.png"))
    page.screenshot(path=str(screenshot_dir / "report_full_1440.png"), full_page=True)


def test_membership_page_runs_and_shows_charts(results_app_url, browser_page, screenshot_dir):
    """Runs after the Results test: a 12-text run on the tiny model from the page lands in the same store."""
    page = browser_page
    open_page(page, f"{results_app_url}/Membership_benchmark")
    assert exception_texts(page) == []
    page.get_by_text("Columns and sample").click()
    limit = page.get_by_label("Sample size (0 = all rows)")
    limit.fill("12")
    limit.press("Enter")
    wait_for_streamlit(page)
    assert "12 texts" in page.locator('[data-testid="stMain"]').inner_text()
    page.get_by_role("button", name="Run benchmark").click()
    wait_for_charts(page, 2, timeout_ms=120_000)
    wait_for_streamlit(page)
    assert exception_texts(page) == []
    body = page.locator('[data-testid="stMain"]').inner_text()
    assert "12 texts scored" in body
    assert "Blind baseline AUROC" in body
    legends = page.locator(".js-plotly-plot .legendtext").all_text_contents()
    assert any(t.startswith("members (n=") for t in legends)  # the score distribution
    assert any(t.startswith("non-members (n=") for t in legends)
    assert any(t.startswith("chance") for t in legends)  # the ROC overlay
    full_page_screenshot(page, str(screenshot_dir / "membership_benchmark_1440.png"))


def test_mcq_report_from_the_store_opens_offline(tiny_lm, browser_page, screenshot_dir, tmp_path):
    """``python -m core report`` on a stored MCQ run, opened from file: verdict on top, the probe charts drawn."""
    from core.cli import main
    from core.data.questions import load_mcq
    from core.mcq.completion import MCQConfig
    from core.mcq.stored import run_stored_benchmark

    store = ResultStore(tmp_path / "results.sqlite")
    questions = load_mcq(str(DATA / "mmlu_sample.jsonl"), limit=4).questions
    _, run, _ = run_stored_benchmark(
        questions,
        MCQConfig(),
        model=resolve_model("tiny-random", loader=lambda _: tiny_lm),
        store=store,
        benchmark="mmlu_sample",
        shuffle_seed=1,
        permutation=True,
    )
    report = tmp_path / "mcq_report.html"
    assert main(["report", run.run_id, "--out", str(report), "--store", str(store.path)]) == 0

    page = browser_page
    page.context.set_offline(True)
    page.goto(report.as_uri(), wait_until="load")
    wait_for_charts(page, 3, timeout_ms=60_000)
    page.wait_for_timeout(800)
    assert page.locator("body > *").nth(1).get_attribute("class") == "findings"
    banner = page.locator(".leaklens-finding").first
    assert banner.bounding_box()["y"] + banner.bounding_box()["height"] < 400
    assert "Multiple-choice" in page.locator("h2").first.inner_text()
    assert page.locator(".js-plotly-plot").count() == 3  # completion probe, next-token probe, order ranks
    page.screenshot(path=str(screenshot_dir / "mcq_report_1440x900.png"))
    page.screenshot(path=str(screenshot_dir / "mcq_report_full_1440.png"), full_page=True)


def test_a_chart_whose_code_is_still_loading_says_drawing_not_an_empty_box(
    results_app_url, browser_page, screenshot_dir
):
    """On a busy machine the chart's code arrives seconds after the verdict: the chart's place says "drawing…"
    meanwhile (held here by holding back the chart code's download), then the chart replaces it."""
    page = browser_page
    held = []
    page.route("**/PlotlyChart*.js", lambda route: held.append(route))
    page.goto(f"{results_app_url}/Results?present=1")
    page.wait_for_selector(".leaklens-finding", timeout=120_000)
    page.wait_for_timeout(1_000)
    placeholders = page.locator('[data-testid="stSkeleton"]')
    assert placeholders.count() >= 1 and held
    assert placeholders.first.is_visible()
    words = placeholders.first.evaluate("el => getComputedStyle(el, '::after').content")
    assert words == '"drawing…"', words
    page.screenshot(path=str(screenshot_dir / "results_chart_drawing_1440x900.png"))
    for route in held:
        route.continue_()
    page.unroute("**/PlotlyChart*.js")
    wait_for_charts(page, 1)
    assert page.locator('[data-testid="stSkeleton"]').count() == 0
