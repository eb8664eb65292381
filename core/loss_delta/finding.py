"""The verdict of a loss-delta run, worded for what Δ can show.

Δ = L_test − L_ref below zero says the benchmark (or its style) is easier for the model than the
reference set, not that the model saw those exact items: a fine-tune on half a benchmark also lowered
the loss of the untrained half against a reference of another style. Findings say so, and leave item
claims to the membership tests. Rules per model, in order (Δ², against the base model, when one is given):
- fewer than ``MIN_PROBLEMS`` problems on either side (benchmark or reference set; pairs, when the sets are
  paired by task id) -> ``inconclusive`` whatever the interval says (a bootstrap over one to four problems
  only re-draws the same few values);
- with a base model, a Δ² interval below 0 whose benchmark did not get easier -> ``confounded``: the 95%
  interval of the benchmark's loss change (fine-tuned − base, per problem) includes 0 or lies above it, so Δ²
  fell only because the reference set's loss rose more. That is a shift of style (the fine-tune moved text
  like the reference set), not a sign the fine-tuning data held the benchmark: fine-tuning on half of
  HumanEval raised the untrained half's loss by +0.048 and the built-in reference set's by +0.206, and Δ²
  read −0.159 (95% CI −0.247 to −0.080). A ``ModelDelta`` without the loss changes skips this rule;
- on Δ (no base model), an interval below 0 while at least half the reference problems are flagged for
  solution length (more than 30% longer or shorter than their benchmark pair) -> ``confounded``: per-token
  loss depends on a solution's length, so the gap can come from length alone (a random-weight model read
  "weak evidence" on such a set);
- the 95% interval lies below 0 -> graded by its upper end: <= −0.3 ``strong``, <= −0.1 ``moderate``, else
  ``weak``;
- its lower end lies above −``NONE_MARGIN`` -> ``none``: the data rule out the benchmark being easier by a
  useful amount (an interval inside ±0.05, or one above 0: the benchmark is harder than the reference);
- otherwise (the interval includes 0 and reaches below −``NONE_MARGIN``) -> ``inconclusive``, with about how
  many more problems per set would settle it.
The run's finding is the strongest of its models' (``RANKING``): an exposure level, then ``confounded``, then
``inconclusive``, then ``none``. Exposure first, because one model's real sign is what the run must report;
``confounded`` before ``inconclusive`` and ``none``, because a Δ² past the exposure line needs its
explanation on top, as a blind baseline's confound leads the membership verdict.
"""

from __future__ import annotations

from core.loss_delta.delta import LENGTH_TOLERANCE, LeakageReport, LossChange, ModelDelta
from core.stats.finding import EXPOSURE_LEVELS, Finding, Level, count, interval, texts_needed

STRONG_UPPER = -0.3
MODERATE_UPPER = -0.1
NONE_MARGIN = 0.05
"""No-effect margin of Δ and Δ², in nats per token: ``none`` needs the whole 95% interval above −0.05.

Δ is directional (only "easier" points at exposure), so the margin bounds the lower end; an interval that
also lies below +0.05 is inside ±0.05. Why 0.05: it is the size of shift that has nothing to do with the
benchmark (fine-tuning SmolLM2 on half of HumanEval moved the loss of the untrained half by +0.05), half the
``moderate`` threshold (−0.1), and a change of about 5% in perplexity (e^0.05 = 1.05), which no one would
call a benchmark the model finds easier. An interval reaching below it cannot rule out a useful effect."""
MIN_PROBLEMS = 5
"""Fewer problems than this on either side and the interval means nothing: the finding is inconclusive."""
SMALL_SET = 20
"""Fewer problems than this on either side make the interval rough (a caveat, not a different verdict)."""
SCOPE = (
    "Δ says the benchmark (or its style) is easier for the model than the reference set, not that the "
    "model saw these exact problems; item-level claims need the membership tests."
)
STYLE_SHIFT = (
    "Fine-tuning moved the reference set's loss more than the benchmark's: the two sets differ in style, and the "
    "fine-tune moved text like the reference set. A reference set in the benchmark's own format (for HumanEval, "
    "the HumanEval shadow set) measures Δ² without this shift."
)
RANKING: tuple[str, ...] = (*EXPOSURE_LEVELS, "confounded", "inconclusive", "none")
"""Which model's finding becomes the run's: the first level here (see the module docstring for why)."""


