"""The verdict banner: a result's finding, coloured by level, at the top of every result section."""

from __future__ import annotations

import html

import streamlit as st

from core.stats.finding import Finding

LEVEL_STYLE: dict[str, tuple[str, str, str]] = {
    # level: (label, border / label colour, background)
    "strong": ("Strong evidence", "#b42318", "#fdecea"),
    "moderate": ("Moderate evidence", "#c4510d", "#fef0e6"),
    "weak": ("Weak evidence", "#9a6b00", "#fdf6e3"),
    "none": ("No sign", "#1f7a4d", "#e8f5ee"),
    "inconclusive": ("Inconclusive", "#4a5560", "#eef1f4"),
    "confounded": ("Confounded", "#6b3fa0", "#f2ecf9"),
}


def banner_html(finding: Finding) -> str:
    """The banner as escaped HTML with its own colours, so it reads the same outside Streamlit's theme."""
    label, colour, background = LEVEL_STYLE[finding.level]
    return (
        f'<div class="leaklens-finding" data-level="{finding.level}" style="border-left: 6px solid {colour}; '
        f'background: {background}; padding: 0.8rem 1rem; border-radius: 0.4rem; margin: 0.4rem 0 0.8rem 0;">'
        f'<div style="color: {colour}; font-weight: 700; text-transform: uppercase; font-size: 0.8rem; '
        f'letter-spacing: 0.04em;">{html.escape(label)}</div>'
        f'<div style="color: #1b2630; font-size: 1.1rem; margin-top: 0.2rem;">{html.escape(finding.headline)}</div>'
        "</div>"
    )


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
