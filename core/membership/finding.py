"""The verdict of a membership benchmark run: did the model see the member texts?

Rules, in order (each follows the AUROC's 95% bootstrap interval):
1. every text is found word for word in both classes -> ``inconclusive``: members and non-members hold the
   same texts, so no detector can separate them (when only some are, a caveat says how many);
2. fewer than ``MIN_PER_CLASS`` texts in either class -> ``inconclusive``, whatever the interval says: a
   bootstrap over 1 + 1 texts gives [1.00, 1.00] for any score that happens to order them right;
3. no usable detector -> ``inconclusive``;
4. the model-free blind baseline is above chance (its interval's lower end above 0.5) and matches or beats
   the best detector's AUROC -> ``confounded``: wording alone separates the sets, so the split, not the
   model's memory, may explain every score. A baseline whose interval includes chance never makes a run
   ``confounded`` ("0.50 vs 0.50" is no confound);
5. the best detector's interval (widened for picking the best of several, see ``selection_adjusted_ci``)
   includes 0.5 -> ``none`` when the whole interval lies inside the no-effect
   margin (0.4, 0.6), else ``inconclusive`` with the number of texts that would settle it; an interval
   wholly below 0.5 (the scores rank non-members above members) is ``inconclusive`` too: memory cannot
   explain it, so something else separates the sets;
6. the blind baseline, above chance, reaches the best detector's lower bound -> ``confounded``;
7. otherwise graded by the interval's lower end: >= 0.75 ``strong``, >= 0.6 ``moderate``, else ``weak``.
"""

from __future__ import annotations

import math
from functools import lru_cache

from core.data.demo import class_names
from core.membership.benchmark import BenchmarkResult
from core.stats.bootstrap import CI_LEVEL
from core.stats.finding import Finding, Level, count, interval, texts_needed, too_few
from core.stats.metrics import MetricResult, bootstrap_ci
from core.store.results import score_or_nan

MIN_PER_CLASS = 5
"""Fewer member or non-member texts than this and the finding is inconclusive: with so few, a percentile
bootstrap re-draws the same handful of texts and its interval says nothing."""
STRONG_LOWER = 0.75
MODERATE_LOWER = 0.6
NONE_UPPER = 0.6
NONE_LOWER = 0.4
"""No-effect margin of the best detector's AUROC: ``none`` needs its whole 95% interval inside (0.4, 0.6).

Why 0.6: an AUROC of 0.6 is where the published detectors start to count as working on a benchmark
(Min-K%++ on WikiMIA reaches 0.6–0.8; the blind baseline on a well-drawn split sits near 0.5), and the
``moderate`` threshold for the interval's lower end. Why the lower end too: an interval reaching below 0.4
is too wide to rule anything out (the same data allow an AUROC well above 0.5 for a score turned round),
so ``none`` needs the interval tight around chance on both sides."""
CHANCE = 0.5
SELECTION_RESAMPLES = 4000
"""Resamples for the widened interval: its tails hold 0.05/k of them each (about 6 of 4000 for 16 detectors),
where the 1000 of a plain 95% interval would leave one or two."""


def best_detector(result: BenchmarkResult) -> tuple[str, MetricResult] | None:
    """The method with the highest AUROC (the baseline and the ensemble are not detectors of their own)."""
    scored = [(key, m) for key, m in result.metrics.items() if m is not None]
    return max(scored, key=lambda item: item[1].auroc) if scored else None


def selection_adjusted_ci(result: BenchmarkResult, key: str) -> tuple[float, float]:
    """The AUROC interval of detector ``key`` at level 1 − 0.05/k, k the number of detectors with a score.

    Why: the verdict follows the best of k detectors, chosen after seeing the data. Among 16 detectors that
    know nothing, the best one's plain 95% interval misses chance far more often than 1 time in 20 (on a small
    set, "weak evidence" from a random model). Widening each interval to 1 − 0.05/k (Bonferroni) keeps the
    chance of any of them missing at 5% whatever the detectors' correlation. A result without per-text scores
    (built by hand) keeps its plain interval.
    """
    metric = result.metrics[key]
    if metric is None:
        raise ValueError(f"Detector {key} has no AUROC.")
    detectors = sum(m is not None for m in result.metrics.values())
    rows = [(int(s.label), score_or_nan(s.scores.get(key))) for s in result.samples if s.label is not None]
    if detectors <= 1 or all(math.isnan(score) for _, score in rows):
        return metric.ci
    labels, scores = zip(*rows, strict=True)
    return _widened_ci(labels, scores, 1 - (1 - CI_LEVEL) / detectors)