def _sizes(n_test: int, n_ref: int) -> str:
    """``8 problems per set`` or ``8 and 12 problems``."""
    return f"{count(n_test, 'problem')} per set" if n_test == n_ref else f"{n_test} and {count(n_ref, 'problem')}"


def model_finding(report: LeakageReport, row: ModelDelta) -> Finding:
    """The finding for one model of the run."""
    s = row.stats
    evidence = [
        f"{row.model}: loss {s.l_test:.3f} on {report.test_name}, {s.l_ref:.3f} on {report.ref_name} "
        f"(Δ {s.delta:+.3f}, 95% CI {s.ci[0]:+.3f} to {s.ci[1]:+.3f})"
    ]
    caveats = [SCOPE]
    smallest = min(s.n_test, s.n_ref)
    if smallest < SMALL_SET:
        caveats.append(
            f"Only {count(smallest, 'problem')} on one side: the interval is rough; "
            f"use at least {SMALL_SET} problems per set."
        )
    if row.base_stats is not None and row.delta2 is not None and row.delta2_ci is not None:
        b = row.base_stats
        evidence.append(
            f"base {row.base_model}: Δ {b.delta:+.3f}; the fine-tune moved the test loss by "
            f"{_moved(row.test_change, s.l_test - b.l_test)} and the reference loss by "
            f"{_moved(row.ref_change, s.l_ref - b.l_ref)}"
        )
        value, (lo, hi), name = row.delta2, row.delta2_ci, "Δ²"
        subject = f"fine-tuning made {report.test_name} (or its style) easier for {row.model} than for its base model"
        detail = f"Δ {s.delta:+.3f} fine-tuned, {b.delta:+.3f} base"
        meaning = "a sign the fine-tuning data may have held it, or very similar text"
    else:
        value, (lo, hi), name = s.delta, s.ci, "Δ"
        subject = f"{report.test_name} (or its style) is easier for {row.model} than the reference set"
        detail = f"loss {s.l_test:.3f} on {report.test_name}, {s.l_ref:.3f} on {report.ref_name}"
        meaning = "a sign the model may have trained on it, or on very similar text"
    numbers = (
        f"{name} {value:+.3f} nats per token ({interval(lo, hi, '+.3f')}) · no-effect margin "
        f"±{NONE_MARGIN:g} · {detail} · {s.n_test} + {s.n_ref} problems"
    )
    if smallest < MIN_PROBLEMS:
        sides = f"{count(s.n_test, 'problem')} in {report.test_name}, {s.n_ref} in {report.ref_name}"
        return Finding(
            "inconclusive",
            f"Too few problems to tell: only {smallest} on one side ({sides}); at least "
            f"{MIN_PROBLEMS} per set are needed for a verdict.",
            tuple(evidence),
            tuple(caveats),
            numbers,
        )
    if hi < 0:
        test, ref = row.test_change, row.ref_change
        if name == "Δ²" and test is not None and ref is not None and test.ci[1] >= 0:
            numbers = (
                f"Δ² {value:+.3f} nats per token ({interval(lo, hi, '+.3f')}) · {_base_to_tuned(test, ref)} · "
                f"{s.n_test} + {s.n_ref} problems"
            )
            return _style_shift(report, row, test, ref, evidence, (*caveats, STYLE_SHIFT), numbers)
        mismatched = _length_mismatched(report)
        if name == "Δ" and mismatched * 2 >= s.n_ref:
            return _length_confound(report, row, mismatched, evidence, caveats, numbers)
        level: Level = "strong" if hi <= STRONG_UPPER else "moderate" if hi <= MODERATE_UPPER else "weak"
        return Finding(
            level, f"{level.capitalize()} evidence that {subject}: {meaning}.", tuple(evidence), tuple(caveats), numbers
        )
    if lo > -NONE_MARGIN:
        if lo > 0:
            headline = (
                f"No sign of leakage: {report.test_name} is harder for {row.model} than the reference set, not easier."
            )
        else:
            headline = f"No sign that {subject}: any difference is too small to matter."
        return Finding("none", headline, tuple(evidence), tuple(caveats), numbers)
    needed = texts_needed(smallest, value, (lo, hi), (0.0, -NONE_MARGIN))
    more = (
        f"about {needed - smallest} more problems per set would settle it"
        if needed
        else "more problems would settle it"
    )
    return Finding(
        "inconclusive",
        f"Cannot tell yet: with {_sizes(s.n_test, s.n_ref)} the measurement is too rough to say whether "
        f"{subject}; {more}.",
        tuple(evidence),
        tuple(caveats),
        numbers,
    )


