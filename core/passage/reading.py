"""An inspection read in words: each passage's name, its one verdict (or why there is none), the comparison set
as the verdict names it, and the scores section's reading in the verdict's own terms.

One verdict per passage, read one way everywhere: the banner, the chart under it and the scores section all
place the passage among the same freshly written passages of similar length, by the same method (the finding's
deciding one). A passage is never compared with itself.
"""

from __future__ import annotations

import math

import numpy as np

from core.data.examples import FRESH, GETTYSBURG, GETTYSBURG_PARAPHRASE
from core.passage.inspection import InspectedPassage
from core.passage.placement import (
    NEIGHBOURHOOD_KEY,
    MethodPlacement,
    PassagePlacement,
    has_yardstick,
    less_than,
    more_than,
)
from core.passage.result import InspectResult
from core.passage.summary import format_perplexity, honest_summary, same_text, too_short
from core.passage.verdict import PassageVerdict
from core.stats.finding import Finding

PENDING_HEADLINE = "Comparing with freshly written passages of similar length…"
PENDING_DETAIL = (
    "The verdict appears here as soon as the passages it is compared with are scored; the passage's own "
    "curve, colours and scores are below already."
)
EXAMPLE_LABELS = {
    GETTYSBURG.key: "the Gettysburg Address (example)",
    FRESH.key: "a freshly written paragraph (example)",
    GETTYSBURG_PARAPHRASE.key: "a paraphrase of the Gettysburg Address (example)",
}
"""How a built-in example is named (the data's label; a pasted passage is "your passage")."""


def placement_of(result: InspectResult, index: int) -> PassagePlacement | None:
    return result.placements[index] if index < len(result.placements) else None


def verdict_of(result: InspectResult, index: int) -> PassageVerdict | None:
    return result.verdicts[index] if index < len(result.verdicts) else None


def passage_verdict(result: InspectResult, index: int) -> Finding:
    """The passage's one verdict: its place among the fresh passages and its continuation, or why there is none."""
    verdict = verdict_of(result, index)
    if verdict is not None:
        return verdict.finding
    if not result.judged:
        return Finding(
            "inconclusive",
            PENDING_HEADLINE,
            ("the comparison with freshly written passages of similar length is under way",),
        )
    reason = result.placement_error or "the freshly written passages could not be scored for this model."
    return Finding(
        "inconclusive",
        "Cannot tell: the passage could not be compared with freshly written passages, and a single score has "
        "no threshold of its own.",
        (reason,),
        (
            "Without text the model cannot have seen, scored the same way, there is nothing to place the passage "
            "against.",
        ),
    )


def findings_of(result: InspectResult) -> list[Finding]:
    return [passage_verdict(result, index) for index in range(len(result.passages))]


def comparable(placement: PassagePlacement | None) -> bool:
    """True when the comparison carries a reading (enough fresh passages of similar length, enough tokens)."""
    return placement is not None and has_yardstick(placement)


def set_label(placement: PassagePlacement) -> str:
    """The comparison set as the verdict names it: passages of similar length, or only the nearest in length."""
    low, high = placement.token_range
    lengths = f"{low} tokens" if low == high else f"{low}–{high} tokens"
    if comparable(placement):
        return f"freshly written passages of {lengths}"
    return f"freshly written passages nearest in length ({lengths})"


def strip_title(placement: PassagePlacement, method: MethodPlacement) -> str:
    """The title over one placed method's strip of dots."""
    kind = f" · teal: the {method.n_kind} nearest in kind" if method.kind_positions else ""
    right = "likelier in its own words than reworded" if method.method_key == NEIGHBOURHOOD_KEY else "more predictable"
    return f"Dots: {method.n_compared} {set_label(placement)}{kind} · right = {right}"


def passage_text(result: InspectResult, index: int) -> str:
    """Passage ``index`` as it was analysed ("" for a result that kept no texts)."""
    return result.texts[index] if index < len(result.texts) else ""


