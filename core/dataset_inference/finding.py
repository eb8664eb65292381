"""The verdict of a dataset-inference run, in the words an author or auditor asked the question in.

Rules, in order:
- fewer than ``MIN_TEXTS_PER_SET`` texts in either set -> ``inconclusive``, whatever the p-value says;
- the blind baseline (a model-free classifier) separates suspect from validation texts, its 95% interval
  above 0.5 (chance) -> ``confounded``: the sets differ in wording, so a small p-value may come from that
  (the same "blind baseline above chance" rule as the membership finding; one whose interval includes
  chance never makes a run ``confounded``);
- p < 0.01 -> ``strong``, p < 0.05 -> ``moderate``, p < 0.1 -> ``weak``;
- the 95% interval of the held-out effect (Cohen's d) lies below ``NONE_EFFECT`` -> ``none``: with the
  user's number of texts, the test would have shown a small effect, and the data rule it out;
- otherwise ``inconclusive``, with about how many more texts per set would settle it.

A text found in both sets never gets this far: ``core.dataset_inference.run`` refuses the two sets with an error
naming how many texts they share.
"""

from __future__ import annotations

import math

from core.dataset_inference.statistic import InferenceResult
from core.stats.finding import Finding, Level, count, interval, texts_needed, too_few
from core.stats.metrics import MetricResult

MIN_TEXTS_PER_SET = 10
"""Fewer suspect or validation texts than this and the finding is inconclusive: each split fits on one half
and tests on the other, so 10 texts per set give each half the 5 texts per set a membership verdict needs
per class. (The test itself refuses fewer than ``core.dataset_inference.statistic.MIN_PER_SET``; between the two it
runs, but its p-value is not read as a verdict.)"""
STRONG_P, MODERATE_P, WEAK_P = 0.01, 0.05, 0.1
NONE_EFFECT = 0.2
"""No-effect margin, as Cohen's d of the combined score on held-out texts: ``none`` needs the effect's whole
95% interval below 0.2. Why 0.2: it is Cohen's conventional "small" effect, the suspect set's average text
scoring a fifth of a standard deviation above the validation set's (two sets that overlap by 92%; for normal
scores, an AUROC of 0.56 between them, inside the membership test's 0.4–0.6 margin). A set-level test over
hundreds of texts exists to find small effects, so a margin any wider would call a real, small trace "none".
The interval is d ± 1.96 standard errors, the standard error of d between two held-out halves of m texts
each being sqrt(2/m + d²/4m) (Hedges & Olkin 1985): its upper end falls below 0.2 only when the texts given
would have shown an effect of that size, so ``none`` also says the test had the power to see one."""
TEXTS_PER_DETECTOR = 5
"""Below this many texts per set-half for each detector combined, the learnt combination tends to overfit."""
SAME_DISTRIBUTION = (
    "Valid only if the validation texts come from the same distribution as the suspect texts "
    "(same source, style and period) and were never published or used for training."
)


def _p(value: float) -> str:
    """``p = 0.003``, or ``p < 0.0001`` below what a reader needs to see."""
    return f"p = {value:.2g}" if value >= 1e-4 else "p < 0.0001"


