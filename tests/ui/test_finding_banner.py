"""The verdict banner: its own colours per level, escaped text, and its place at the top of results."""

from __future__ import annotations

from core.stats.finding import LEVELS, Finding
from ui.finding import LEVEL_STYLE, banner_html


def test_every_level_has_its_own_label_and_colour():
    assert set(LEVEL_STYLE) == set(LEVELS)
    assert len({colour for _, colour, _ in LEVEL_STYLE.values()}) == len(LEVELS)


def test_banner_escapes_the_headline_and_carries_its_level():
    html = banner_html(Finding("confounded", "Model <b>x</b> & co."))
    assert 'data-level="confounded"' in html
    assert "Confounded" in html
    assert "&lt;b&gt;x&lt;/b&gt; &amp; co." in html
    assert "<b>x</b>" not in html
    assert "background:" in html
    assert "border-left:" in html  # colours of its own, outside any theme
