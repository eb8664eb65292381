"""Detectors: each turns token records into a membership score (higher = more likely seen)."""

from core.methods.base import AuxiliaryRecords, Method, MethodConfigError
from core.methods.registry import FAMILIES, default_methods, make_method, parse_method, parse_methods

__all__ = [
    "FAMILIES",
    "AuxiliaryRecords",
    "Method",
    "MethodConfigError",
    "default_methods",
    "make_method",
    "parse_method",
    "parse_methods",
    "score_all",
]


def score_all(methods, records, aux=None) -> dict[str, float]:
    """Every method's score for one passage, keyed by method key."""
    return {m.key: m.score(records, aux) for m in methods}
