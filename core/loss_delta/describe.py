"""The loss-delta test in words: what its data are called on screen and its rules as sentences, every number
taken from the constants in ``core.loss_delta.delta`` so that no threshold is typed twice."""

from __future__ import annotations

from collections.abc import Sequence

from core.data.demo import dataset_label
from core.loss_delta.delta import (
    DELTA2_THRESHOLD,
    LENGTH_TOLERANCE,
    SUSPICIOUS_DELTA,
    SUSPICIOUS_SHARE,
    LeakageReport,
)


def _signed(value: float) -> str:
    """A number as prose writes it: ``-0.2`` -> ``−0.2`` (a true minus sign)."""
    return f"{value:g}".replace("-", "−")


def data_label(report: LeakageReport) -> str:
    """The two sets by the names people know them by (a demo's title, a file's name, never a path)."""
    return f"{dataset_label(report.test_name)} vs {dataset_label(report.ref_name)}"


def models_tested(report: LeakageReport) -> str:
    """The tested models, comma-separated (base models are not listed: they are what a model is compared with)."""
    return ", ".join(m.model for m in report.models)


def delta2_rule() -> str:
    """The original study's Δ² condition, from ``DELTA2_THRESHOLD``."""
    return (
        f"the original study proposes Δ² > {DELTA2_THRESHOLD} as a necessary condition for a clean fine-tune; "
        "the threshold depends on the base"
    )


def reference_check_rule() -> str:
    """When a reference problem is flagged, from ``LENGTH_TOLERANCE``, ``SUSPICIOUS_DELTA`` and ``SUSPICIOUS_SHARE``."""
    return (
        f"solution length more than {LENGTH_TOLERANCE:.0%} off its paired test problem, or per-problem "
        f"Δ < {_signed(SUSPICIOUS_DELTA)} for more than {SUSPICIOUS_SHARE:.0%} of models"
    )


def below_threshold(report: LeakageReport, threshold: float = DELTA2_THRESHOLD) -> list[str]:
    """The tested models whose Δ² lies below ``threshold``, in report order (models without a base are left out)."""
    return [m.model for m in report.models if m.delta2 is not None and m.delta2 < threshold]


def below_threshold_note(models: Sequence[str], threshold: float) -> str:
    """The sentence under the Δ² chart naming the models below the threshold."""
    return (
        f"Δ² below the study's threshold {threshold:+.3f} for: {', '.join(models)}. The study reads this as "
        "fine-tuning having made the benchmark markedly easier than the reference; the verdict above weighs it "
        "with its interval."
    )