@lru_cache(maxsize=64)
def _widened_ci(labels: tuple[int, ...], scores: tuple[float, ...], level: float) -> tuple[float, float]:
    """Cached: a page draws the same run's verdict on every rerun."""
    return bootstrap_ci(labels, scores, n_resamples=SELECTION_RESAMPLES, level=level)


def wording_rivals_detectors(result: BenchmarkResult) -> bool:
    """True when the model-free blind baseline is above chance (its interval's lower end above 0.5) and
    matches or beats the best detector's AUROC: wording alone may explain every score (rule 4 above). The
    one test of it: the verdict, the page's note and the report's note all ask this function."""
    best = best_detector(result)
    baseline = result.blind_baseline
    return best is not None and baseline is not None and baseline.ci[0] > CHANCE and baseline.auroc >= best[1].auroc


def membership_finding(result: BenchmarkResult) -> Finding:
    best = best_detector(result)
    names = class_names(result.dataset)
    labels = result.labels
    n, n_members = result.n, sum(labels)
    n_non_members = len(labels) - n_members
    n_detectors = len(result.method_keys)
    # What the verdict rests on: another sample or detector set is another question, and may read another level.
    sizes = (
        f"{n} texts ({n_members} members, {n_non_members} non-members), "
        f"{n_detectors} detector{'s' if n_detectors != 1 else ''}"
    )
    baseline = result.blind_baseline
    evidence = []
    if best is not None:
        best_label, best_metric = result.method_labels.get(best[0], best[0]), best[1]
        adjusted = selection_adjusted_ci(result, best[0])
        detectors = sum(m is not None for m in result.metrics.values())
        picked = f", allowing for picking the best of {detectors} detectors" if adjusted != best_metric.ci else ""
        evidence.append(
            f"best detector: {best_label}, AUROC {best_metric.auroc:.2f} "
            f"(95% CI {best_metric.ci[0]:.2f}–{best_metric.ci[1]:.2f}"
            + (f"; {adjusted[0]:.2f}–{adjusted[1]:.2f}{picked})" if picked else ")")
        )
    if baseline is not None:
        evidence.append(
            f"blind baseline (wording alone, no model): AUROC {baseline.auroc:.2f} "
            f"(95% CI {baseline.ci[0]:.2f}–{baseline.ci[1]:.2f})"
        )
    evidence.append(sizes)
    parts = []
    if best is not None:
        parts.append(f"best detector {best_label}: AUROC {best_metric.auroc:.2f} ({interval(*adjusted)}{picked})")
    if baseline is not None:
        parts.append(f"blind baseline AUROC {baseline.auroc:.2f} ({interval(*baseline.ci)})")
    numbers = " · ".join([*parts, sizes])
    caveats = []
    shared = result.n_shared_texts or 0
    if n and shared >= n:
        return Finding(
            "inconclusive",
            f"Cannot tell: members and non-members hold the same texts (all {n} appear in both classes), so "
            "nothing can tell them apart.",
            tuple(evidence),
            ("Check the label column: each text should be either a member or a non-member.", *result.notes),
            numbers,
        )
    if shared:
        caveats.append(
            f"{shared} of the {n} texts appear word for word in both classes (as a member and as a "
            "non-member): no detector can separate those, so they pull every AUROC toward 0.50."
        )
    if min(n_members, n_non_members) < MIN_PER_CLASS:
        return Finding(
            "inconclusive",
            too_few(
                f"{count(n_members, 'member text')} and {count(n_non_members, 'non-member text')}",
                f"{MIN_PER_CLASS} of each",
            ),
            tuple(evidence),
            (*caveats, *result.notes),
            numbers,
        )
    if best is None:
        return Finding(
            "inconclusive",
            "Cannot tell: no detector produced a usable score on these texts.",
            tuple(evidence),
            (*caveats, *result.notes),
            numbers,
        )
    metric = best[1]
    lo, hi = adjusted
    caveats += [
        *(
            [
                f"The best of {detectors} detectors is picked after seeing the data, so the verdict follows its "
                "interval widened to allow for the pick."
            ]
            if picked
            else []
        ),
        "AUROC says how well the scores separate the two sets, not which single text was seen.",
    ]
    if baseline is None:
        caveats.append("No blind baseline could be computed, so a confounded split cannot be ruled out.")
    above_chance = baseline is not None and baseline.ci[0] > CHANCE
    if baseline is not None and wording_rivals_detectors(result):
        return _confounded(metric, baseline, evidence, caveats, sizes)
    if lo <= CHANCE:
        if NONE_LOWER < lo and hi < NONE_UPPER:
            return Finding(
                "none",
                f"No sign that the model saw {names.members}: its scores tell them from {names.non_members} no "
                "better than guessing, and a useful difference would have shown.",
                tuple(evidence),
                tuple(caveats),
                numbers,
            )
        if baseline is not None and baseline.auroc > 0.6:
            caveats.append(f"Wording alone already reaches AUROC {baseline.auroc:.2f} on these sets.")
        if hi < CHANCE:
            return Finding(
                "inconclusive",
                f"Cannot tell: the scores rank {names.non_members} as more familiar to the model than "
                f"{names.members}, which memory cannot explain; check the labels and how the sets were drawn.",
                tuple(evidence),
                tuple(caveats),
                numbers,
            )
        # Above chance, the interval settles on either side of 0.5 or 0.6; below it, only inside 0.4 counts.
        needed = texts_needed(
            n, metric.auroc, adjusted, (CHANCE, NONE_UPPER) if metric.auroc >= CHANCE else (NONE_LOWER,)
        )
        more = (
            f" about {needed} texts would be needed to settle it ({needed - n} more)."
            if needed
            else " more texts would be needed to settle it."
        )
        return Finding(
            "inconclusive",
            f"Cannot tell yet: with {n} texts the result still includes chance (guessing);{more}",
            tuple(evidence),
            tuple(caveats),
            numbers,
        )
    if baseline is not None and baseline.auroc >= lo:
        if above_chance:
            return _confounded(metric, baseline, evidence, caveats, sizes)
        caveats.append(
            f"Wording alone reaches AUROC {baseline.auroc:.2f} (95% CI {baseline.ci[0]:.2f}–"
            f"{baseline.ci[1]:.2f}); its interval includes chance, but a confounded split is not ruled "
            "out."
        )
    level: Level = "strong" if lo >= STRONG_LOWER else "moderate" if lo >= MODERATE_LOWER else "weak"
    words = {"strong": "Strong", "moderate": "Moderate", "weak": "Weak"}[level]
    how = {"strong": "far better", "moderate": "clearly better", "weak": "somewhat better"}[level]
    return Finding(
        level,
        f"{words} evidence that the model saw {names.members}: its scores tell them from {names.non_members} "
        f"{how} than guessing.",
        tuple(evidence),
        tuple(caveats),
        numbers,
    )


def _confounded(
    metric: MetricResult, baseline: MetricResult, evidence: list[str], caveats: list[str], sizes: str
) -> Finding:
    return Finding(
        "confounded",
        "Not a fair test: wording alone separates these sets, so the scores may reflect how the sets were split "
        "rather than what the model saw.",
        tuple(evidence),
        (
            "Use members and non-members from the same distribution (e.g. the same source, split at random or by "
            "a date the wording cannot reveal).",
            *caveats,
        ),
        f"blind baseline AUROC {baseline.auroc:.2f} ({interval(*baseline.ci)}) · best detector AUROC "
        f"{metric.auroc:.2f} ({interval(*metric.ci)}) · {sizes}",
    )
