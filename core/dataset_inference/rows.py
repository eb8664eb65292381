"""A dataset inference as table rows: the test result, each detector alone, and each text's scores (the pages'
and the CLI's downloads are built from these)."""

from __future__ import annotations

from core.dataset_inference.finding import effect_interval
from core.dataset_inference.run import DatasetInference


def summary_rows(inference: DatasetInference) -> list[dict]:
    """One row: the effect with its interval, the p-value, the blind baseline with its interval, the sizes."""
    result = inference.result
    d_lo, d_hi = effect_interval(result)
    blind = inference.scores.blind_baseline
    return [
        {
            "effect_size": result.effect_size,
            "effect_ci_low": d_lo,
            "effect_ci_high": d_hi,
            "p_value": result.p_value,
            "blind_auroc": None if blind is None else blind.auroc,
            "blind_ci_low": None if blind is None else blind.ci[0],
            "blind_ci_high": None if blind is None else blind.ci[1],
            "n_suspect": result.n_suspect,
            "n_validation": result.n_validation,
            "splits": len(result.split_p_values),
            "seed": result.seed,
        }
    ]


def detector_rows(inference: DatasetInference) -> list[dict]:
    """One row per detector: its AUROC alone (suspect vs validation) with the interval, and its combined weight."""
    weights = dict(inference.result.weights)
    return [
        {
            "detector": row["label"],
            "auroc": row["auroc"],
            "ci_low": row["ci_low"],
            "ci_high": row["ci_high"],
            "key": row["method"],
            "weight": weights.get(row["method"]),
            "n": row["n"],
        }
        for row in inference.scores.table_rows()
    ]


def text_rows(inference: DatasetInference) -> list[dict]:
    """One row per text: its id, the set it belongs to (by name) and each detector's score."""
    keys = inference.scores.method_keys
    return [
        {
            "text_id": s.sample_id,
            "set": inference.suspect if s.label == 1 else inference.validation,
            **{key: s.scores.get(key) for key in keys},
        }
        for s in inference.scores.samples
    ]