def _length_mismatched(report: LeakageReport) -> int:
    """How many reference problems were flagged because their solution's length is far from their pair's."""
    return sum(1 for f in report.flagged if f.length_ratio is not None and abs(f.length_ratio - 1.0) > LENGTH_TOLERANCE)


def _length_confound(
    report: LeakageReport,
    row: ModelDelta,
    mismatched: int,
    evidence: list[str],
    caveats: list[str],
    numbers: str,
) -> Finding:
    """``confounded``: Δ fell, but at least half the reference solutions are far longer or shorter than their
    benchmark pairs. Per-token loss falls along a solution (later tokens are easier to predict), so sets of
    different lengths differ in loss for that reason alone: even a model with random weights reads "easier"."""
    headline = (
        f"Not a fair test: {mismatched} of {row.stats.n_ref} reference solutions are more than "
        f"{LENGTH_TOLERANCE:.0%} longer or shorter than their {report.test_name} pairs, so the loss gap can come "
        "from length alone; use a reference set whose solutions match the benchmark's in length."
    )
    return Finding("confounded", headline, tuple(evidence), tuple(caveats), numbers)


def _moved(change: LossChange | None, value: float) -> str:
    """``+0.048 (95% interval +0.010 to +0.090)`` when the change was bootstrapped, else the plain difference."""
    if change is None:
        return f"{value:+.3f}"
    return f"{change.change:+.3f} ({interval(*change.ci, '+.3f')})"


def _between(change: LossChange) -> str:
    """A change and its interval in plain words: ``+0.048 per token, likely between +0.010 and +0.090``."""
    return f"{change.change:+.3f} per token, likely between {change.ci[0]:+.3f} and {change.ci[1]:+.3f}"


def _base_to_tuned(test: LossChange, ref: LossChange) -> str:
    """Each set's loss on the base and the fine-tuned model, and the change with its interval."""
    return (
        f"benchmark loss {test.base:.3f} base → {test.tuned:.3f} fine-tuned, {_moved(test, test.change)} · "
        f"reference loss {ref.base:.3f} → {ref.tuned:.3f}, {_moved(ref, ref.change)}"
    )


def _style_shift(
    report: LeakageReport,
    row: ModelDelta,
    test: LossChange,
    ref: LossChange,
    evidence: list[str],
    caveats: tuple[str, ...],
    numbers: str,
) -> Finding:
    """``confounded``: Δ² fell because the reference set got harder, while the benchmark did not get easier.

    The headline gives both changes in plain words (the numbers line under it has them as losses with 95%
    intervals): which way fine-tuning moved each set, by how much, and how sure that is."""
    if test.ci[0] > 0:
        benchmark = f"made {report.test_name} harder for {row.model}, not easier ({_between(test)})"
    else:
        benchmark = f"did not make {report.test_name} easier for {row.model} ({_between(test)})"
    if ref.change > 0:
        reference = f"made the reference set harder{' still' if test.ci[0] > 0 else ''} ({_between(ref)})"
        why = "the gap comes from the reference set's style, not a sign of leakage"
    else:
        reference = f"made the reference set easier ({_between(ref)})"
        why = "with no clear change on the benchmark itself, the gap is no sign of leakage"
    headline = f"Not a fair test: fine-tuning {benchmark}, and {reference}; {why}."
    return Finding("confounded", headline, tuple(evidence), caveats, numbers)


def leakage_finding(report: LeakageReport) -> Finding:
    """The strongest model finding of the run (``RANKING``), with every model's numbers as evidence."""
    findings = [model_finding(report, row) for row in report.models]
    order = {level: i for i, level in enumerate(RANKING)}
    chosen = min(findings, key=lambda f: order.get(f.level, len(order)))
    evidence = tuple(line for f in findings for line in f.evidence)
    caveats = (*report.dropped_notes(), *chosen.caveats, *((report.flag_note,) if report.flag_note else ()))
    return Finding(chosen.level, chosen.headline, evidence, caveats, chosen.numbers)
