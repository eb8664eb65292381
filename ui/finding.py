"""The verdict banner: a result's finding, coloured by level, at the top of every result section.

The HTML comes from ``core.viz.banner``, the one renderer the exported report shares.
"""

from __future__ import annotations

import streamlit as st

from core.stats.finding import Finding
from core.viz.banner import LEVEL_STYLE, banner_html

__all__ = ["LEVEL_STYLE", "banner_html", "finding_banner"]


def finding_banner(finding: Finding) -> None:
    """Headline first; the evidence and caveats folded just below it."""
    st.markdown(banner_html(finding), unsafe_allow_html=True)
    if finding.evidence or finding.caveats:
        with st.expander("Evidence and caveats", expanded=False):
            for line in finding.evidence:
                st.markdown(f"- {_plain(line)}")
            for line in finding.caveats:
                st.caption(_plain(line))


def _plain(text: str) -> str:
    """Markdown-safe text: user data (model and dataset names) must not become markup."""
    return text.replace("\\", "\\\\").replace("*", "\\*").replace("_", "\\_").replace("`", "\\`").replace("<", "&lt;")
