"""The verdict of an overlap search: how much of a test set appears in the training data.

Per (test set, training set) pair, the share of test items with any matched text; the run's finding is
its worst pair: no item matched -> ``none``; >= 10% of items ``strong``; >= 2% ``moderate``; else
``weak``. Overlap is shared text, not proof of training: the membership tests answer that.
"""

from __future__ import annotations

from core.overlap.report import ContaminationReport
from core.stats.finding import Finding

STRONG_SHARE = 0.10
MODERATE_SHARE = 0.02


def overlap_finding(report: ContaminationReport) -> Finding:
    pairs = [(e, t) for e in report.evals for t in report.trains if (e, t) in report.scores]
    caveats = ("Overlap is shared text, not proof that a model trained on it: the membership tests answer that.",
               "N-gram matching misses paraphrases; a vector index finds near copies.")
    if not pairs:
        return Finding("inconclusive", "Inconclusive: no test item was searched.", (), caveats)
    evidence = tuple(
        f"{e} in {t}: {report.matched[(e, t)]} of {report.counts[e]} items matched, "
        f"mean overlap {report.scores[(e, t)]:.2f}"
        for e, t in pairs
    )
    e, t = max(pairs, key=lambda p: (report.matched[p] / max(report.counts[p[0]], 1), report.scores[p]))
    matched, total = report.matched[(e, t)], report.counts[e]
    if matched == 0:
        return Finding("none", f"No overlap found: none of the {total} items of {e} shares text with {t}.",
                       evidence, caveats)
    share = matched / total
    level = "strong" if share >= STRONG_SHARE else "moderate" if share >= MODERATE_SHARE else "weak"
    return Finding(
        level,
        f"{matched} of {total} items of {e} ({share:.0%}) share text with the training data in index {t} "
        f"(mean overlap {report.scores[(e, t)]:.2f}).",
        evidence, caveats,
    )
