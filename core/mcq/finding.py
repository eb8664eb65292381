"""The verdict of a multiple-choice memorisation run, in "out of N options" a stakeholder can follow.

A model that never saw a benchmark finishes its options about as well in any order; the shuffled run is
that yardstick. Per question, the published-order score minus the shuffled score is resampled (paired
bootstrap, the project's one bootstrap) for a 95% interval of the drop:
- fewer than ``MIN_QUESTIONS`` questions -> ``inconclusive``, whatever the intervals say;
- exact completions drop, interval above 0 -> graded by its lower end: >= 0.25 options per question
  ``strong``, >= 0.1 ``moderate``, else ``weak``;
- only next-token hits drop -> ``weak``;
- the exact-completion interval lies below ``NONE_MARGIN`` -> ``none``: the data rule out a drop of a useful
  size;
- otherwise (it includes 0 and reaches ``NONE_MARGIN`` or above) -> ``inconclusive``, with about how many
  more questions would settle it.
"""

from __future__ import annotations

import numpy as np

from core.mcq.completion import ProbeKind
from core.mcq.permutation import PermutationResult
from core.mcq.study import MCQReport
from core.stats.bootstrap import DEFAULT_SEED, percentile_interval, resample_indices
from core.stats.finding import Finding, Level, count, interval, more_would_settle, texts_needed, too_few
from core.stats.proportion import NONE_MARGIN as PROPORTION_MARGIN
from core.stats.proportion import ShareReading
from core.stats.sign_flip import sign_flip_p_value

MIN_QUESTIONS = 5
"""Fewer questions than this and the finding is inconclusive. The paired bootstrap resamples questions: four
questions allow only 35 distinct resamples (five allow 126), so the interval's ends are one or two of a
handful of averages, and a single memorised question decides the verdict. Five is also the smallest set per
class any LeakLens test gives a verdict on (membership: texts per class; loss delta: problems per set)."""
STRONG_DROP = 0.25
MODERATE_DROP = 0.1
NONE_MARGIN = 0.05
"""No-effect margin of the drop in options finished word for word, per question: ``none`` needs the whole 95%
interval below 0.05. The drop is directional (only a drop points at memorised options), so the margin bounds
the upper end. Why 0.05: it is one option finished word for word in twenty questions, beyond what the model
finishes once the options are shuffled (a benchmark memorised in so few places says nothing about the rest),
and half the ``moderate`` threshold (0.1), so ``none`` and an exposure level never sit side by side."""
SMALL_BENCHMARK = 30


def per_question_drops(report: MCQReport, kind: ProbeKind) -> np.ndarray:
    """Each question's score in the published order minus its score after shuffling."""
    original = np.array([r.score(kind) for r in report.original.results], dtype=float)
    shuffled = np.array([r.score(kind) for r in report.shuffled.results], dtype=float)
    return original - shuffled


