"""The run-kind registry (core/results/kinds.py): every story kind refuses a run it cannot open in the one
wording of ``finished_run``, and every page it registers is a real page with a module behind it."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from core.errors import LeakLensError
from core.results.kinds import KINDS, STORY_KINDS, TEST_PAGES, kind_of
from core.store.results import ResultStore

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "core"


@pytest.mark.parametrize("name", STORY_KINDS)
def test_every_rebuild_refuses_an_unfinished_run_and_another_kinds_run_in_one_wording(name, tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    rebuild = kind_of(name).rebuild
    assert rebuild is not None
    unfinished = store.get_or_create_run(name, {"x": 1}, {"dataset": "d.csv", "model": "m"})
    with pytest.raises(LeakLensError, match=r"\(d\.csv\) is not finished \(running\); run the test again"):
        rebuild(store, unfinished)
    other = store.finish_run(store.get_or_create_run("other-kind", {"x": 1}, {"dataset": "d.csv"}).run_id, {})
    with pytest.raises(LeakLensError, match=r"is a 'other-kind' run, not an? "):
        rebuild(store, other)


def test_registered_pages_exist_in_file_order_with_their_ui_modules():
    assert [page.path for page in TEST_PAGES] == sorted(page.path for page in TEST_PAGES)
    for page in TEST_PAGES:
        assert (REPO / page.path).is_file(), page.path
        assert page.ui_module is not None, page.path
        importlib.import_module(page.ui_module)


def test_verdict_charts_have_distinct_widget_keys():
    keys = [kind.chart_key for kind in KINDS if kind.figure is not None]
    assert len(keys) == len(set(keys))
    assert kind_of("mia").chart_key == "results_bars"  # named keys kept: the page tests look charts up by them
    assert kind_of("passage").chart_key == "results_passage_figure"


def test_the_not_finished_guard_is_written_once():
    """Every rebuild of a stored run goes through finished_run; a shared link's note (core.results.links) is a
    message on a page, not an error, and says what to do with the link."""
    writers = sorted(
        path.relative_to(CORE.parent).as_posix()
        for path in CORE.rglob("*.py")
        if "is not finished (" in path.read_text()
    )
    assert writers == ["core/results/links.py", "core/store/stored_run.py"]
