"""A stored run as a card in the list of runs: the verdict's level and headline, then the test, the data, the
model and the date, in the banner's colours (``core.viz.banner``) but small, so a dozen fit on a screen.

Every piece of text is escaped: headlines and names come from data. The card is not a ``.leaklens-finding``
banner: the page's one banner is the opened run's verdict.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from core.stats.finding import Finding
from core.viz.banner import HEADLINE_COLOUR, LEVEL_STYLE, NUMBERS_COLOUR

UNOPENED_STYLE = ("Cannot be opened", "#8a96a0", "#f6f7f8")


@dataclass(frozen=True)
class RunCard:
    """One line of the list of runs: what was tested, on what, with which model and when, and the verdict."""

    run_id: str
    kind: str
    test: str
    """The test in words ("Membership benchmark")."""
    data: str
    model: str
    date: str
    """When the run finished, ``YYYY-MM-DD HH:MM UTC``."""
    finding: Finding | None
    """None when the run cannot be opened (``problem`` says why)."""
    problem: str = ""

    @property
    def level(self) -> str | None:
        return None if self.finding is None else self.finding.level

    @property
    def headline(self) -> str:
        return self.finding.headline if self.finding is not None else self.problem


def card_html(card: RunCard, *, opened: bool = False) -> str:
    """The card; ``opened`` marks the run shown at the top of the page."""
    label, colour, background = LEVEL_STYLE[card.level] if card.level else UNOPENED_STYLE
    shown = (
        (
            ' <span style="font-weight: 400; text-transform: none; letter-spacing: 0; color: #3d4a56;">'
            "· shown above</span>"
        )
        if opened
        else ""
    )
    about = " · ".join(html.escape(part) for part in (card.test, card.data, card.model, card.date) if part)
    outline = f"outline: 2px solid {colour}; " if opened else ""
    return (
        f'<div class="leaklens-card" data-level="{html.escape(card.level or "")}" '
        f'data-run="{html.escape(card.run_id)}" '
        f'style="border-left: 5px solid {colour}; background: {background}; {outline}padding: 0.45rem 0.8rem; '
        'border-radius: 0.35rem; margin: 0.15rem 0;">'
        f'<div style="color: {colour}; font-weight: 700; text-transform: uppercase; font-size: 0.72rem; '
        f'letter-spacing: 0.04em;">{html.escape(label)}{shown}</div>'
        f'<div class="leaklens-card-headline" style="color: {HEADLINE_COLOUR}; font-size: 0.95rem;">'
        f"{html.escape(card.headline)}</div>"
        f'<div class="leaklens-card-about" style="color: {NUMBERS_COLOUR}; font-size: 0.8rem;">{about}</div>'
        "</div>"
    )