def score_drop(report: MCQReport, kind: ProbeKind) -> tuple[float, tuple[float, float]]:
    """Mean per-question score in the published order minus after shuffling, with its 95% interval."""
    diffs = per_question_drops(report, kind)
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
        evidence.append(
            f"the published option order is the most likely of {p.n_orders} for {p.top1_fraction:.0%} "
            f"of questions (chance {1 / p.n_orders:.0%}, p = {p.p_value_top1:.2g})"
        )
    caveats = [
        "Shuffling also moves each option after different text, which can change how predictable it is "
        "a little even for a model that never saw the benchmark."
    ]
    if n < SMALL_BENCHMARK:
        caveats.append(f"Only {n} questions: the interval is rough; use at least {SMALL_BENCHMARK}.")
    numbers = (
        f"finished word for word: {before:.2f} of {k} options per question published, {after:.2f} "
        f"shuffled · drop {drop:+.2f} ({interval(lo, hi, '+.2f')}) · no-effect margin {NONE_MARGIN:g} · "
        f"{count(n, 'question')}"
    )
    if n < MIN_QUESTIONS:
        return Finding(
            "inconclusive", too_few(count(n, "question"), str(MIN_QUESTIONS)), tuple(evidence), tuple(caveats), numbers
        )
    if lo > 0:
        level: Level = "strong" if lo >= STRONG_DROP else "moderate" if lo >= MODERATE_DROP else "weak"
        return Finding(
            level,
            f"{level.capitalize()} evidence of memorised options: the model finishes {before:.2f} of {k} options "
            f"per question word for word in the published order, but only {after:.2f} of {k} once they are "
            "shuffled.",
            tuple(evidence),
            tuple(caveats),
            numbers,
        )
    if token_lo > 0:
        return Finding(
            "weak",
            "Weak evidence of memorised options: the model guesses the next word of an option more often in the "
            "published order, but finishes no more options word for word.",
            tuple(evidence),
            tuple(caveats),
            f"next word right: drop {token_drop:+.2f} of {k} per question ({interval(token_lo, token_hi, '+.2f')})"
            f" · {numbers}",
        )
    if hi < NONE_MARGIN:
        how = "more once they are shuffled" if hi < 0 else "a difference too small to matter"
        return Finding(
            "none",
            f"No sign of memorised options: the model finishes {before:.2f} of {k} options per question word for "
            f"word in the published order and {after:.2f} of {k} shuffled, {how}.",
            tuple(evidence),
            tuple(caveats),
            numbers,
        )
    needed = texts_needed(n, drop, (lo, hi), (0.0, NONE_MARGIN))
    more = more_would_settle(needed, n, "questions")
    return Finding(
        "inconclusive",
        f"Cannot tell yet: with {count(n, 'question')} the measurement is too rough to rule out memorised "
        f"options; {more}.",
        tuple(evidence),
        tuple(caveats),
        numbers,
    )


def drop_p_value(report: MCQReport, kind: ProbeKind = "completion") -> float:
    """One-sided p-value of the drop (``core.stats.sign_flip``): a model that never saw the benchmark has no reason
    to finish a question's options better in the published order than shuffled."""
    return sign_flip_p_value(per_question_drops(report, kind))


def option_order_finding(orders: PermutationResult) -> Finding:
    """Whether each question's published order of options is the likeliest of all its orders more often than
    chance (one in the number of orders), read as a share of questions (``core.stats.proportion``)."""
    n, m = len(orders.questions), orders.n_orders
    hits = sum(q.rank == 1 for q in orders.questions)
    reading = ShareReading(hits, n, 1 / m)
    lo, hi = reading.interval
    evidence = (
        f"the published order of the options is the likeliest of its {m} orders for {hits} of {count(n, 'question')} "
        f"({reading.share:.0%}, 95% interval {lo:.0%}–{hi:.0%}); chance alone gives {1 / m:.0%}",
        f"one-sided binomial p = {reading.p_value:.2g}",
    )
    numbers = (
        f"published order likeliest: {hits} of {n} questions ({interval(lo, hi, '.0%')}) · chance {1 / m:.0%} · "
        f"no-effect margin {PROPORTION_MARGIN:.0%} above chance"
    )
    caveats = ("Ties count against the published order.",)
    if n < MIN_QUESTIONS:
        return Finding("inconclusive", too_few(count(n, "question"), str(MIN_QUESTIONS)), evidence, caveats, numbers)
    level = reading.level
    if level in ("strong", "moderate", "weak"):
        headline = (
            f"{level.capitalize()} evidence the model knows the published order of the options: it finds that "
            f"order the likeliest for {reading.share:.0%} of questions, where chance gives {1 / m:.0%}."
        )
    elif level == "none":
        headline = (
            f"No preference for the published order of the options: it is the likeliest for {reading.share:.0%} of "
            f"questions, about what chance gives ({1 / m:.0%})."
        )
    else:
        needed = reading.items_needed()
        more = more_would_settle(needed, n, "questions")
        headline = f"Cannot tell yet whether the model prefers the published order of the options; {more}."
    return Finding(level, headline, evidence, caveats, numbers)
