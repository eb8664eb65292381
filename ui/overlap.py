"""Streamlit pieces of the Overlap search page: the index table, the outcome of a build and the search results.

Searching, reporting and decontaminating happen in ``core.overlap``; the charts and highlighted texts come from
``core.viz.overlap_plots``, the report and CSVs from ``core.viz.reports.overlap``. This module only arranges them,
result first: the verdict and the chart that carries it, then (in ``details``) everything behind it.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st

from core.data.demo import dataset_label, is_demo_source
from core.data.tables import SkippedRow
from core.overlap.backends.base import IndexInfo
from core.overlap.finding import overlap_finding
from core.overlap.matching import Match
from core.overlap.report import safe_name
from core.overlap.run import SearchOutcome, match_location
from core.overlap.sources import EvalSet, keep_upload, load_eval_set, skipped_note
from core.stats.finding import Finding
from core.viz.overlap_plots import contamination_heatmap, highlighted_html, item_overlap_chart
from core.viz.reports.overlap import overlap_csvs, overlap_report
from ui.dataset_picker import DatasetChoice
from ui.finding import finding_banner
from ui.freshness import Input, brief
from ui.layout import controls, details

MAX_SHOWN = 50
STYLE = """<style>
.ll-pair {display:grid; grid-template-columns:1fr 1fr; gap:12px; margin-bottom:6px}
.ll-pair div {border:1px solid #ddd; border-radius:6px; padding:8px; white-space:pre-wrap; font-size:0.9rem}
mark.ll-match {background:#cfe3f6; padding:0 1px; border-radius:2px}
</style>"""


def training_datasets(choice: DatasetChoice | None) -> list[str]:
    """The training sets as paths or ids; an upload is kept on disk, where decontamination re-reads it."""
    if choice is None:
        return []
    return [keep_upload(choice.data, choice.source)] if choice.data is not None else choice.sources


def eval_set_label(choice: DatasetChoice) -> str:
    """The test set as people call it: a demo by its title, else its file name or hub id."""
    return dataset_label(choice.source) if is_demo_source(choice.source) else choice.brief


def load_test_set(choice: DatasetChoice, field_name: str | None, id_field: str | None) -> EvalSet:
    """The picked test set; a demo is named by its title in the verdict, other sets keep their file name or hub
    id."""
    return load_eval_set(
        choice.source,
        field_name,
        id_field=id_field,
        split=choice.split,
        config=choice.config,
        data=choice.data,
        name=dataset_label(choice.source) if is_demo_source(choice.source) else None,
    )


def warn_skipped(name: str, skipped: Sequence[SkippedRow]) -> None:
    note = skipped_note(name, skipped)
    if note:
        st.warning(note)


def index_table(infos: Sequence[IndexInfo]) -> None:
    st.dataframe(
        [
            {
                "name": i.name,
                "status": "unreadable: rebuild or delete it"
                if i.unreadable
                else "ready"
                if i.complete
                else "incomplete: rebuild it",
                "type": i.index_type,
                "documents": i.n_docs,
                "size (MiB)": round(i.size_bytes / 2**20, 3),
                "training sets": ", ".join(f"{d} ({n})" for d, n in i.datasets.items()),
                "model": i.model or "",
            }
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


@dataclass(frozen=True)
class BuiltIndex:
    """What the last build made, shown at the top of the page until a search supersedes it."""

    name: str
    n_docs: int
    size_bytes: int
    notes: tuple[str, ...] = field(default_factory=tuple)
    """Rows left out while reading the training sets, one note per set."""


def built_note(built: BuiltIndex) -> None:
    """The outcome of a build, where the verdict of a search goes."""
    with st.container(key="overlap_built"):
        st.success(
            f"Built {built.name}: {built.n_docs} documents ({built.size_bytes / 2**20:.2f} MiB). "
            "Next: search it from the *Search* tab in Setup.",
            icon=":material/check_circle:",
        )
        for note in built.notes:
            st.warning(note)


@dataclass(frozen=True)
class ShownSearch:
    """A search as the page shows it: the outcome, and what to call its data and model."""

    outcome: SearchOutcome
    data: str
    """The test set as people call it (a demo's title, a file's name)."""
    indexes: tuple[str, ...]
    model: str
    """The embedding model of the vector indexes searched, or a note that no model is involved."""


def _download(where, path: Path, label: str, key: str) -> None:
    """A download button for a result file, or a note once the cache clean-up removed it."""
    if path.is_file():
        where.download_button(label, path.read_bytes(), file_name=path.name, key=key)
    else:
        where.caption(f"{path.name} was removed by the cache clean-up: search again to get it.")


def _downloads(shown: ShownSearch, finding: Finding) -> None:
    outcome = shown.outcome
    cols = st.columns(3)
    cols[0].download_button(
        "Report (HTML)", overlap_report(outcome), "leaklens_overlap_search.html", "text/html", key="overlap_html"
    )
    per_set, per_item = overlap_csvs(outcome, finding, model=shown.model, data=shown.data)
    for where, csv, key in ((cols[1], per_set, "overlap_pairs_csv"), (cols[2], per_item, "overlap_items_csv")):
        where.download_button(csv.label, csv.text, csv.file_name, "text/csv", key=key)
    files = _match_files(outcome)
    columns = st.columns(3)
    for i, (pair, path) in enumerate(files):
        label = "Matches with texts (JSONL)" if len(files) == 1 else f"Matches of {pair} with texts (JSONL)"
        _download(columns[i % 3], path, label, f"overlap_dl_{i}")


def _match_files(outcome: SearchOutcome) -> list[tuple[str, Path]]:
    """("TEST SET in TRAINING SET", its per-item JSONL file) for each file the search wrote."""
    report = outcome.report
    files = [path for path in outcome.paths if path.suffix == ".jsonl"]
    found = []
    for e in report.evals:
        for t in report.trains:
            stem = f"{safe_name(e)}__{safe_name(t)}"
            path = next((p for p in files if p.stem == stem or p.stem.startswith(f"{stem}-")), None)
            if path is not None:
                files.remove(path)
                found.append((f"{e} in {t}", path))
    return found + [(path.stem, path) for path in files]


def search_results(shown: ShownSearch) -> None:
    """The verdict and each item's overlap first; then the tables, downloads, decontaminated files and the best
    matches side by side."""
    outcome = shown.outcome
    report = outcome.report
    finding = overlap_finding(report)
    st.subheader(f"{shown.data} searched in {', '.join(shown.indexes)}")
    finding_banner(finding)
    st.plotly_chart(item_overlap_chart(outcome.matches), key="overlap_items_chart", width="stretch")
    with controls("overlap_downloads"):
        _downloads(shown, finding)
    with details("overlap_search"):
        warn_skipped("Test set", outcome.skipped)
        if len(report.evals) * len(report.trains) > 1:
            st.plotly_chart(contamination_heatmap(report), key="overlap_heatmap", width="content")
        header, *rows = report.table()
        st.dataframe(
            [dict(zip(header, row)) for row in rows],
            hide_index=True,
            key="overlap_report_table",
            column_config={
                header[0]: st.column_config.TextColumn("Test set", help="eval_dataset: the searched test set."),
                **{
                    name: st.column_config.TextColumn(
                        name,
                        help=f"Mean score of the test instances against {name} (an index, or INDEX/TRAINING "
                        "SET): n-gram coverage, exact match or cosine similarity by mode; 0 = nothing "
                        "found.",
                    )
                    for name in header[1:]
                },
            },
        )
        if outcome.paths:
            st.caption(
                f"Files written to {outcome.paths[0].parent}: " + ", ".join(path.name for path in outcome.paths) + "."
            )
        for i, c in enumerate(outcome.cleaned):
            note = "" if c.still_matching is None else f"; re-check: {c.still_matching} instances still match"
            st.write(f"**{c.dataset}**: removed {c.n_removed} of {c.n_rows} rows{note}")
            with controls(f"overlap_clean_{i}"):
                _download(st, c.path, f"{c.dataset} without the matched rows (JSONL)", f"overlap_clean_{i}")

        st.subheader("Instances by score")
        best = outcome.best(MAX_SHOWN)
        st.caption(
            f"{outcome.n_matching} of {len(outcome.matches)} (instance, training set) pairs have a match; "
            f"showing the top {len(best)}. Highlighted: the matched words in the test instance (left) and "
            "in the best training document (right)."
        )
        blocks = [STYLE]
        for m in best:
            if m.best is None:  # never: best() keeps overlaps above 0, and only a match without a document has none
                raise AttributeError(f"{m.test_id} overlaps {m.train_dataset} but has no best document.")
            blocks.append(
                f"<p><b>{html.escape(m.test_id)}</b> · {score_text(m)} · "
                f"{html.escape(match_location(m))}</p><div class='ll-pair'>"
                f"<div>{highlighted_html(m.test_text, m.test_spans)}</div>"
                f"<div>{highlighted_html(m.best.text, m.train_spans)}</div></div>"
            )
        st.html("".join(blocks))
