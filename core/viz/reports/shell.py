"""The report shell: a self-contained HTML report of LeakLens results, for people who do not run the app.

It opens with what was found (each run's verdict banner), then the chart that shows it, then the numbers
and caveats. One file: the Plotly library is embedded once, inline, so the figures work offline and the
file can be mailed or archived; every figure sets its own colours (``core.viz.style``), so nothing depends
on the app's theme; all text from data (dataset names, model specs, method labels) is HTML-escaped.

Each test's report module beside this one (``core.viz.reports.membership``, ``loss_delta``, ``mcq``,
``dataset_inference``, ``benchmark_order``, ``passage``, ``overlap``) turns its result into ``ReportSection``s
and its CSV downloads into ``CsvFile``s; ``render_report`` lays any sections out as one file.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from core.errors import LeakLensError
from core.stats.finding import Finding
from core.viz.banner import banner_html, finding_details_html
from core.viz.style import FONT_FAMILY, TEXT_COLOUR

MIXED_TITLE = "LeakLens report"
"""The title of a report of runs of several kinds."""
PLOTLY_CONFIG = {"displaylogo": False, "responsive": True}

_STYLE = f"""
body {{ font-family: {FONT_FAMILY}; margin: 2rem auto; max-width: 1200px; color: {TEXT_COLOUR};
       background: #ffffff; padding: 0 1rem; line-height: 1.45; }}
h1 {{ margin-bottom: 0.6rem; }} h2 {{ margin-top: 2.4rem; border-top: 1px solid #e3e8ec; padding-top: 1.2rem; }}
.meta {{ color: #5b6670; margin-top: 0; }}
.findings {{ margin-bottom: 1rem; }}
.leaklens-finding a {{ text-decoration: none; }}
table {{ border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.9rem; }}
th, td {{ border: 1px solid #dde3e8; padding: 0.25rem 0.6rem; text-align: right; }}
th {{ background: #f2f6f8; }}
th:first-child, td:first-child {{ text-align: left; }}
tr.baseline td {{ background: #f2f2f2; font-style: italic; }} tr.ensemble td {{ background: #eaf6f8; }}
.note {{ background: #eef5fb; border-left: 4px solid #4c78a8; padding: 0.5rem 0.8rem; }}
.label {{ font-weight: 600; margin: 0.8rem 0 0.2rem; }}
ul.caveats {{ color: #5b6670; font-size: 0.92rem; }}
.figure {{ margin: 0.6rem 0 1rem; }}
mark.ll-match {{ background: #cfe3f6; color: {TEXT_COLOUR}; padding: 0 0.1rem; border-radius: 0.15rem; }}
td.text, th.text {{ text-align: left; max-width: 44rem; white-space: pre-wrap; word-break: break-word; }}
"""


@dataclass(frozen=True)
class ReportSection:
    """One run in the report: its verdict, the charts that show it (the evidence chart first), the numbers."""

    heading: str
    finding: Finding
    figures: tuple[go.Figure, ...]
    meta: str = ""
    """One plain line under the heading (sizes, run id); escaped when rendered."""
    details: str = ""
    """Tables and notes as HTML, built by a report module from escaped data."""
    lead: str = ""
    """HTML shown right under the evidence chart, before the finding's details: a small table the verdict rests
    on (built by ``core.viz`` from escaped data)."""


@dataclass(frozen=True)
class CsvFile:
    """A download: its button label (what it holds), file name and text."""

    label: str
    file_name: str
    text: str


def fmt(value: float | None, spec: str = ".3f") -> str:
    """A number for a table cell; a dash when there is none."""
    return "–" if value is None or not math.isfinite(value) else format(value, spec)


def table(header: Sequence[str], rows: Iterable[tuple[Sequence[str], str]]) -> str:
    """An HTML table; cells are plain text (escaped here), each row with an optional CSS class."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        ("<tr>" if not css else f'<tr class="{escape(css)}">')
        + "".join(f"<td>{escape(c)}</td>" for c in cells)
        + "</tr>"
        for cells, css in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def stored_as(run_id: str) -> str:
    """The run id for whoever reruns it, kept out of the lines a stakeholder reads first."""
    return f'<p class="meta">Stored as run {escape(run_id)}.</p>'


def _figure_html(figure: go.Figure) -> str:
    """A figure's div and its drawing call; the library itself is in the page head, once."""
    return f'<div class="figure">{figure.to_html(full_html=False, include_plotlyjs=False, config=PLOTLY_CONFIG)}</div>'


def render_report(
    sections: Sequence[ReportSection],
    *,
    title: str,
    intro: str = "",
    overview: go.Figure | None = None,
    summary_first: bool = False,
) -> str:
    """The whole document: every verdict first, then an optional overview chart, then one section per run.

    ``summary_first``: the first section is an executive summary (an audit's) and opens the report on one screen:
    its verdict, its table and notes, then its chart; every later section shows its own verdict at its start."""
    if not sections:
        raise LeakLensError("There are no finished runs to report; run a test first.")
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    anchors = [f"run-{i + 1}" for i in range(len(sections))]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{_STYLE}</style>",
        f'<script type="text/javascript">{get_plotlyjs()}</script>',
        "</head><body>",
        f"<h1>{escape(title)}</h1>",
    ]
    if summary_first:
        summary, sections, anchors = sections[0], sections[1:], anchors[1:]
        parts += [
            '<div class="findings">',
            banner_html(summary.finding, subject=summary.heading),
            "</div>",
            summary.lead,
            summary.details,
            *(_figure_html(figure) for figure in summary.figures),
            f'<p class="meta">Generated {generated} by LeakLens. {intro}</p>',
        ]
    else:
        parts += [
            '<div class="findings">',
            *(banner_html(s.finding, subject=s.heading, link=a) for s, a in zip(sections, anchors)),
            "</div>",
            f'<p class="meta">Generated {generated} by LeakLens · {len(sections)} run(s). {intro}</p>',
        ]
    if overview is not None:
        parts += ["<h2>Compare methods</h2>", _figure_html(overview)]
    for section, anchor in zip(sections, anchors):
        parts.append(f'<section id="{anchor}"><h2>{escape(section.heading)}</h2>')
        if summary_first:
            parts.append(banner_html(section.finding))
        if section.meta:
            parts.append(f'<p class="meta">{escape(section.meta)}</p>')
        evidence, *more = section.figures or (None,)
        if evidence is not None:
            parts.append(_figure_html(evidence))
        parts += [section.lead, finding_details_html(section.finding)]
        parts += [_figure_html(figure) for figure in more]
        parts += [section.details, "</section>"]
    parts.append("</body></html>")
    return "\n".join(parts)
