"""The verdict of a membership benchmark run: did the model see the member texts?

Rules, in order (each follows the AUROC's 95% bootstrap interval):
1. no usable detector -> ``inconclusive``;
2. the model-free blind baseline matches or beats the best detector's AUROC -> ``confounded``: wording
   alone separates the sets, so the split, not the model's memory, may explain every score;
3. the best detector's interval includes 0.5 -> ``none`` when the interval is tight around chance
   (its upper end below 0.6), else ``inconclusive`` with the number of texts that would settle it;
4. the blind baseline reaches the best detector's lower bound -> ``confounded``;
5. otherwise graded by the interval's lower end: >= 0.75 ``strong``, >= 0.6 ``moderate``, else ``weak``.
"""

from __future__ import annotations

from core.membership.benchmark import BenchmarkResult
from core.stats.finding import Finding, texts_needed
from core.stats.metrics import MetricResult

STRONG_LOWER = 0.75
MODERATE_LOWER = 0.6
NONE_UPPER = 0.6
"""An interval that includes chance and stays below this rules out a useful detector."""


def best_detector(result: BenchmarkResult) -> tuple[str, MetricResult] | None:
    """The method with the highest AUROC (the baseline and the ensemble are not detectors of their own)."""
    scored = [(key, m) for key, m in result.metrics.items() if m is not None]
    return max(scored, key=lambda item: item[1].auroc) if scored else None


def membership_finding(result: BenchmarkResult) -> Finding:
    best = best_detector(result)
    n, n_members = result.n, sum(result.labels)
    sizes = f"{n} texts ({n_members} members, {n - n_members} non-members)"
    if best is None:
        return Finding("inconclusive", "Inconclusive: no detector produced a usable score on these texts.",
                       (sizes,), tuple(result.notes))
    key, metric = best
    label = result.method_labels.get(key, key)
    lo, hi = metric.ci
    baseline = result.blind_baseline
    evidence = [f"best detector: {label}, AUROC {metric.auroc:.2f} (95% CI {lo:.2f}–{hi:.2f})"]
    if baseline is not None:
        evidence.append(f"blind baseline (wording alone, no model): AUROC {baseline.auroc:.2f}")
    evidence.append(sizes)
    caveats = [
        f"The best of {len(result.metrics)} detectors is picked after the fact, so its AUROC is slightly optimistic.",
        "AUROC says how well the scores separate the two sets, not which single text was seen.",
    ]
    if baseline is None:
        caveats.append("No blind baseline could be computed, so a confounded split cannot be ruled out.")
    if baseline is not None and baseline.auroc >= metric.auroc:
        return _confounded(metric, baseline, evidence, caveats)
    if lo <= 0.5:
        if hi < NONE_UPPER:
            return Finding(
                "none",
                f"No sign that the model saw the member texts: the best detector's AUROC is {metric.auroc:.2f} "
                f"(95% CI {lo:.2f}–{hi:.2f}), indistinguishable from chance (0.50).",
                tuple(evidence), tuple(caveats),
            )
        if baseline is not None and baseline.auroc > 0.6:
            caveats.append(f"Wording alone already reaches AUROC {baseline.auroc:.2f} on these sets.")
        needed = texts_needed(n, metric.auroc, metric.ci, 0.5)
        more = f" About {needed} texts would be needed to tell an effect this size from chance." if needed else ""
        return Finding(
            "inconclusive",
            f"Inconclusive: the best detector reaches AUROC {metric.auroc:.2f}, but with {n} texts its 95% "
            f"interval ({lo:.2f}–{hi:.2f}) includes chance (0.50).{more}",
            tuple(evidence), tuple(caveats),
        )
    if baseline is not None and baseline.auroc >= lo:
        return _confounded(metric, baseline, evidence, caveats)
    level = "strong" if lo >= STRONG_LOWER else "moderate" if lo >= MODERATE_LOWER else "weak"
    words = {"strong": "Strong", "moderate": "Moderate", "weak": "Weak"}[level]
    against = f", against {baseline.auroc:.2f} for wording alone" if baseline is not None else ""
    return Finding(
        level,
        f"{words} evidence that the model saw the member texts: {label} tells members from non-members with "
        f"AUROC {metric.auroc:.2f} (95% CI {lo:.2f}–{hi:.2f}){against}.",
        tuple(evidence), tuple(caveats),
    )


def _confounded(metric: MetricResult, baseline: MetricResult, evidence: list[str], caveats: list[str]) -> Finding:
    return Finding(
        "confounded",
        f"Confounded: wording alone separates these sets (a model-free classifier reaches AUROC "
        f"{baseline.auroc:.2f}, the best detector {metric.auroc:.2f}), so the scores may reflect how the sets "
        "were split rather than what the model saw.",
        tuple(evidence),
        ("Use members and non-members from the same distribution (e.g. the same source, split at random or by "
         "a date the wording cannot reveal).", *caveats),
    )
