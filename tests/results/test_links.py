"""Which stored run a shared presentation link opens, read from a real results store."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import pytest

from core.results.links import linked_run, presentation_url
from core.store.results import ResultStore, RunInfo

HOW = "Turn Present off, run the test in Setup, then turn Present on: the result opens here."


def _run(store: ResultStore, kind: str, name: str, *, finish: bool = True) -> RunInfo:
    run = store.get_or_create_run(kind, {"data": name}, {"dataset": name, "model": "m", "n_total": 0})
    time.sleep(0.01)  # distinct creation times: "newest" is well defined
    return store.finish_run(run.run_id, {}) if finish else run


@pytest.fixture()
def runs(tmp_path) -> dict[str, RunInfo]:
    store = ResultStore(tmp_path / "results.sqlite")
    made = {
        "old_mcq": _run(store, "mcq", "old"),
        "new_mcq": _run(store, "mcq", "new"),
        "order": _run(store, "benchmark-order", "o"),
        "running_mcq": _run(store, "mcq", "running", finish=False),
    }
    made["all"] = store.list_runs()  # type: ignore[assignment]
    return made


def test_a_link_with_a_run_opens_that_run_by_its_id_or_a_unique_prefix(runs):
    for wanted in (runs["old_mcq"].run_id, runs["old_mcq"].run_id[:12]):
        linked = linked_run(runs["all"], ("mcq",), wanted, how_to_make=HOW)
        assert linked.run is not None and linked.run.run_id == runs["old_mcq"].run_id
        assert linked.why_shown == "opened from a shared link"
        assert linked.message == ""


def test_a_link_without_a_run_opens_the_newest_finished_run_of_the_page(runs):
    linked = linked_run(runs["all"], ("mcq",), None, how_to_make=HOW)
    assert linked.run is not None and linked.run.run_id == runs["new_mcq"].run_id  # not the unfinished, newer one
    assert linked.why_shown == "the most recent run of this test"


@pytest.mark.parametrize(
    ("wanted", "kinds", "says"),
    [
        (None, ("delta-comparison",), f"Nothing to present yet: no run of this test is stored. {HOW}"),
        (None, (), f"Nothing to present yet. {HOW}"),
        ("no-such-run", ("mcq",), "The linked run no-such-run is not stored here: the Results page lists"),
        ("order", ("mcq",), "is a benchmark order test run: open it on the Results page."),
        ("running_mcq", ("mcq",), "is not finished (running); run it again to complete it"),
    ],
)
def test_when_a_link_opens_nothing_one_line_says_why(runs, wanted, kinds, says):
    wanted = runs[wanted].run_id if wanted in runs else wanted
    linked = linked_run(runs["all"], kinds, wanted, how_to_make=HOW)
    assert linked.run is None
    assert says in linked.message
    assert "\n" not in linked.message


def test_a_prefix_shared_by_several_runs_is_not_guessed(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite")
    made = [_run(store, "mcq", f"set {i}") for i in range(17)]  # 17 ids: two share a first hex digit
    firsts = [r.run_id[0] for r in made]
    shared = next(c for c in firsts if firsts.count(c) > 1)
    linked = linked_run(store.list_runs(), ("mcq",), shared, how_to_make=HOW)
    assert linked.run is None
    assert f"The linked run {shared} matches {firsts.count(shared)} stored runs" in linked.message


def test_presentation_url_keeps_the_page_and_names_the_run():
    url = presentation_url("http://host:8501/Membership_benchmark?foo=1#top", "abc123")
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.path, parts.fragment) == (
        "http",
        "host:8501",
        "/Membership_benchmark",
        "",
    )
    assert parse_qs(parts.query) == {"present": ["1"], "run": ["abc123"]}
