"""The verdict of a multiple-choice memorization run, in "out of N options" a stakeholder can follow.

A model that never saw a benchmark finishes its options about as well in any order; the shuffled run is
that yardstick. Per question, the published-order score minus the shuffled score is resampled (paired
bootstrap, the project's one bootstrap) for a 95% interval of the drop:
- fewer than ``MIN_QUESTIONS`` questions -> ``inconclusive``, whatever the intervals say;
- exact completions drop, interval above 0 -> graded by its lower end: >= 0.25 options per question
  ``strong``, >= 0.1 ``moderate``, else ``weak``;
- only next-token hits drop -> ``weak``;
- neither interval excludes 0 -> ``none``.
"""

from __future__ import annotations

import numpy as np

from core.mcq.study import MCQReport
from core.stats.bootstrap import DEFAULT_SEED, percentile_interval, resample_indices
from core.stats.finding import Finding, count, too_few

MIN_QUESTIONS = 5
"""Fewer questions than this and the finding is inconclusive. The paired bootstrap resamples questions: four
questions allow only 35 distinct resamples (five allow 126), so the interval's ends are one or two of a
handful of averages, and a single memorised question decides the verdict. Five is also the smallest set per
class any LeakLens test gives a verdict on (membership: texts per class; loss delta: problems per set)."""
STRONG_DROP = 0.25
MODERATE_DROP = 0.1
SMALL_BENCHMARK = 30


def score_drop(report: MCQReport, kind: str) -> tuple[float, tuple[float, float]]:
    """Mean per-question score in the published order minus after shuffling, with its 95% interval."""
    original = np.array([r.score(kind) for r in report.original.results], dtype=float)
    shuffled = np.array([r.score(kind) for r in report.shuffled.results], dtype=float)
    diffs = original - shuffled
    rng = np.random.default_rng(DEFAULT_SEED)
    boot = diffs[resample_indices(rng, diffs.size)].mean(axis=1)
    return float(diffs.mean()), percentile_interval(boot)


def mcq_finding(report: MCQReport) -> Finding:
    n, k = len(report.original.results), report.original.n_options
    before = report.original.summary("completion").mean
    after = report.shuffled.summary("completion").mean
    drop, (lo, hi) = score_drop(report, "completion")
    token_drop, (token_lo, token_hi) = score_drop(report, "next_token")
    evidence = [
        f"options finished word for word: {before:.2f} of {k} per question in the published order, "
        f"{after:.2f} of {k} shuffled (drop {drop:+.2f}, 95% CI {lo:+.2f} to {hi:+.2f})",
        f"next word right: {report.original.summary('next_token').mean:.2f} of {k} published, "
        f"{report.shuffled.summary('next_token').mean:.2f} of {k} shuffled (drop {token_drop:+.2f}, "
        f"95% CI {token_lo:+.2f} to {token_hi:+.2f})",
        f"{n} questions",
    ]
    if report.permutation is not None:
        p = report.permutation
        evidence.append(f"the published option order is the most likely of {p.n_orders} for {p.top1_fraction:.0%} "
                        f"of questions (chance {1 / p.n_orders:.0%}, p = {p.p_value_top1:.2g})")
    caveats = ["Shuffling also moves each option after different text, which can change how predictable it is "
               "a little even for a model that never saw the benchmark."]
    if n < SMALL_BENCHMARK:
        caveats.append(f"Only {n} questions: the interval is rough; use at least {SMALL_BENCHMARK}.")
    if n < MIN_QUESTIONS:
        return Finding("inconclusive", too_few(count(n, "question"), str(MIN_QUESTIONS)), tuple(evidence),
                       tuple(caveats))
    if lo > 0:
        level = "strong" if lo >= STRONG_DROP else "moderate" if lo >= MODERATE_DROP else "weak"
        return Finding(
            level,
            f"{level.capitalize()} evidence of memorised options: the model finishes {before:.2f} of {k} options "
            f"per question word for word in the published order, but only {after:.2f} of {k} once they are "
            "shuffled.",
            tuple(evidence), tuple(caveats),
        )
    if token_lo > 0:
        return Finding(
            "weak",
            f"Weak evidence of memorised options: the model guesses the next word of an option more often in the "
            f"published order ({token_drop:+.2f} of {k} per question) but finishes no more options word for word.",
            tuple(evidence), tuple(caveats),
        )
    return Finding(
        "none",
        f"No sign of memorised options: the model finishes {before:.2f} of {k} options per question word for word "
        f"in the published order and {after:.2f} of {k} shuffled, no significant difference.",
        tuple(evidence), tuple(caveats),
    )
