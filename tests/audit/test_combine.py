"""The audit's one verdict: Holm's step-down over the tests' p-values, hand-computed values and a slow path that
applies Holm's rejection procedure itself, and the level rule (strongest surviving evidence; ``none`` only when
every part is ``none``; confounded and inconclusive parts named)."""

from __future__ import annotations

import random

import pytest

from core.audit.combine import CombinedVerdict, PartResult, audit_headline, combine_parts, holm_adjusted, joined
from core.audit.plan import EXTRACTION, INFERENCE, LOSS_DELTA, MCQ, OPTION_ORDER, ORDER, OVERLAP
from core.stats.finding import Finding, Level


def part(key: str, level: Level, p: float | None) -> PartResult:
    return PartResult(key, Finding(level, f"{key} reads {level}."), p)


# ------------------------------------------------------------------------------------------------------ Holm


def test_holm_by_hand():
    # p = (0.01, 0.04, 0.03), m = 3. Sorted: 0.01, 0.03, 0.04.
    #   p_(1) = 0.01 -> 3 × 0.01 = 0.03
    #   p_(2) = 0.03 -> 2 × 0.03 = 0.06, max(0.03, 0.06) = 0.06
    #   p_(3) = 0.04 -> 1 × 0.04 = 0.04, max(0.06, 0.04) = 0.06
    # In the order given: (0.03, 0.06, 0.06); at 0.05 only the first is rejected.
    assert holm_adjusted([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    verdict = combine_parts(
        [part(ORDER.key, "strong", 0.01), part(MCQ.key, "weak", 0.04), part(EXTRACTION.key, "weak", 0.03)]
    )
    assert verdict.adjusted == pytest.approx({ORDER.key: 0.03, MCQ.key: 0.06, EXTRACTION.key: 0.06})
    assert verdict.survivors == (ORDER.key,)


def test_holm_by_hand_with_four_and_with_the_cap_at_one():
    # (0.001, 0.2, 0.012, 0.5), m = 4. Sorted: 0.001 × 4 = 0.004; 0.012 × 3 = 0.036; 0.2 × 2 = 0.4; 0.5 × 1 = 0.5.
    assert holm_adjusted([0.001, 0.2, 0.012, 0.5]) == pytest.approx([0.004, 0.4, 0.036, 0.5])
    # (0.6, 0.7), m = 2: 2 × 0.6 = 1.2 -> 1; 1 × 0.7 = 0.7, max(1, 0.7) = 1.
    assert holm_adjusted([0.6, 0.7]) == [1.0, 1.0]
    assert holm_adjusted([0.02]) == [0.02]
    assert holm_adjusted([]) == []


def _holm_rejections(p_values: list[float], alpha: float) -> set[int]:
    """Holm's step-down procedure as published (Holm 1979): order the p-values; find the first rank i (1-based)
    with p_(i) > alpha / (m - i + 1); reject the hypotheses of every rank before it (all when there is none)."""
    m = len(p_values)
    ranked = sorted(range(m), key=lambda i: p_values[i])
    rejected: set[int] = set()
    for rank, index in enumerate(ranked, 1):
        if p_values[index] > alpha / (m - rank + 1):
            break
        rejected.add(index)
    return rejected


def _adjusted_by_definition(p_values: list[float]) -> list[float]:
    """adjusted p_(i) = max over j <= i of min(1, (m - j + 1) p_(j)), each rank computed from scratch."""
    m = len(p_values)
    ranked = sorted(range(m), key=lambda i: p_values[i])
    out = [0.0] * m
    for i in range(1, m + 1):
        out[ranked[i - 1]] = max(min(1.0, (m - j + 1) * p_values[ranked[j - 1]]) for j in range(1, i + 1))
    return out


def test_holm_matches_its_definition_and_the_step_down_procedure_over_random_inputs():
    rng = random.Random(7)
    keys = [ORDER.key, MCQ.key, OPTION_ORDER.key, EXTRACTION.key, LOSS_DELTA.key, INFERENCE.key]
    for trial in range(500):
        m = rng.randint(1, len(keys))
        scale = rng.choice([1.0, 0.1, 0.01])
        p_values = [rng.random() * scale for _ in range(m)]
        if trial % 3 == 0:  # ties
            p_values = [round(p, 2) for p in p_values]
        alpha = rng.choice([0.01, 0.05, 0.1])
        assert holm_adjusted(p_values) == pytest.approx(_adjusted_by_definition(p_values), abs=1e-12)
        verdict = combine_parts([part(k, "weak", p) for k, p in zip(keys, p_values)], alpha)
        survivors = {keys.index(key) for key in verdict.survivors}
        expected = _holm_rejections(p_values, alpha)
        # Rejection sets agree except where a p-value sits on a threshold up to rounding.
        boundary = {i for i in range(m) if abs(verdict.adjusted[keys[i]] - alpha) < 1e-12}
        assert survivors - boundary == expected - boundary


def test_holm_refuses_what_is_not_a_p_value():
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="between 0 and 1"):
            holm_adjusted([0.1, bad])
        with pytest.raises(ValueError, match="between 0 and 1"):
            part(ORDER.key, "weak", bad)


# ---------------------------------------------------------------------------------------------- the levels


def test_the_strongest_surviving_evidence_is_the_verdict_and_its_headline_says_why():
    # Holm over (0.0004, 0.002, 0.6): 3 × 0.0004 = 0.0012; 2 × 0.002 = 0.004; 0.6 -> 0.6.
    verdict = combine_parts(
        [part(ORDER.key, "strong", 0.0004), part(MCQ.key, "strong", 0.002), part(EXTRACTION.key, "none", 0.6)]
    )
    assert verdict.level == "strong"
    assert verdict.adjusted == pytest.approx({ORDER.key: 0.0012, MCQ.key: 0.004, EXTRACTION.key: 0.6})
    assert verdict.survivors == (ORDER.key, MCQ.key)
    assert verdict.strongest == ORDER.key
    assert verdict.flagged == () and verdict.not_combinable == ()
    assert verdict.headline == (
        "Very likely trained on this benchmark: it prefers the file's own order of questions and finishes its "
        "options word for word."
    )


def test_a_stronger_level_outranks_a_smaller_p_value():
    verdict = combine_parts(
        [part(ORDER.key, "weak", 0.0001), part(MCQ.key, "moderate", 0.004), part(EXTRACTION.key, "none", 0.5)]
    )
    assert verdict.level == "moderate" and verdict.strongest == MCQ.key
    assert [p.key for p in verdict.evidence_parts] == [MCQ.key, ORDER.key]
    assert verdict.headline == (
        "Likely trained on this benchmark: it finishes its options word for word and prefers the file's own order "
        "of questions."
    )


def test_evidence_that_does_not_survive_the_correction_does_not_count():
    # A weak reading at p 0.04 among four tests: 4 × 0.04 = 0.16 > 0.05.
    verdict = combine_parts(
        [
            part(ORDER.key, "none", 0.5),
            part(MCQ.key, "none", 0.6),
            part(EXTRACTION.key, "none", 0.7),
            part(INFERENCE.key, "weak", 0.04),
        ]
    )
    assert verdict.survivors == ()
    assert verdict.level == "inconclusive"  # not none: one part read weak
    assert verdict.strongest is None
    assert verdict.headline == (
        "Cannot tell yet whether the model trained on this benchmark: no test found evidence that holds up."
    )


def test_none_only_when_every_part_that_ran_is_none():
    all_none = combine_parts(
        [part(ORDER.key, "none", 0.4), part(MCQ.key, "none", 0.9), part(OVERLAP.key, "none", None)]
    )
    assert all_none.level == "none"
    assert all_none.headline == (
        "No sign of training on this benchmark: each of the 3 tests that ran rules out an effect of useful size."
    )
    one_open = combine_parts([part(ORDER.key, "none", 0.4), part(MCQ.key, "inconclusive", 0.3)])
    assert one_open.level == "inconclusive"
    assert one_open.flagged == (MCQ.key,)
    assert one_open.headline.endswith("and multiple-choice memorisation could not decide yet.")
    assert combine_parts([part(ORDER.key, "none", 0.4)]).headline.startswith(
        "No sign of training on this benchmark: the one test that ran"
    )


def test_a_surviving_part_that_reads_no_evidence_adds_none():
    """A tiny p-value from a confounded test (its order follows a pattern) or an effect inside the no-effect
    margin survives Holm but is not evidence: its own rules already say why."""
    verdict = combine_parts([part(ORDER.key, "confounded", 1e-6), part(MCQ.key, "none", 0.5)])
    assert verdict.survivors == (ORDER.key,)
    assert verdict.level == "inconclusive"
    assert verdict.flagged == (ORDER.key,)
    assert "benchmark order is explained by something else" in verdict.headline
    tiny = combine_parts([part(ORDER.key, "none", 1e-6), part(MCQ.key, "none", 0.5)])
    assert tiny.level == "none" and tiny.strongest is None


def test_confounded_and_inconclusive_parts_are_named_even_beside_evidence():
    verdict = combine_parts(
        [
            part(ORDER.key, "confounded", 0.2),
            part(MCQ.key, "strong", 0.0001),
            part(EXTRACTION.key, "inconclusive", 0.3),
            part(OVERLAP.key, "strong", None),
        ]
    )
    assert verdict.level == "strong" and verdict.strongest == MCQ.key
    assert verdict.flagged == (ORDER.key, EXTRACTION.key)
    assert verdict.not_combinable == (OVERLAP.key,)
    finding = verdict.finding()
    assert finding.level == "strong"
    assert finding.caveats == (
        "Could not give a verdict: Benchmark order, Extraction.",
        "Shown but not counted in the combined verdict (no p-value): Overlap.",
    )
    # Holm over (0.2, 0.0001, 0.3): 3 × 0.0001 = 0.0003; 2 × 0.2 = 0.4; 1 × 0.3 = 0.3, max(0.4, 0.3) = 0.4.
    assert finding.evidence == (
        "Benchmark order: confounded, p = 0.2 (0.4 after Holm), does not hold up",
        "Multiple-choice memorisation: strong, p = 0.0001 (0.0003 after Holm), holds up",
        "Extraction: inconclusive, p = 0.3 (0.4 after Holm), does not hold up",
        "Overlap: strong, no p-value (not counted)",
    )
    assert finding.numbers == "Holm correction over 3 tests at family-wise level 0.05 · 1 of 3 hold up"


def test_a_part_without_a_p_value_is_never_evidence():
    verdict = combine_parts([part(OVERLAP.key, "strong", None), part(ORDER.key, "none", 0.7)])
    assert verdict.level == "inconclusive"
    assert verdict.adjusted == pytest.approx({ORDER.key: 0.7})
    assert verdict.not_combinable == (OVERLAP.key,)


def test_loss_delta_alone_claims_only_what_it_shows():
    verdict = combine_parts([part(LOSS_DELTA.key, "moderate", 0.003), part(ORDER.key, "none", 0.8)])
    assert verdict.headline == (
        "Likely trained on this benchmark or on text of its style: it finds this benchmark (or its style) easier "
        "than fresh problems of its kind."
    )


def test_alpha_sets_the_family_wise_level():
    parts = [part(ORDER.key, "weak", 0.02), part(MCQ.key, "none", 0.5)]  # 2 × 0.02 = 0.04
    assert combine_parts(parts).level == "weak"
    assert combine_parts(parts, alpha=0.01).level == "inconclusive"
    assert combine_parts([part(ORDER.key, "weak", 0.025), part(MCQ.key, "none", 0.5)]).survivors == (ORDER.key,)


def test_nothing_ran():
    verdict = combine_parts([])
    assert verdict.level == "inconclusive"
    assert audit_headline(verdict) == "Cannot tell whether the model trained on this benchmark: no test ran."


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="repeated"):
        combine_parts([part(ORDER.key, "none", 0.5), part(ORDER.key, "none", 0.4)])
    for alpha in (0.0, 1.0, -0.05):
        with pytest.raises(ValueError, match="alpha"):
            combine_parts([part(ORDER.key, "none", 0.5)], alpha=alpha)
    with pytest.raises(KeyError):
        combine_parts([part(ORDER.key, "none", 0.5)]).part(MCQ.key)


def test_a_test_the_audit_does_not_know_is_named_as_given():
    verdict = combine_parts([part("repeated-words", "weak", 0.001)])
    assert verdict.headline == "Possibly trained on this benchmark: it gives evidence in the repeated-words test."
    assert isinstance(verdict, CombinedVerdict)


def test_phrases_join_in_plain_english():
    assert joined([]) == ""
    assert joined(["a"]) == "a"
    assert joined(["a", "b"]) == "a and b"
    assert joined(["a", "b", "c"]) == "a, b and c"
