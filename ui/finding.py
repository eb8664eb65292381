"""The verdict banner: a result's finding, coloured by level, at the top of every result section.

The HTML comes from ``core.viz.banner``, the one renderer the exported report shares.
"""

from __future__ import annotations

import streamlit as st

from core.stats.finding import Finding
from core.viz.banner import LEVEL_STYLE, banner_html
from ui.layout import present_mode

__all__ = ["LEVEL_STYLE", "banner_html", "finding_banner", "finding_fold"]


def finding_banner(finding: Finding, *, fold: bool = True) -> None:
    """Headline first; the evidence and caveats folded just below it (``fold=False``: the page draws the fold
    itself, later, with ``finding_fold``, as the audit does under its evidence table).

    In Present mode the numbers line (AUROC, intervals, p-values) is hidden (``ui.layout.PRESENT_CSS``) and
    leads the fold instead, now called "Details": an audience reads the plain headline, a question opens it."""
    st.markdown(banner_html(finding), unsafe_allow_html=True)
    if fold:
        finding_fold(finding)


def finding_fold(finding: Finding) -> None:
    """The finding's evidence and caveats, folded."""
    present = present_mode()
    if finding.evidence or finding.caveats or (present and finding.numbers):
        with st.expander("Details" if present else "Evidence and caveats", expanded=False):
            if present and finding.numbers:
                st.caption(_plain(finding.numbers))
            for line in finding.evidence:
                st.markdown(f"- {_plain(line)}")
            for line in finding.caveats:
                st.caption(_plain(line))


def _plain(text: str) -> str:
    """Markdown-safe text: user data (model and dataset names) must not become markup."""
    return text.replace("\\", "\\\\").replace("*", "\\*").replace("_", "\\_").replace("`", "\\`").replace("<", "&lt;")
