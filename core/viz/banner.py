"""The verdict banner as HTML: one renderer for the app's pages and the exported report.

It carries its own colours (border, label, background, text) so it reads the same on Streamlit's theme
and on a plain page, and escapes every piece of text (headlines quote model and dataset names). Under the
plain headline, the finding's numbers line (AUROC, intervals, Δ, p-values) with every term explained on
hover (``core.viz.glossary``).
"""

from __future__ import annotations

import html

from core.stats.finding import Finding
from core.viz.glossary import gloss_html

LEVEL_STYLE: dict[str, tuple[str, str, str]] = {
    # level: (label, border / label colour, background)
    "strong": ("Strong evidence", "#b42318", "#fdecea"),
    "moderate": ("Moderate evidence", "#c4510d", "#fef0e6"),
    "weak": ("Weak evidence", "#9a6b00", "#fdf6e3"),
    "none": ("No sign", "#1f7a4d", "#e8f5ee"),
    "inconclusive": ("Inconclusive", "#4a5560", "#eef1f4"),
    "confounded": ("Confounded", "#6b3fa0", "#f2ecf9"),
}
HEADLINE_COLOUR = "#1b2630"
NUMBERS_COLOUR = "#3d4a56"


def banner_html(finding: Finding, *, subject: str | None = None, link: str | None = None) -> str:
    """The banner: level label (and what it is about), the one-sentence headline, then the numbers line.

    ``subject`` names the run when a report holds several; ``link`` (an in-page anchor) makes it a link
    to that run's section.
    """
    label, colour, background = LEVEL_STYLE[finding.level]
    about = ""
    if subject:
        name = html.escape(subject)
        if link:
            name = f'<a href="#{html.escape(link)}" style="color: {colour};">{name}</a>'
        about = f' <span style="font-weight: 400; text-transform: none; letter-spacing: 0;">· {name}</span>'
    return (
        f'<div class="leaklens-finding" data-level="{finding.level}" style="border-left: 6px solid {colour}; '
        f'background: {background}; padding: 0.8rem 1rem; border-radius: 0.4rem; margin: 0.4rem 0 0.8rem 0;">'
        f'<div style="color: {colour}; font-weight: 700; text-transform: uppercase; font-size: 0.8rem; '
        f'letter-spacing: 0.04em;">{html.escape(label)}{about}</div>'
        f'<div class="leaklens-headline" style="color: {HEADLINE_COLOUR}; font-size: 1.1rem; margin-top: 0.2rem;">'
        f"{html.escape(finding.headline)}</div>"
        f"{_numbers_html(finding)}"
        "</div>"
    )


def _numbers_html(finding: Finding) -> str:
    """The numbers line, its terms glossed on hover; nothing when the finding has none."""
    if not finding.numbers.strip():
        return ""
    return (
        f'<div class="leaklens-numbers" style="color: {NUMBERS_COLOUR}; font-size: 0.85rem; '
        f'margin-top: 0.3rem;">{gloss_html(finding.numbers)}</div>'
    )


def finding_details_html(finding: Finding) -> str:
    """The evidence behind a finding as a list, and its caveats in a muted one, escaped."""
    parts = []
    if finding.evidence:
        items = "".join(f"<li>{html.escape(line)}</li>" for line in finding.evidence)
        parts.append(f'<p class="label">Evidence</p><ul class="evidence">{items}</ul>')
    if finding.caveats:
        items = "".join(f"<li>{html.escape(line)}</li>" for line in finding.caveats)
        parts.append(f'<p class="label">Caveats</p><ul class="caveats">{items}</ul>')
    return "".join(parts)
