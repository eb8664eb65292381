"""AppTest of the Overlap search page: build, list, search, heatmap, highlighted matches, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.overlap.corpus import write_corpus
from tests.ui.helpers import computed_for, stale_notes
from ui.freshness import STALE_HEADLINE

REPO = Path(__file__).resolve().parents[2]
PAGE = str(REPO / "pages" / "5_Overlap_search.py")


@pytest.fixture()
def page(monkeypatch, tmp_path) -> AppTest:
    monkeypatch.setenv("LEAKLENS_DEFAULT_MODEL", "tiny-random")
    monkeypatch.setenv("LEAKLENS_CACHE", str(tmp_path / "cache"))
    app = AppTest.from_file(PAGE, default_timeout=120)
    app.run()
    assert not app.exception, app.exception
    return app


def _click(app: AppTest, label: str) -> AppTest:
    (button,) = [b for b in app.button if b.label == label]
    return button.click().run()


def _html(app: AppTest) -> str:
    return "".join(getattr(e.proto, "body", "") for e in app.get("html"))


def test_build_search_and_highlight(page, tmp_path):
    corpus = write_corpus(tmp_path / "data")
    # A training row with markup: it must be shown escaped.
    evil_test = "What does the tag <script>alert(1)</script> do inside a web page when loaded twice?"
    with corpus.plain_path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"text": f"Note: {evil_test} Nothing.", "source": "web"}) + "\n")
    with corpus.test_path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": "evil", "question": evil_test}) + "\n")

    page.radio(key="overlap_train_source").set_value("Local path").run()
    page.text_input(key="overlap_train_path").input(str(corpus.plain_path))
    page.text_input(key="overlap_name").input("plain")
    _click(page, "Build index")
    assert not page.exception, page.exception
    assert any("Built plain" in s.value for s in page.success)
    assert any(f"lines {corpus.malformed_line}" in w.value for w in page.warning)  # malformed line reported
    # listed, and offered for search, in the same run as the build: no extra rerun needed
    assert list(page.dataframe[0].value["name"]) == ["plain"]
    assert page.multiselect(key="overlap_indexes").value == ["plain"]
    page.run()
    table = page.dataframe[0].value
    assert list(table["name"]) == ["plain"]
    assert int(table["documents"][0]) > 170

    page.radio(key="overlap_test_source").set_value("Local path").run()
    page.text_input(key="overlap_test_path").input(str(corpus.test_path))
    page.text_input(key="overlap_id_field").input("id")
    page.checkbox(key="overlap_decontaminate").check()
    _click(page, "Search")
    assert not page.exception, page.exception
    assert not page.error, [e.value for e in page.error]
    report = page.dataframe[0].value
    assert list(report.columns) == ["eval_dataset", "plain"]
    assert 0.2 < float(report["plain"][0]) < 0.6
    assert len(page.get("plotly_chart")) == 1
    body = _html(page)
    assert body.count('<mark class="ll-match">') >= 2 * (len(corpus.exact_in_plain) + 1)
    assert "&lt;script&gt;alert" in body
    assert "<script>alert" not in body
    assert any("removed" in m.value for m in page.markdown)
    assert len(page.get("download_button")) >= 3

    _click(page, "Delete index")
    assert not page.exception, page.exception
    assert any("No indexes yet" in i.value for i in page.info)
    assert not (tmp_path / "cache" / "indexes" / "plain").exists()


def test_errors_are_messages(page, tmp_path):
    corpus = write_corpus(tmp_path / "data")
    page.radio(key="overlap_train_source").set_value("Local path").run()
    page.text_input(key="overlap_train_path").input(str(corpus.plain_path))
    page.text_input(key="overlap_name").input("bad")
    page.text_input(key="overlap_text_field").input("body")
    _click(page, "Build index")
    assert not page.exception
    assert "no field 'body'" in page.error[0].value
    assert "'source'" in page.error[0].value

    page.radio(key="overlap_backend").set_value("elasticsearch").run()
    page.text_input(key="overlap_es_url").input("http://127.0.0.1:9").run()
    assert not page.exception
    assert "unreachable at http://127.0.0.1:9" in page.error[0].value


def test_ready_examples_build_and_search_the_demo_without_typing_a_path(page, tmp_path):
    assert page.radio(key="overlap_train_source").value == "Ready example"
    assert page.selectbox(key="overlap_train_example").value == "Small training corpus (demo)"
    page.text_input(key="overlap_name").input("demo")
    _click(page, "Build index")
    assert not page.exception, page.exception
    (built,) = page.success  # the build's outcome, at the top of the page
    assert built.value.startswith("Built demo: 60 documents")
    page.run()
    assert page.radio(key="overlap_test_source").value == "Ready example"
    assert page.selectbox(key="overlap_test_example").value == "Test set with planted copies (demo)"
    page.text_input(key="overlap_id_field").input("id")  # the text field is detected
    _click(page, "Search")
    assert not page.exception, page.exception
    assert not page.error, [e.value for e in page.error]
    report = page.dataframe[0].value
    assert list(report.columns) == ["eval_dataset", "demo"]
    assert 0.0 < float(report["demo"][0]) < 1.0  # some items copied, some fresh
    assert "<b>test-" in _html(page)
    assert '<mark class="ll-match">' in _html(page)
    # Result first: the search's verdict leads (the build's note has made way for it), under a heading naming
    # the data by its title; the downloads are named for what they hold, and each CSV row starts with the verdict.
    assert not page.success
    assert page.subheader[0].value == "Test set with planted copies (demo) searched in demo"
    labels = [b.proto.label for b in page.get("download_button")]
    assert labels[:3] == ["Report (HTML)", "Overlap per test set and index (CSV)", "Overlap per test item (CSV)"]
    assert all(label.endswith("(JSONL)") for label in labels[3:])
    assert len(labels) == 4
    from core.overlap.finding import overlap_finding
    from core.viz.csv_export import result_csv
    from core.viz.reports.overlap import item_rows, pair_rows

    shown = page.session_state["overlap_result"]
    finding = overlap_finding(shown.outcome.report)
    csv_text = result_csv(pair_rows(shown.outcome), finding=finding, model=shown.model, data=shown.data)
    header, row = csv_text.splitlines()
    assert header == (
        "verdict,verdict_headline,model,data,test_set,training_set,items,items_matched,share_matched,mean_overlap"
    )
    assert row.startswith(f"{finding.level},")
    assert ",no model (text search),Test set with planted" in row
    items = item_rows(shown.outcome)
    assert len(items) == 20
    assert items[0]["overlap"] == 1.0
    assert items[-1]["overlap"] == 0.0


def test_no_training_set_is_a_message(page):
    page.radio(key="overlap_train_source").set_value("Local path").run()
    page.text_input(key="overlap_name").input("empty")
    _click(page, "Build index")
    assert not page.exception
    assert "No training set given" in page.error[0].value


def test_results_are_marked_out_of_date_when_a_setting_or_the_index_changes(page, tmp_path):
    from core.overlap.indexing import DEFAULT_NGRAM_SIZE

    page.text_input(key="overlap_name").input("demo")
    _click(page, "Build index")
    page.run()
    page.text_input(key="overlap_id_field").input("id")
    _click(page, "Search")
    assert not page.exception, page.exception
    caption = computed_for(page)
    assert "indexes `demo`" in caption
    assert "test set `demo:" in caption
    assert "id field `id`" in caption
    assert stale_notes(page) == []
    page.number_input(key="overlap_ngram").set_value(DEFAULT_NGRAM_SIZE + 2).run()
    (note,) = stale_notes(page)
    assert note.startswith(
        f"**{STALE_HEADLINE}** The n-gram size changed since they were computed; press **Search**"
    ), note
    assert f"- n-gram size: `{DEFAULT_NGRAM_SIZE}` → now `{DEFAULT_NGRAM_SIZE + 2}`" in note
    page.number_input(key="overlap_ngram").set_value(DEFAULT_NGRAM_SIZE).run()
    assert stale_notes(page) == []

    # The same index name rebuilt from other training data: the shown matches no longer describe it.
    corpus = write_corpus(tmp_path / "data")
    page.radio(key="overlap_train_source").set_value("Local path").run()
    page.text_input(key="overlap_train_path").input(str(corpus.plain_path))
    page.checkbox(key="overlap_overwrite").check()
    _click(page, "Build index")
    assert any("Built demo" in s.value for s in page.success)
    page.run()
    (note,) = stale_notes(page)
    assert note.startswith(f"**{STALE_HEADLINE}** The indexes changed since"), note
    assert "st-key-result_overlap_result" in _html(page)  # dimmed, still there
    _click(page, "Search")
    assert not page.exception, page.exception
    assert stale_notes(page) == []


def test_item_chart_has_a_bar_per_item_most_overlap_first_and_a_curve_for_large_sets():
    from core.overlap.matching import Match
    from core.viz.overlap_plots import MAX_ITEM_BARS, item_overlap_chart

    def matches(n: int) -> list[Match]:
        return [Match("test", f"q{i}", "text", "idx", "train", i / n, i / n, None) for i in range(n)]

    (bars,) = item_overlap_chart(matches(20)).data
    assert bars.type == "bar"
    assert list(bars.x)[:2] == ["q19", "q18"]
    assert bars.y[0] == 0.95
    (curve,) = item_overlap_chart(matches(MAX_ITEM_BARS + 1)).data
    assert curve.type == "scatter"
    assert list(curve.y) == sorted(curve.y, reverse=True)