def passage_label(result: InspectResult, index: int) -> str:
    """One passage as a reader knows it: a built-in example by name, anything else as "your passage"."""
    text = passage_text(result, index)
    example = next((e for e in (GETTYSBURG, FRESH, GETTYSBURG_PARAPHRASE) if text and same_text(e.text, text)), None)
    return EXAMPLE_LABELS[example.key] if example is not None else "your passage"


def data_label(result: InspectResult) -> str:
    """The passages as a reader knows them: a built-in example by name, anything else as "your passage"."""
    names = []
    for index, passage in enumerate(result.passages):
        label = passage_label(result, index)
        names.append(label if len(result.passages) == 1 else f"{passage.name}: {label}")
    joined = " vs ".join(names)
    return joined[0].upper() + joined[1:]


def chart_name(result: InspectResult, passage: InspectedPassage) -> str:
    """How a strip labels the passage's diamond."""
    return passage.name if len(result.passages) > 1 else "this passage"


def share_text(method: MethodPlacement) -> str:
    """'more predictable than all 36' / 'than 91% of 36' / 'less predictable than all 40', never overstated."""
    if method.percentile == 0:
        return f"{less_than(method)} all {method.n_compared}"
    if method.n_at_least == 0:
        return f"{more_than(method)} all {method.n_compared}"
    return f"{more_than(method)} {math.floor(method.percentile)}% of {method.n_compared}"


def _method_line(method: MethodPlacement) -> str:
    median = float(np.median(method.calibration_scores))
    if method.method_key == "loss":  # the score is the mean log-prob: perplexity reads better
        return (
            f"- perplexity **{format_perplexity(math.exp(-method.score))}** against their median "
            f"{format_perplexity(math.exp(-median))} (lower = more predictable): {share_text(method)}"
        )
    return (
        f"- {method.label} **{method.score:.2f}** against their median {median:.2f} (higher = more "
        f"predictable): {share_text(method)}"
    )


def placement_summary(result: InspectResult, index: int) -> str:
    """The scores section's reading of passage ``index``, in the verdict's terms: the same fresh passages, the
    deciding method first.

    Without a placement there is no verdict, and the reading says so (``honest_summary``), beside the built-in
    examples the inspection scored for scale.
    """
    passage, placement, model = result.passages[index], placement_of(result, index), result.model
    n_tokens = passage.analysis.records.n_tokens
    perplexity = passage.analysis.perplexity
    if placement is None or too_short(n_tokens):
        text = passage_text(result, index)
        return honest_summary(perplexity, result.references, model, text=text, n_tokens=n_tokens)
    low, high = placement.token_range
    if not comparable(placement):
        return (
            f"**No freshly written passages of this length to compare with**, so no reading (see the verdict "
            f"above). This passage has {n_tokens} tokens and perplexity {format_perplexity(perplexity)} under "
            f"`{model}`; the nearest fresh passages are {low}–{high} tokens long."
        )
    deciding = placement.deciding
    methods = [deciding, *(m for m in placement.methods if m is not deciding)]
    lines = [
        f"**The verdict's comparison:** this passage ({n_tokens} tokens) against the {placement.n_similar} "
        f"freshly written passages of similar length ({low}–{high} tokens), scored by `{model}`. The verdict "
        f"reads {deciding.label}, the less extreme of:",
        *(_method_line(m) for m in methods),
    ]
    return "\n".join(lines)


def reference_scale(result: InspectResult, index: int) -> str:
    """One line for scale (not part of the verdict): the built-in examples' perplexities, never the passage's own."""
    perplexity, text = result.passages[index].analysis.perplexity, passage_text(result, index)
    others = [r for r in result.references if not same_text(r.reference_text, text)]
    itself = [r for r in result.references if r not in others]
    parts = [f"the {r.label} {format_perplexity(r.perplexity)}" for r in others]
    line = f"For scale only, not part of the verdict: perplexity {format_perplexity(perplexity)} here"
    if parts:
        line += "; " + "; ".join(parts)
    if itself:
        line += f" (this passage is the {itself[0].label}, so it is not set beside itself)"
    return line + "."
