"""Loss-delta leakage test: does a model find a benchmark's solutions easier than fresh ones?

A model that trained on a benchmark has a lower loss on the benchmark's solutions than on a reference
set of the same format, difficulty and domain written later. Δ = L_test − L_ref, where L is the mean
over problems of the mean negative log-likelihood of the *solution* tokens given the prompt. For a
fine-tuned model, Δ² = Δ_SFT − Δ_base against its base model isolates what fine-tuning added: the
lower Δ², the more benchmark text the fine-tuning data held (the original study saw −0.023 to −0.056
after one leaked epoch and proposed Δ² > −0.02 as a necessary condition for a clean model).

This module holds the statistics and the report, computed from already-measured losses
(``core.loss_delta.losses``); ``core.loss_delta.run`` measures them, through the store when there is one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy import stats

from core.data.problems import ProblemSet
from core.data.tables import SkippedRow
from core.errors import DataError
from core.loss_delta.losses import ModelLosses
from core.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, percentile_interval, resample_indices

DELTA2_THRESHOLD = -0.02
"""Δ² below this fails the original study's necessary condition for a clean fine-tune (base-dependent)."""
LENGTH_TOLERANCE = 0.3
"""A reference solution more than 30% longer or shorter than its paired test solution is flagged."""
SUSPICIOUS_DELTA = -0.2
SUSPICIOUS_SHARE = 0.8
"""A reference problem is suspicious when more than 80% of models have per-problem Δ < −0.2 on it."""
MIN_MODELS_FOR_SHARE = 3
"""With fewer scored models "80% of models" means one or two models, and would flag good problems."""

Pairing = Literal["auto", "paired", "unpaired"]


# --------------------------------------------------------------------------------------------- pairing


@dataclass(frozen=True)
class PairedSets:
    """Test and reference sets ready to score; when ``paired``, row i of both has the same task id."""

    test: ProblemSet
    ref: ProblemSet
    paired: bool
    unmatched_test: tuple[str, ...] = ()
    unmatched_ref: tuple[str, ...] = ()


def pair_sets(test: ProblemSet, ref: ProblemSet, mode: Pairing = "auto") -> PairedSets:
    """Pair by task id when both sets carry ids that overlap (``auto``); keep only matched problems then."""
    if mode not in ("auto", "paired", "unpaired"):
        raise DataError(f"pairing must be auto, paired or unpaired, got {mode!r}.")
    common = [t for t in test.ids if t in set(ref.ids)] if test.has_ids and ref.has_ids else []
    if mode == "paired" and not common:
        raise DataError(
            f"Cannot pair {test.name} with {ref.name}: they share no task id. "
            "Use unpaired mode or give both sets matching task ids."
        )
    if mode == "unpaired" or not common:
        return PairedSets(test, ref, False)
    common_set = set(common)
    return PairedSets(
        test.subset(common),
        ref.subset(common),
        True,
        tuple(t for t in test.ids if t not in common_set),
        tuple(t for t in ref.ids if t not in common_set),
    )


# ------------------------------------------------------------------------------------------ statistics


@dataclass(frozen=True)
class DeltaStats:
    """L_test, L_ref and Δ for one model, with a bootstrap CI and a significance test."""

    l_test: float
    l_ref: float
    delta: float
    ci: tuple[float, float]
    """95% percentile bootstrap interval of Δ (pairs resampled together when paired)."""
    p_value: float
    """Two-sided; NaN when there are too few problems for the test."""
    test: str
    """"wilcoxon signed-rank" (paired) or "mann-whitney u" (unpaired)."""
    n_test: int
    n_ref: int

    @property
    def p_easier(self) -> float | None:
        """One-sided p-value that the benchmark is easier (Δ < 0), halved from the two-sided test on the side of
        the observed Δ; None when there were too few problems for the test."""
        if not math.isfinite(self.p_value):
            return None
        return self.p_value / 2 if self.delta < 0 else 1 - self.p_value / 2


