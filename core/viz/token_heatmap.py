"""The passage as HTML, each token coloured by how probable the model found it.

Passage text is untrusted: every piece of it (token text and hover card) goes through ``html.escape``,
so a passage containing ``<script>`` or ``<b>`` is shown literally, never interpreted.

Each token's hover card is drawn by CSS from its ``data-tip`` attribute, not a native ``title``: a native
title shows after a second's pause, in the browser's own small font, and never on a touch screen, where a
tap focuses the token (``tabindex``) and shows the same card.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import numpy as np

from core.engine.scoring import TokenRecords

LOG10_FLOOR = -4.0
"""Probabilities at or below 10^-4 get the 'most surprising' colour; the scale is logarithmic above it."""
COLOUR_STOPS: tuple[tuple[float, tuple[int, int, int]], ...] = (
    (0.0, (214, 175, 125)),  # surprising: the model did not expect this token (tan; red means strong evidence)
    (0.5, (247, 243, 235)),
    (1.0, (58, 154, 196)),  # expected: the model all but predicted it
)
SCALE_TICKS: tuple[float, ...] = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)


@dataclass(frozen=True)
class HeatmapToken:
    """One coloured span: the token text, its probability and rank, and its background colour."""

    text: str
    prob: float
    rank: int
    colour: str


def scale_position(prob: float) -> float:
    """Where ``prob`` sits on the colour scale: 0 at ≤10^-4, 1 at probability 1, log10 in between."""
    if not prob > 0:
        return 0.0
    return float(min(1.0, max(0.0, (math.log10(prob) - LOG10_FLOOR) / -LOG10_FLOOR)))


def colour_for(prob: float) -> str:
    """Hex colour for a probability, linearly interpolated between the scale's stops."""
    t = scale_position(prob)
    for (t0, c0), (t1, c1) in zip(COLOUR_STOPS, COLOUR_STOPS[1:]):
        if t <= t1:
            w = (t - t0) / (t1 - t0)
            rgb = tuple(round(a + (b - a) * w) for a, b in zip(c0, c1))
            return "#{:02x}{:02x}{:02x}".format(*rgb)
    return "#{:02x}{:02x}{:02x}".format(*COLOUR_STOPS[-1][1])


def heatmap_tokens(records: TokenRecords) -> list[HeatmapToken]:
    probs = np.exp(records.logprobs)
    return [
        HeatmapToken(text=t, prob=float(p), rank=int(r), colour=colour_for(float(p)))
        for t, p, r in zip(records.tokens, probs, records.rank)
    ]


def tooltip(token: HeatmapToken) -> str:
    """Plain-text hover line (escaped later, with the rest)."""
    shown = token.text.replace("\n", "↵").replace("\t", "⇥")
    return f"“{shown}” · probability {token.prob:.3g} · rank {token.rank:,}"


def heatmap_html(records: TokenRecords) -> str:
    """The whole passage with one escaped, coloured ``<span>`` per scored token.

    Text between tokens (if the tokenizer skips characters) is kept uncoloured; text beyond the scored
    tokens (a truncated tail) is shown greyed so the reader sees where scoring stopped.
    """
    text = records.text
    parts: list[str] = []
    cursor = 0
    for token, (start, end) in zip(heatmap_tokens(records), records.offsets):
        start, end = int(start), int(end)
        if start > cursor:
            parts.append(html.escape(text[cursor:start]))
        parts.append(
            f'<span class="ll-tok" tabindex="0" style="background:{token.colour}" '
            f'data-tip="{html.escape(tooltip(token), quote=True)}">{html.escape(text[start:end])}</span>'
        )
        cursor = max(cursor, end)
    if cursor < len(text):
        parts.append(f'<span class="ll-unscored" data-tip="not scored">{html.escape(text[cursor:])}</span>')
    return f'<div class="ll-heatmap">{"".join(parts)}</div>'


def colour_bar_html() -> str:
    """A horizontal legend for the heatmap's colours with probability ticks."""
    gradient = ", ".join(f"{colour_for(10 ** (LOG10_FLOOR * (1 - t)))} {t * 100:.0f}%" for t in np.linspace(0, 1, 9))
    ticks = "".join(f'<span style="left:{scale_position(p) * 100:.0f}%">{_tick_label(p)}</span>' for p in SCALE_TICKS)
    return (
        '<div class="ll-colourbar">'
        '<div class="ll-colourbar-title">Token probability (how expected each token was)</div>'
        f'<div class="ll-colourbar-gradient" style="background:linear-gradient(to right, {gradient})"></div>'
        f'<div class="ll-colourbar-ticks">{ticks}</div>'
        '<div class="ll-colourbar-ends"><span>surprising</span><span>expected</span></div>'
        "</div>"
    )


def _tick_label(p: float) -> str:
    return "1" if p >= 1 else f"{p:g}"


HEATMAP_CSS = """
<style>
.ll-heatmap { white-space: pre-wrap; word-wrap: break-word; line-height: 1.9; font-size: 1.02rem;
  padding: 0.6rem 0.8rem; border: 1px solid #d6e0e5; border-radius: 0.5rem; background: #fff;
  max-height: 26rem; overflow-y: auto; }
.ll-tok { border-radius: 3px; padding: 1px 0; color: #1b2630; position: relative; }
.ll-tok:hover, .ll-tok:focus { outline: 2px solid #1b2630; }
.ll-tok[data-tip]:hover::after, .ll-tok[data-tip]:focus::after, .ll-unscored[data-tip]:hover::after {
  content: attr(data-tip); position: absolute; left: 0; top: calc(100% + 6px); z-index: 20;
  white-space: nowrap; padding: 0.3rem 0.55rem; border-radius: 0.35rem; background: #1b2630; color: #fff;
  font-size: 0.85rem; line-height: 1.3; box-shadow: 0 2px 8px rgba(0, 0, 0, 0.25); pointer-events: none; }
.ll-unscored { position: relative; }
.ll-unscored { color: #8a969e; background: repeating-linear-gradient(45deg, #f4f4f4, #f4f4f4 4px, #fff 4px, #fff 8px); }
.ll-colourbar { margin: 0.4rem 0 0.2rem 0; max-width: 30rem; font-size: 0.8rem; color: #4a5963; }
.ll-colourbar-title { margin-bottom: 0.2rem; }
.ll-colourbar-gradient { height: 0.8rem; border-radius: 3px; border: 1px solid #d6e0e5; }
.ll-colourbar-ticks { position: relative; height: 1.1rem; }
.ll-colourbar-ticks span { position: absolute; transform: translateX(-50%); top: 0.1rem; }
.ll-colourbar-ticks span:first-child { transform: none; }
.ll-colourbar-ticks span:last-child { transform: translateX(-100%); }
.ll-colourbar-ends { display: flex; justify-content: space-between; font-style: italic; }
</style>
"""


def token_heatmap_block(records: TokenRecords, *, with_colour_bar: bool = True) -> str:
    """Stylesheet + colour bar + heatmap, ready for a single HTML element."""
    return HEATMAP_CSS + (colour_bar_html() if with_colour_bar else "") + heatmap_html(records)
