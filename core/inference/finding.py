"""The verdict of a dataset-inference run, in the words an author or auditor asked the question in.

Rules, in order:
- fewer than ``MIN_TEXTS_PER_SET`` texts in either set -> ``inconclusive``, whatever the p-value says;
- the blind baseline (a model-free classifier) separates suspect from validation texts, its 95% interval
  above 0.5 (chance) -> ``confounded``: the sets differ in wording, so a small p-value may come from that
  (the same "blind baseline above chance" rule as the membership finding; one whose interval includes
  chance never makes a run ``confounded``);
- p < 0.01 -> ``strong``, p < 0.05 -> ``moderate``, p < 0.1 -> ``weak``;
- otherwise ``inconclusive`` when the measured effect would need more texts per set than were given,
  else ``none``.

A text found in both sets never gets this far: ``core.inference.run`` refuses the two sets with an error
naming how many texts they share.
"""

from __future__ import annotations

from core.inference.statistic import InferenceResult, texts_needed
from core.stats.finding import Finding, count, too_few
from core.stats.metrics import MetricResult

MIN_TEXTS_PER_SET = 10
"""Fewer suspect or validation texts than this and the finding is inconclusive: each split fits on one half
and tests on the other, so 10 texts per set give each half the 5 texts per set a membership verdict needs
per class. (The test itself refuses fewer than ``core.inference.statistic.MIN_PER_SET``; between the two it
runs, but its p-value is not read as a verdict.)"""
STRONG_P, MODERATE_P, WEAK_P = 0.01, 0.05, 0.1
TEXTS_PER_DETECTOR = 5
"""Below this many texts per set-half for each detector combined, the learnt combination tends to overfit."""
SAME_DISTRIBUTION = ("Valid only if the validation texts come from the same distribution as the suspect texts "
                     "(same source, style and period) and were never published or used for training.")


def _p(value: float) -> str:
    """``p = 0.003``, or ``p < 0.0001`` below what a reader needs to see."""
    return f"p = {value:.2g}" if value >= 1e-4 else "p < 0.0001"


def inference_finding(result: InferenceResult, blind: MetricResult | None, *, suspect: str = "the suspect set",
                      validation: str = "the validation set") -> Finding:
    """The finding for one run; ``blind`` is the model-free baseline between the two sets."""
    texts = f"{result.n_suspect} + {result.n_validation} texts"
    needed = texts_needed(result.effect_size)
    evidence = [
        f"{_p(result.p_value)} (twice the median of {len(result.split_p_values)} split p-values) over {texts}",
        f"effect on held-out texts: Cohen's d = {result.effect_size:+.2f}",
    ]
    if blind is not None:
        evidence.append(f"blind baseline (wording alone, no model): AUROC {blind.auroc:.2f} "
                        f"(95% CI {blind.ci[0]:.2f}–{blind.ci[1]:.2f})")
    top = ", ".join(f"{name} {weight:+.2f}" for name, weight in result.top_features(3))
    evidence.append(f"weightiest detectors: {top}")
    caveats = [SAME_DISTRIBUTION]
    if result.left_out_features:
        caveats.append(f"Left out (constant or often missing): {', '.join(result.left_out_features)}.")
    per_half = min(result.n_suspect, result.n_validation) // 2
    if per_half < TEXTS_PER_DETECTOR * len(result.features):
        caveats.append(f"{len(result.features)} detectors are combined from {per_half} texts per set in each half: "
                       "the combination may overfit and lose power. With few texts, combine fewer detectors "
                       "(e.g. loss, zlib, Min-K%, Min-K%++) or add texts.")
    if result.n_texts_dropped:
        caveats.append(f"{result.n_texts_dropped} text(s) left out: a detector had no score for them.")
    if min(result.n_suspect, result.n_validation) < MIN_TEXTS_PER_SET:
        return Finding(
            "inconclusive",
            too_few(f"{count(result.n_suspect, 'suspect text')} and {count(result.n_validation, 'validation text')}",
                    f"{MIN_TEXTS_PER_SET} of each"),
            tuple(evidence), tuple(caveats),
        )
    if blind is None:
        caveats.append("The blind baseline could not be computed, so a wording difference between the sets "
                       "cannot be ruled out.")
    elif blind.ci[0] > 0.5:
        return Finding(
            "confounded",
            f"Confounded: wording alone separates {suspect} from {validation} (a model-free classifier reaches "
            f"AUROC {blind.auroc:.2f}), so the p-value ({_p(result.p_value)}) cannot say whether the model saw "
            f"{suspect}.",
            tuple(evidence),
            ("Use validation texts from the same distribution as the suspect texts, e.g. held-back parts of the "
             "same work or a private split written at the same time.", *caveats),
        )
    if result.p_value < WEAK_P:
        level = "strong" if result.p_value < STRONG_P else "moderate" if result.p_value < MODERATE_P else "weak"
        return Finding(
            level,
            f"{level.capitalize()} evidence that the model trained on {suspect}: its texts look more familiar to "
            f"the model than the validation texts ({_p(result.p_value)}, {texts}).",
            tuple(evidence), tuple(caveats),
        )
    smallest = min(result.n_suspect, result.n_validation)
    if needed is not None and needed > smallest:
        return Finding(
            "inconclusive",
            f"Inconclusive: no significant difference with {texts} ({_p(result.p_value)}); a difference of "
            f"this size would need about {needed} texts per set to show.",
            tuple(evidence), tuple(caveats),
        )
    return Finding(
        "none",
        f"No sign that the model trained on {suspect}: its texts look no more familiar to the model than the "
        f"validation texts ({_p(result.p_value)}, {texts}).",
        tuple(evidence),
        ("No significant difference is not proof of non-use: a model that saw the texts once, long ago, may "
         "leave no measurable trace.", *caveats),
    )