def bootstrap_deltas(
    test_losses: np.ndarray,
    ref_losses: np.ndarray,
    paired: bool,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> np.ndarray:
    """Δ recomputed on resampled problems; the same seed and sizes give the same draws for every model."""
    rng = np.random.default_rng(seed)
    t, r = np.asarray(test_losses, float), np.asarray(ref_losses, float)
    if paired:
        if t.shape != r.shape:
            raise DataError(f"Paired losses need equal lengths, got {t.size} and {r.size}.")
        return (t - r)[resample_indices(rng, t.size, n_resamples)].mean(axis=1)
    draws_t = resample_indices(rng, t.size, n_resamples)
    draws_r = resample_indices(rng, r.size, n_resamples)
    return t[draws_t].mean(axis=1) - r[draws_r].mean(axis=1)


def percentile_ci(values: np.ndarray) -> tuple[float, float]:
    """The 95% percentile interval of bootstrapped Δ values."""
    return percentile_interval(values)


def delta_stats(
    test_losses: Sequence[float] | np.ndarray,
    ref_losses: Sequence[float] | np.ndarray,
    paired: bool,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> DeltaStats:
    t, r = np.asarray(test_losses, float), np.asarray(ref_losses, float)
    if t.size == 0 or r.size == 0:
        raise DataError("Both the test and the reference set need at least one scored problem.")
    boot = bootstrap_deltas(t, r, paired, n_resamples=n_resamples, seed=seed)
    if paired:
        name = "wilcoxon signed-rank"
        diffs = t - r
        p = float(stats.wilcoxon(t, r).pvalue) if t.size >= 2 and np.any(diffs != 0) else float("nan")
    else:
        name = "mann-whitney u"
        p = (
            float(stats.mannwhitneyu(t, r, alternative="two-sided").pvalue)
            if min(t.size, r.size) >= 2
            else float("nan")
        )
    return DeltaStats(
        l_test=float(t.mean()),
        l_ref=float(r.mean()),
        delta=float(t.mean() - r.mean()),
        ci=percentile_ci(boot),
        p_value=p,
        test=name,
        n_test=int(t.size),
        n_ref=int(r.size),
    )


@dataclass(frozen=True)
class LossChange:
    """How fine-tuning moved one set's mean loss: the base model's, the fine-tuned model's, and the change."""

    base: float
    tuned: float
    ci: tuple[float, float]
    """95% bootstrap interval of the change, resampling per-problem differences tuned − base."""

    @property
    def change(self) -> float:
        return self.tuned - self.base

    def to_dict(self) -> dict[str, object]:
        return {"base": self.base, "tuned": self.tuned, "change": self.change, "ci": list(self.ci)}


def loss_change(
    tuned: Sequence[float] | np.ndarray,
    base: Sequence[float] | np.ndarray,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> LossChange:
    """The change of one set's loss from the base model to the fine-tuned one, problem by problem.

    Both models scored the same problems in the same order, so the change is a paired bootstrap of the
    per-problem differences (the same resampling as a paired Δ).
    """
    t, b = np.asarray(tuned, float), np.asarray(base, float)
    boot = bootstrap_deltas(t, b, paired=True, n_resamples=n_resamples, seed=seed)
    return LossChange(float(b.mean()), float(t.mean()), percentile_ci(boot))


@dataclass(frozen=True)
class ModelDelta:
    """One model's row of the study's tables; Δ² fields are set when a base model was given."""

    model: str
    base_model: str | None
    stats: DeltaStats
    base_stats: DeltaStats | None = None
    delta2_ci: tuple[float, float] | None = None
    """Bootstrap interval of Δ², resampling the same problems for the model and its base."""
    test_change: LossChange | None = None
    """How fine-tuning moved the benchmark's loss against the base model (None without one)."""
    ref_change: LossChange | None = None
    """How fine-tuning moved the reference set's loss against the base model (None without one)."""

    @property
    def delta2(self) -> float | None:
        return None if self.base_stats is None else self.stats.delta - self.base_stats.delta

    def to_dict(self) -> dict[str, object]:
        return {
            "model": self.model,
            "base_model": self.base_model,
            "l_test": self.stats.l_test,
            "l_ref": self.stats.l_ref,
            "delta": self.stats.delta,
            "delta_ci": list(self.stats.ci),
            "p_value": _none_if_nan(self.stats.p_value),
            "test": self.stats.test,
            "n_test": self.stats.n_test,
            "n_ref": self.stats.n_ref,
            "delta_base": None if self.base_stats is None else self.base_stats.delta,
            "delta2": self.delta2,
            "delta2_ci": None if self.delta2_ci is None else list(self.delta2_ci),
            "test_change": None if self.test_change is None else self.test_change.to_dict(),
            "ref_change": None if self.ref_change is None else self.ref_change.to_dict(),
        }


def _none_if_nan(value: float) -> float | None:
    return None if np.isnan(value) else value


# ------------------------------------------------------------------------------------- reference check


@dataclass(frozen=True)
class FlaggedProblem:
    """A reference problem that may be unfit as a reference (not evidence of leakage)."""

    task_id: str
    reasons: tuple[str, ...]
    length_ratio: float | None = None
    """Reference solution length ÷ paired test solution length, in characters (paired sets only)."""
    low_delta_share: float | None = None
    """Share of scored models whose per-problem Δ on this problem is below −0.2."""


def per_problem_deltas(paired: bool, losses: ModelLosses) -> dict[str, float]:
    """Per reference problem: paired, L_test(i) − L_ref(i); unpaired, mean L_test − L_ref(j)."""
    if paired:
        return {r.task_id: t.loss - r.loss for t, r in zip(losses.test, losses.ref)}
    mean_test = float(losses.test_losses.mean())
    return {r.task_id: mean_test - r.loss for r in losses.ref}


def flag_reference_problems(
    sets: PairedSets,
    losses: Sequence[ModelLosses],
    *,
    length_tolerance: float = LENGTH_TOLERANCE,
    delta_threshold: float = SUSPICIOUS_DELTA,
    model_share: float = SUSPICIOUS_SHARE,
    min_models: int = 1,
) -> list[FlaggedProblem]:
    """The original pipeline's quality checks on the reference set, in reference order.

    The low-Δ share is only checked with at least ``min_models`` scored models (reports use
    ``MIN_MODELS_FOR_SHARE``).
    """
    ratios: dict[str, float] = {}
    if sets.paired:
        for t, r in zip(sets.test.problems, sets.ref.problems):
            ratios[r.task_id] = len(r.solution) / max(1, len(t.solution))
    shares: dict[str, float] = {}
    if losses and len(losses) >= min_models:
        per_model = [per_problem_deltas(sets.paired, ml) for ml in losses]
        for task_id in sets.ref.ids:
            low = sum(1 for deltas in per_model if deltas[task_id] < delta_threshold)
            shares[task_id] = low / len(per_model)
    flagged = []
    for task_id in sets.ref.ids:
        reasons = []
        ratio = ratios.get(task_id)
        if ratio is not None and abs(ratio - 1.0) > length_tolerance:
            reasons.append(f"solution length {ratio:.0%} of the test solution's")
        share = shares.get(task_id)
        if share is not None and share > model_share:
            reasons.append(f"{share:.0%} of models have per-problem Δ < {delta_threshold:g}")
        if reasons:
            flagged.append(FlaggedProblem(task_id, tuple(reasons), ratio, share))
    return flagged


# -------------------------------------------------------------------------------------------- the run


@dataclass(frozen=True)
class ModelRequest:
    """A model to test, and optionally the base model it was fine-tuned from (for Δ²)."""

    model: str
    base_model: str | None = None


@dataclass(frozen=True)
class LeakageReport:
    """Everything the page, the CLI and the store need from one run."""

    test_name: str
    ref_name: str
    paired: bool
    models: tuple[ModelDelta, ...]
    losses: tuple[ModelLosses, ...]
    """Per-problem losses of every scored model, base models included."""
    flagged: tuple[FlaggedProblem, ...]
    unmatched_test: tuple[str, ...] = ()
    unmatched_ref: tuple[str, ...] = ()
    settings: dict[str, object] = field(default_factory=dict)
    skipped_test: tuple[SkippedRow, ...] = ()
    """Rows of the benchmark's data that could not be used (no prompt or solution text, ...)."""
    skipped_ref: tuple[SkippedRow, ...] = ()
    run_id: str = ""
    """The stored comparison's run id ("" when nothing was stored): a shared link opens it."""

    def dropped_notes(self) -> list[str]:
        """What was left out of the comparison and why, in words: every output says it, never only the JSON."""
        notes = []
        if self.unmatched_test or self.unmatched_ref:
            n_pairs = self.models[0].stats.n_test if self.models else 0
            parts = [
                f"{len(ids)} {what} problem(s) ({_ids(ids)})"
                for what, ids in (("benchmark", self.unmatched_test), ("reference", self.unmatched_ref))
                if ids
            ]
            notes.append(
                f"Paired by the {n_pairs} task id(s) both sets share; left out, having no partner: "
                f"{' and '.join(parts)}. Use unpaired mode to compare every problem."
            )
        for name, rows in ((self.test_name, self.skipped_test), (self.ref_name, self.skipped_ref)):
            if rows:
                lines = ", ".join(str(r.line) for r in rows[:10]) + (" …" if len(rows) > 10 else "")
                reasons = "; ".join(sorted({r.reason for r in rows}))
                notes.append(f"{name}: {len(rows)} row(s) not used (lines {lines}): {reasons}.")
        return notes

    @property
    def flag_note(self) -> str | None:
        """Why the low-Δ reference check was not applied, when it was not."""
        if len(self.losses) >= MIN_MODELS_FOR_SHARE:
            return None
        return (
            f"The per-problem low-Δ check on the reference set needs at least {MIN_MODELS_FOR_SHARE} scored "
            f"models; with {len(self.losses)} it is not applied (only solution lengths are checked)."
        )

    @property
    def test_used(self) -> str:
        return "wilcoxon signed-rank" if self.paired else "mann-whitney u"

    def problem_rows(self) -> list[dict[str, object]]:
        """Paired: one row per problem and model with both losses. Unpaired: one row per problem of each set."""
        rows: list[dict[str, object]] = []
        for ml in self.losses:
            if self.paired:
                for t, r in zip(ml.test, ml.ref):
                    rows.append({"task_id": t.task_id, "model": ml.model, "loss_test": t.loss, "loss_ref": r.loss})
            else:
                rows += [
                    {"task_id": t.task_id, "model": ml.model, "loss_test": t.loss, "loss_ref": None} for t in ml.test
                ]
                rows += [
                    {"task_id": r.task_id, "model": ml.model, "loss_test": None, "loss_ref": r.loss} for r in ml.ref
                ]
        return rows

    def delta_table(self) -> list[dict[str, object]]:
        """The study's first table: Model | L_test | L_ref | Δ."""
        return [
            {"Model": m.model, "L_test": m.stats.l_test, "L_ref": m.stats.l_ref, "Δ": m.stats.delta}
            for m in self.models
        ]

    def delta2_table(self) -> list[dict[str, object]]:
        """The study's second table: Model | Base | L_test | L_ref | Δ_SFT | Δ_base | Δ²."""
        return [
            {
                "Model": m.model,
                "Base": m.base_model,
                "L_test": m.stats.l_test,
                "L_ref": m.stats.l_ref,
                "Δ_SFT": m.stats.delta,
                "Δ_base": m.base_stats.delta,
                "Δ²": m.delta2,
            }
            for m in self.models
            if m.base_stats is not None
        ]

    def to_dict(self) -> dict[str, object]:
        return {
            "test_set": self.test_name,
            "reference_set": self.ref_name,
            "paired": self.paired,
            "significance_test": self.test_used,
            "models": [m.to_dict() for m in self.models],
            "problems": self.problem_rows(),
            "flagged_reference": [f.task_id for f in self.flagged],
            "flag_reasons": {f.task_id: list(f.reasons) for f in self.flagged},
            "unmatched_test": list(self.unmatched_test),
            "unmatched_reference": list(self.unmatched_ref),
            "flag_note": self.flag_note,
            "skipped_test": [{"line": r.line, "reason": r.reason} for r in self.skipped_test],
            "skipped_reference": [{"line": r.line, "reason": r.reason} for r in self.skipped_ref],
            "dropped": self.dropped_notes(),
        }


def _ids(ids: Sequence[str], limit: int = 5) -> str:
    return ", ".join(ids[:limit]) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def build_leakage_report(
    sets: PairedSets,
    requests: Sequence[ModelRequest],
    losses: Mapping[str, ModelLosses],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> LeakageReport:
    """Statistics, Δ² and reference flags from already-measured losses (no model needed)."""
    rows = []
    for req in requests:
        own = losses[req.model]
        own_stats = delta_stats(own.test_losses, own.ref_losses, sets.paired, n_resamples=n_resamples, seed=seed)
        base_stats = delta2_ci = test_change = ref_change = None
        if req.base_model:
            base = losses[req.base_model]
            base_stats = delta_stats(base.test_losses, base.ref_losses, sets.paired, n_resamples=n_resamples, seed=seed)
            # The same seed resamples the same problems for both models, so the difference is a paired bootstrap.
            boot = bootstrap_deltas(own.test_losses, own.ref_losses, sets.paired, n_resamples=n_resamples, seed=seed)
            boot_base = bootstrap_deltas(
                base.test_losses, base.ref_losses, sets.paired, n_resamples=n_resamples, seed=seed
            )
            delta2_ci = percentile_ci(boot - boot_base)
            options = {"n_resamples": n_resamples, "seed": seed}
            test_change = loss_change(own.test_losses, base.test_losses, **options)
            ref_change = loss_change(own.ref_losses, base.ref_losses, **options)
        rows.append(ModelDelta(req.model, req.base_model, own_stats, base_stats, delta2_ci, test_change, ref_change))
    scored = tuple(losses[name] for name in distinct_specs(requests))
    return LeakageReport(
        test_name=sets.test.name,
        ref_name=sets.ref.name,
        paired=sets.paired,
        models=tuple(rows),
        losses=scored,
        flagged=tuple(flag_reference_problems(sets, scored, min_models=MIN_MODELS_FOR_SHARE)),
        unmatched_test=sets.unmatched_test,
        unmatched_ref=sets.unmatched_ref,
        settings={"n_resamples": n_resamples, "seed": seed},
        skipped_test=tuple(sets.test.skipped),
        skipped_ref=tuple(sets.ref.skipped),
    )


def distinct_specs(requests: Sequence[ModelRequest]) -> list[str]:
    """Every model to score, base models included, each once, in request order."""
    specs: dict[str, None] = {}
    for req in requests:
        specs.setdefault(req.model, None)
        if req.base_model:
            specs.setdefault(req.base_model, None)
    return list(specs)
