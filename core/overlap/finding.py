"""The verdict of an overlap search: how much of a test set appears in the training data.

Per (test set, training set) pair, the share of test items with any matched text; the run's finding is
its worst pair: >= 10% of items ``strong``; >= 2% ``moderate``; else ``weak``; no item matched -> ``none``.
Overlap is shared text, not proof of training: the membership tests answer that.

Minimum size (``MIN_ITEMS`` test items per test set). A matched item is a fact, not an estimate: shared text
was found, however few items were searched, so a match keeps its exposure level, with a caveat that the
share of a set smaller than the minimum is a rough rate. No match is different: "no overlap" is a claim
about the rate, and none of 2 items matching rules out little. When nothing matched and any test set holds
fewer than ``MIN_ITEMS`` items, the finding is ``inconclusive`` and says how many were searched.
"""

from __future__ import annotations

from core.overlap.report import ContaminationReport
from core.stats.finding import Finding, Level, count, too_few

STRONG_SHARE = 0.10
MODERATE_SHARE = 0.02
MIN_ITEMS = 5
"""Test items a test set needs before "no item matched" reads as ``none``; below it a match still counts."""


def overlap_finding(report: ContaminationReport) -> Finding:
    pairs = [(e, t) for e in report.evals for t in report.trains if (e, t) in report.scores]
    caveats: tuple[str, ...] = (
        "Overlap is shared text, not proof that a model trained on it: the membership tests answer that.",
        "N-gram matching misses paraphrases; a vector index finds near copies.",
    )
    if not pairs:
        return Finding("inconclusive", "Inconclusive: no test item was searched.", (), caveats)
    evidence = tuple(
        f"{e} in {t}: {report.matched[(e, t)]} of {report.counts[e]} items matched, "
        f"mean overlap {report.scores[(e, t)]:.2f}"
        for e, t in pairs
    )
    e, t = max(pairs, key=lambda p: (report.matched[p] / max(report.counts[p[0]], 1), report.scores[p]))
    matched, total = report.matched[(e, t)], report.counts[e]
    numbers = (
        f"{matched} of {count(total, 'item')} of {e} matched in index {t} · mean overlap "
        f"{report.scores[(e, t)]:.2f} · {count(len(pairs), 'pair')} searched"
    )
    if matched == 0:
        small = [name for name in dict.fromkeys(pe for pe, _ in pairs) if report.counts[name] < MIN_ITEMS]
        if small:
            searched = ", ".join(f"{count(report.counts[name], 'item')} of {name}" for name in small)
            return Finding(
                "inconclusive",
                too_few(
                    f"{searched} searched, none sharing text with the training data", f"{MIN_ITEMS} items per test set"
                ),
                evidence,
                caveats,
                numbers,
            )
        return Finding(
            "none",
            f"No overlap found: none of the {total} items of {e} shares text with {t}.",
            evidence,
            caveats,
            numbers,
        )
    share = matched / total
    if total < MIN_ITEMS:
        caveats = (
            f"Only {count(total, 'item')} in {e}: the {count(matched, 'matched item')} "
            f"{'is' if matched == 1 else 'are'} shared text found, but {share:.0%} is a rough rate; search "
            f"at least {MIN_ITEMS} items per test set.",
            *caveats,
        )
    level: Level = "strong" if share >= STRONG_SHARE else "moderate" if share >= MODERATE_SHARE else "weak"
    return Finding(
        level,
        f"{matched} of {total} items of {e} ({_percent(share)}) share text with the training data in index {t}.",
        evidence,
        caveats,
        numbers,
    )


def _percent(share: float) -> str:
    """``35%``; a share under 1% (but not zero) reads ``under 1%``, never ``0%``."""
    return "under 1%" if 0 < share < 0.01 else f"{share:.0%}"
