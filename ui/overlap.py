"""Streamlit pieces of the Overlap search page: the index table and the search results.

Searching, reporting and decontaminating happen in ``core.overlap``; the highlighted texts come from
``core.viz.overlap_plots``. This module only arranges them.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

import streamlit as st

from core.data.tables import SkippedRow
from core.overlap.backends.base import IndexInfo
from core.overlap.finding import overlap_finding
from core.overlap.matching import Match
from core.overlap.run import SearchOutcome, match_location
from core.overlap.sources import skipped_note
from core.viz.overlap_plots import contamination_heatmap, highlighted_html
from ui.finding import finding_banner
from ui.freshness import Input, brief

MAX_SHOWN = 50
STYLE = """<style>
.ll-pair {display:grid; grid-template-columns:1fr 1fr; gap:12px; margin-bottom:6px}
.ll-pair div {border:1px solid #ddd; border-radius:6px; padding:8px; white-space:pre-wrap; font-size:0.9rem}
mark.ll-match {background:#ffb4a2; padding:0 1px; border-radius:2px}
</style>"""


def warn_skipped(name: str, skipped: Sequence[SkippedRow]) -> None:
    note = skipped_note(name, skipped)
    if note:
        st.warning(note)


def index_table(infos: Sequence[IndexInfo]) -> None:
    st.dataframe(
        [
            {"name": i.name, "status": "unreadable: rebuild or delete it" if i.unreadable
                                 else "ready" if i.complete else "incomplete: rebuild it",
             "type": i.index_type, "documents": i.n_docs,
             "size (MiB)": round(i.size_bytes / 2**20, 3),
             "training sets": ", ".join(f"{d} ({n})" for d, n in i.datasets.items()),
             "model": i.model or ""}
            for i in infos
        ],
        hide_index=True,
        key="overlap_index_table",
    )


def indexes_input(chosen: Sequence[str], infos: Sequence[IndexInfo]) -> Input:
    """The searched indexes as a result's input, by name and content (documents per training set, size on
    disk): an index rebuilt from other data under the same name marks the results out of date."""
    by_name = {i.name: i for i in infos}
    identity = []
    for name in chosen:
        info = by_name.get(name)
        identity.append((name, info.n_docs, info.size_bytes, tuple(info.datasets.items())) if info else (name,))
    return Input("indexes", tuple(identity), brief(list(chosen)))


def score_text(match: Match) -> str:
    """'score 0.412', with the raw overlap only when a match threshold turned it into a different score."""
    if abs(match.score - match.value) < 5e-4:
        return f"score {match.score:.3f}"
    return f"score {match.score:.3f} (overlap {match.value:.3f} before the match threshold)"


def _download(where, path: Path, key: str) -> None:
    """A download button for a result file, or a note once the cache clean-up removed it."""
    if path.is_file():
        where.download_button(f"⬇ {path.name}", path.read_bytes(), file_name=path.name, key=key)
    else:
        where.caption(f"{path.name} was removed by the cache clean-up: search again to get it.")


def search_results(outcome: SearchOutcome) -> None:
    """Heatmap, report table, downloads, decontaminated files and the best matches side by side."""
    report = outcome.report
    finding_banner(overlap_finding(report))
    warn_skipped("Test set", outcome.skipped)
    st.plotly_chart(contamination_heatmap(report), key="overlap_heatmap", width="content")
    header, *rows = report.table()
    st.dataframe(
        [dict(zip(header, row)) for row in rows], hide_index=True, key="overlap_report_table",
        column_config={
            header[0]: st.column_config.TextColumn("Test set", help="eval_dataset: the searched test set."),
            **{name: st.column_config.TextColumn(
                name, help=f"Mean score of the test instances against {name} (an index, or INDEX/TRAINING SET): "
                           "n-gram coverage, exact match or cosine similarity by mode; 0 = nothing found.")
               for name in header[1:]},
        },
    )
    cols = st.columns(4)
    for i, path in enumerate(outcome.paths):
        _download(cols[i % 4], path, f"overlap_dl_{i}")
    for i, c in enumerate(outcome.cleaned):
        note = "" if c.still_matching is None else f"; re-check: {c.still_matching} instances still match"
        st.write(f"**{c.dataset}**: removed {c.n_removed} of {c.n_rows} rows{note}")
        _download(st, c.path, f"overlap_clean_{i}")

    st.subheader("Instances by score")
    shown = outcome.best(MAX_SHOWN)
    st.caption(f"{outcome.n_matching} of {len(outcome.matches)} (instance, training set) pairs have a match; "
               f"showing the top {len(shown)}. Highlighted: the matched words in the test instance (left) and "
               "in the best training document (right).")
    blocks = [STYLE]
    for m in shown:
        blocks.append(
            f"<p><b>{html.escape(m.test_id)}</b> · {score_text(m)} · "
            f"{html.escape(match_location(m))}</p><div class='ll-pair'>"
            f"<div>{highlighted_html(m.test_text, m.test_spans)}</div>"
            f"<div>{highlighted_html(m.best.text, m.train_spans)}</div></div>"
        )
    st.html("".join(blocks))
