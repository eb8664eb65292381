"""The verdict of a benchmark-order test, in words a stakeholder can repeat.

Rules, in order:
- the published order follows a pattern a model could know without the file (``confounds``) ->
  ``confounded``: the guarantee does not hold, so neither a preference nor its absence means what it says;
- fewer shards than ``shards_needed()`` (5) -> ``inconclusive``: even a canonical order likelier in every
  shard could not reach p < 0.05 without assuming normal differences (a sign test's best is 0.5^n);
- shards whose orders all score the same (identical examples: no order can be preferred) have no power: fewer
  than ``shards_needed()`` shards with power -> ``inconclusive``;
- ``strong`` / ``moderate`` / ``weak`` need both the one-sided t-test's p < 0.001 / 0.01 / 0.05 and the 99.9% /
  99% / 95% interval of the advantage per example above zero: every level of evidence has the 95% interval the
  finding shows above zero, so a level never contradicts its own interval, and a model that never read the file
  reads ``weak`` or more at most 2.5% of the time;
- the 95% interval of the mean difference per example lies below ``NONE_MARGIN`` -> ``none``;
- otherwise ``inconclusive``, with about how many more shards would settle it (past ten times the shards
  it had, that no benchmark file fills so many: any preference is too small to show).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.benchmark_order.confounds import OrderPattern
from core.benchmark_order.statistic import OrderTestResult, shards_needed, t_interval
from core.stats.finding import Finding, Level, count, interval, more_would_settle, texts_needed, too_few

STRONG_P, MODERATE_P, WEAK_P = 0.001, 0.01, 0.05
OUT_OF_REACH = 10
"""More than this many times the shards a run had is more than any benchmark file could add: the headline says
the preference, if any, is too small to show rather than leaving a reader with a four-digit count."""
LEVEL_RULES: tuple[tuple[Level, float, float], ...] = (
    ("strong", STRONG_P, 0.999),
    ("moderate", MODERATE_P, 0.99),
    ("weak", WEAK_P, 0.95),
)
"""(level, the p-value below which it may be read, the confidence of the interval that must lie above zero)."""
NONE_MARGIN = 0.25
"""No-effect margin, nats per example: ``none`` needs the whole 95% interval of the canonical order's advantage
per example below 0.25, i.e. the published order at most about 1.3 times as likely per example as a shuffle.
Why 0.25: a model that trained on the file gains far more (the tiny test model fine-tuned on 120 rows: about
5 nats per example), while a model that never saw it gains nothing on average; an advantage below a quarter
of a nat per example is too small to call the file learnt in its order."""
GUARANTEE = (
    "If the model never saw the file, its published order is no likelier than a shuffle, so it reads weak "
    "evidence or more at most 2.5% of the time (moderate 0.5%, strong 0.05%) — provided the order itself carries no "
    "pattern a model could know without the file (sorted by subject or difficulty, numbered questions)."
)
SCOPE = (
    "A preference for the published order shows the model read the file as a sequence (pre-training on the "
    "benchmark file, or a copy of it); a model that saw the examples only one by one, shuffled, leaves no such "
    "trace, so a `none` does not rule out that."
)


def per_example_interval(result: OrderTestResult, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and t interval (95% by default) of each shard's difference divided by its examples (nats per
    example)."""
    values = result.per_example_differences
    low, high = t_interval(values, confidence)
    return float(np.mean(values)), low, high


def evidence_level(result: OrderTestResult) -> Level | None:
    """The strongest level whose p-value and interval rules both hold (``LEVEL_RULES``), or None."""
    p = result.p_value
    for level, p_below, confidence in LEVEL_RULES:
        if p < p_below and per_example_interval(result, confidence)[1] > 0:
            return level
    return None


def order_finding(result: OrderTestResult, benchmark: str, patterns: Sequence[OrderPattern] = ()) -> Finding:
    n = len(result.shards)
    p = result.p_value
    level = evidence_level(result)
    mean, lo, hi = per_example_interval(result)
    favour = f"{result.canonical_first} of {count(n, 'shard')}"
    evidence = (
        f"the published order was likelier than the average shuffle in {favour}",
        f"mean advantage {result.mean_difference:+.2f} nats per shard ({mean:+.3f} per example, "
        f"95% CI {lo:+.3f} to {hi:+.3f})",
        f"{result.n_examples} examples in {count(n, 'shard')}, up to {result.permutations} shuffles each",
    )
    numbers = (
        f"p = {p:.2g} (one-sided t-test over shards) · sign test p = {result.sign_p_value:.2g} · "
        f"advantage {mean:+.3f} nats per example ({interval(lo, hi, '+.3f')}) · no-effect margin "
        f"{NONE_MARGIN:g} · {count(n, 'shard')}"
    )
    caveats = (GUARANTEE, SCOPE)
    if patterns:
        reasons = "; ".join(pattern.reason() for pattern in patterns)
        return Finding(
            "confounded",
            f"Not a fair test: the published order of {benchmark} follows a pattern a model could know without "
            f"reading the file ({patterns[0].what} {patterns[0].direction} through the shards), so a preference for "
            "that order would not show that the model saw it.",
            (*evidence, f"order pattern: {reasons}"),
            (
                "The test cannot tell memory of the file from knowledge of the pattern: only a file (or a part of "
                "one) whose order follows no such pattern can be tested this way.",
                *caveats,
            ),
            numbers,
        )
    needed = shards_needed()
    if n < needed:
        return Finding(
            "inconclusive",
            too_few(count(n, "shard"), f"{needed} shards"),
            evidence,
            (
                f"With {count(n, 'shard')}, even a published order likelier in every shard reaches only "
                f"p = {result.smallest_reachable_p:.2g} without assuming normal differences.",
                *caveats,
            ),
            numbers,
        )
    powered = sum(any(v != shard.canonical for v in shard.shuffled) for shard in result.shards)
    if powered < needed:
        return Finding(
            "inconclusive",
            f"Cannot tell: in {n - powered} of {count(n, 'shard')} every order of the examples reads the same "
            f"(identical examples), so no order can be preferred; the test needs {needed} shards whose orders "
            "differ.",
            evidence,
            caveats,
            numbers,
        )
    if level is not None:
        return Finding(
            level,
            f"{level.capitalize()} evidence that the model has seen {benchmark}: it prefers the file's own order of "
            f"examples to shuffles of it (in {favour}), which a model that never read the file has no reason to do.",
            evidence,
            caveats,
            numbers,
        )
    if hi < NONE_MARGIN:
        return Finding(
            "none",
            f"No sign that the model has seen {benchmark} in its published order: shuffles of it are as likely "
            f"as the file's own order.",
            evidence,
            caveats,
            numbers,
        )
    more = texts_needed(n, mean, (lo, hi), (0.0, NONE_MARGIN))
    tail = more_would_settle(more, n, "shards")
    if more and more > OUT_OF_REACH * n:  # "3858 more" tells a reader nothing: say what it means
        tail += ", far more than one benchmark file fills, so any preference is too small to show here"
    return Finding(
        "inconclusive",
        f"Cannot tell yet: with {count(n, 'shard')} the measurement is too rough to say whether the model prefers "
        f"the published order of {benchmark}; {tail}.",
        evidence,
        caveats,
        numbers,
    )