def effect_interval(result: InferenceResult) -> tuple[float, float]:
    """Approximate 95% interval of the held-out Cohen's d: d ± 1.96 sqrt(2/m + d²/4m), m texts per set-half."""
    d, m = result.effect_size, max(min(result.n_suspect, result.n_validation) // 2, 1)
    half = 1.96 * math.sqrt(2 / m + d * d / (4 * m)) if math.isfinite(d) else math.inf
    return d - half, d + half


def inference_finding(
    result: InferenceResult,
    blind: MetricResult | None,
    *,
    suspect: str = "the suspect set",
    validation: str = "the validation set",
) -> Finding:
    """The finding for one run; ``blind`` is the model-free baseline between the two sets.

    ``suspect`` and ``validation`` name the sets in the headline: pass their human labels (a demo's title, the
    name the user gave), not file names.
    """
    texts = f"{result.n_suspect} + {result.n_validation} texts"
    d_lo, d_hi = effect_interval(result)
    evidence = [
        f"{_p(result.p_value)} (twice the median of {len(result.split_p_values)} split p-values) over {texts}",
        f"effect on held-out texts: Cohen's d = {result.effect_size:+.2f}",
    ]
    numbers = (
        f"{_p(result.p_value)} over {texts} · Cohen's d {result.effect_size:+.2f} "
        f"({interval(d_lo, d_hi, '+.2f')}) · no-effect margin d < {NONE_EFFECT:g}"
    )
    if blind is not None:
        evidence.append(
            f"blind baseline (wording alone, no model): AUROC {blind.auroc:.2f} "
            f"(95% CI {blind.ci[0]:.2f}–{blind.ci[1]:.2f})"
        )
        numbers += f" · blind baseline AUROC {blind.auroc:.2f} ({interval(*blind.ci)})"
    top = ", ".join(f"{name} {weight:+.2f}" for name, weight in result.top_features(3))
    evidence.append(f"weightiest detectors: {top}")
    caveats = [SAME_DISTRIBUTION]
    if result.left_out_features:
        caveats.append(f"Left out (constant or often missing): {', '.join(result.left_out_features)}.")
    per_half = min(result.n_suspect, result.n_validation) // 2
    if per_half < TEXTS_PER_DETECTOR * len(result.features):
        caveats.append(
            f"{len(result.features)} detectors are combined from {per_half} texts per set in each half: "
            "the combination may overfit and lose power. With few texts, combine fewer detectors "
            "(e.g. loss, zlib, Min-K%, Min-K%++) or add texts."
        )
    if result.n_texts_dropped:
        caveats.append(f"{result.n_texts_dropped} text(s) left out: a detector had no score for them.")
    smallest = min(result.n_suspect, result.n_validation)
    if smallest < MIN_TEXTS_PER_SET:
        return Finding(
            "inconclusive",
            too_few(
                f"{count(result.n_suspect, 'suspect text')} and {count(result.n_validation, 'validation text')}",
                f"{MIN_TEXTS_PER_SET} of each",
            ),
            tuple(evidence),
            tuple(caveats),
            numbers,
        )
    if blind is None:
        caveats.append(
            "The blind baseline could not be computed, so a wording difference between the sets cannot be ruled out."
        )
    elif blind.ci[0] > 0.5:
        return Finding(
            "confounded",
            f"Not a fair test: wording alone separates {suspect} from {validation}, so this cannot say whether "
            f"the model trained on {suspect}.",
            tuple(evidence),
            (
                "Use validation texts from the same distribution as the suspect texts, e.g. held-back parts of the "
                "same work or a private split written at the same time.",
                *caveats,
            ),
            numbers,
        )
    if result.p_value < WEAK_P:
        level: Level = "strong" if result.p_value < STRONG_P else "moderate" if result.p_value < MODERATE_P else "weak"
        return Finding(
            level,
            f"{level.capitalize()} evidence that the model trained on {suspect}: its texts look more familiar to "
            "the model than the validation texts.",
            tuple(evidence),
            tuple(caveats),
            numbers,
        )
    if d_hi < NONE_EFFECT:
        return Finding(
            "none",
            f"No sign that the model trained on {suspect}: its texts look no more familiar to the model than the "
            f"validation texts, and with {texts} even a small difference would have shown.",
            tuple(evidence),
            (
                "No difference is not proof of non-use: a model that saw the texts once, long ago, may leave no "
                "measurable trace.",
                *caveats,
            ),
            numbers,
        )
    needed = (
        texts_needed(smallest, result.effect_size, (d_lo, d_hi), (0.0, NONE_EFFECT))
        if math.isfinite(result.effect_size)
        else None
    )
    more = f"about {needed - smallest} more texts per set would settle it" if needed else "more texts would settle it"
    return Finding(
        "inconclusive",
        f"Cannot tell yet: with {texts} the test is too weak to rule out that the model trained on {suspect}; {more}.",
        tuple(evidence),
        tuple(caveats),
        numbers,
    )
