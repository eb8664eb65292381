"""Token heatmap HTML: colours from a log-probability scale, and every piece of passage text escaped."""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser

import numpy as np

from core.engine.scoring import TokenRecords
from core.viz.token_heatmap import colour_bar_html, colour_for, heatmap_html, heatmap_tokens, scale_position, tooltip


def make_records(
    text: str,
    spans: list[tuple[int, int]],
    probs: list[float],
    ranks: list[int] | None = None,
    kgram: np.ndarray | None = None,
    n_dropped: int = 0,
) -> TokenRecords:
    n = len(spans)
    logprobs = np.log(np.asarray(probs, dtype=np.float64))
    return TokenRecords(
        text=text,
        token_ids=np.arange(n, dtype=np.int64),
        offsets=np.asarray(spans, dtype=np.int64).reshape(n, 2),
        logprobs=logprobs,
        mean_logprob=np.full(n, -2.0),
        std_logprob=np.full(n, 1.0),
        entropy=np.full(n, 2.0),
        rank=np.asarray(ranks if ranks is not None else [1] * n, dtype=np.int64),
        kgram_logprobs=kgram,
        n_dropped=n_dropped,
    )


class _Collector(HTMLParser):
    """Parses the HTML the way a browser would and records the elements and text it finds."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []
        self.titles: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.titles += [v for k, v in attrs if k == "data-tip"]  # the hover card's text

    def handle_data(self, data):
        self.text.append(data)


def test_scale_is_log10_from_one_in_ten_thousand_to_one():
    assert scale_position(1.0) == 1.0
    assert scale_position(1e-4) == 0.0
    assert math.isclose(scale_position(1e-2), 0.5)
    assert math.isclose(scale_position(1e-1), 0.75)
    assert scale_position(1e-9) == 0.0  # below the floor: clamped
    assert scale_position(0.0) == 0.0


def test_colours_interpolate_between_the_stops():
    assert colour_for(1.0) == "#3a9ac4"
    assert colour_for(1e-2) == "#f7f3eb"  # the middle stop
    assert colour_for(1e-6) == "#d6af7d"  # clamped to the surprising end
    # 10^-3 sits half-way between the first two stops: (214+247)/2 rounds to 230, (175+243)/2, (125+235)/2.
    assert colour_for(1e-3) == "#e6d1b4"


def test_each_token_becomes_one_span_with_its_probability_and_rank():
    text = "Four score and"
    records = make_records(text, [(0, 4), (4, 10), (10, 14)], [0.5, 0.01, 1.0], ranks=[1, 37, 1])
    tokens = heatmap_tokens(records)
    assert [t.text for t in tokens] == ["Four", " score", " and"]
    assert [t.rank for t in tokens] == [1, 37, 1]
    assert [t.colour for t in tokens] == [colour_for(0.5), colour_for(0.01), colour_for(1.0)]
    assert tooltip(tokens[1]) == "“ score” · probability 0.01 · rank 37"
    html_text = heatmap_html(records)
    assert html_text.count('class="ll-tok"') == 3
    assert f"background:{colour_for(0.01)}" in html_text


def test_passage_html_is_shown_literally():
    text = '<script>alert(1)</script> <b>x</b> & "q"'
    # One token per character keeps every dangerous character inside a token span.
    spans = [(i, i + 1) for i in range(len(text))]
    records = make_records(text, spans, [0.3] * len(text))
    html_text = heatmap_html(records)
    assert "<script>" not in html_text
    assert "<b>" not in html_text
    parser = _Collector()
    parser.feed(html_text)
    assert set(parser.tags) == {"div", "span"}
    assert "".join(parser.text) == text  # the browser shows exactly the passage's characters


def test_tooltips_are_escaped_and_tokens_keep_their_characters():
    text = 'a"><img src=x onerror=alert(1)>'
    records = make_records(text, [(0, 1), (1, len(text))], [0.9, 0.2])
    html_text = heatmap_html(records)
    parser = _Collector()
    parser.feed(html_text)
    assert "img" not in parser.tags
    assert parser.titles[1].startswith('“"><img src=x onerror=alert(1)>” · probability 0.2')
    assert "".join(parser.text) == text


def test_gaps_are_kept_and_the_unscored_tail_is_greyed():
    text = "ab  cd<i>tail</i>"
    records = make_records(text, [(0, 2), (4, 6)], [0.5, 0.5], n_dropped=3)
    html_text = heatmap_html(records)
    parser = _Collector()
    parser.feed(html_text)
    assert "".join(parser.text) == text
    tail = re.search(r'<span class="ll-unscored"[^>]*>(.*?)</span>', html_text)
    assert tail is not None
    assert tail.group(1) == "&lt;i&gt;tail&lt;/i&gt;"


def test_colour_bar_has_a_tick_per_decade_and_explains_the_ends():
    bar = colour_bar_html()
    assert [m for m in re.findall(r">([0-9.e-]+)</span>", bar)] == ["0.0001", "0.001", "0.01", "0.1", "1"]
    assert "surprising" in bar
    assert "expected" in bar
    assert colour_for(1e-4) in bar
    assert colour_for(1.0) in bar
