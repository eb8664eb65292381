"""Side-by-side HTML for one probe: the prefix, the ground truth and the model's completion, with the
characters the completion gets right highlighted. All text is escaped. Neutral colours only: a reproduced option
is not a verdict (red, amber, green, grey and purple belong to the finding levels)."""

from __future__ import annotations

import html

from core.mcq.completion import ProbeResult, QuestionResult
from core.mcq.match import highlight_html, matching_mask

STYLE = (
    "<style>.mcq-probe{border-collapse:collapse;width:100%;font-size:0.9rem}"
    ".mcq-probe td,.mcq-probe th{border:1px solid #ddd;padding:4px 8px;vertical-align:top;text-align:left}"
    ".mcq-probe mark.match{background:#cfe3f6;padding:0}.mcq-probe .ok{color:#1f4e79;font-weight:700}"
    ".mcq-probe .no{color:#8a96a0}.mcq-probe pre{white-space:pre-wrap;margin:0;font-family:inherit}</style>"
)
PREFIX_TAIL = 120
"""Characters of the prefix shown before the cut (the full question stays in the table above)."""


def _verdict(flag: bool) -> str:
    return '<span class="ok">✓</span>' if flag else '<span class="no">✗</span>'


def probe_row(result: ProbeResult, letter: str) -> str:
    probe = result.probe
    truth_mask, completion_mask = matching_mask(probe.ground_truth, result.completion)
    tail = probe.prefix[-PREFIX_TAIL:]
    shown_prefix = ("…" if len(probe.prefix) > PREFIX_TAIL else "") + tail
    return (
        f"<tr><td>{html.escape(letter)}</td><td><pre>{html.escape(shown_prefix)}</pre></td>"
        f"<td><pre>{highlight_html(probe.ground_truth, truth_mask)}</pre></td>"
        f"<td><pre>{highlight_html(result.completion, completion_mask)}</pre></td>"
        f"<td>{_verdict(result.next_token_correct)}</td><td>{_verdict(result.exact)}</td>"
        f"<td>{result.similarity:.2f}</td></tr>"
    )


def question_html(result: QuestionResult) -> str:
    """A table with one row per option probe."""
    head = (
        "<tr><th>Option</th><th>Prefix (end)</th><th>Ground truth</th><th>Model completion</th>"
        "<th>Next token</th><th>Exact</th><th>Similarity</th></tr>"
    )
    rows = "".join(probe_row(p, result.question.letters[p.probe.option_index]) for p in result.probes)
    note = (
        '<caption style="caption-side:bottom;text-align:left;color:#5b6670;font-size:0.8rem;padding-top:4px">'
        '<mark class="match">Highlighted</mark>: characters the model\'s completion shares with the ground truth '
        "· ✓ reproduced · ✗ not reproduced</caption>"
    )
    return f'{STYLE}<table class="mcq-probe">{note}{head}{rows}</table>'
