"""Words a stakeholder should not meet unexplained: a headline must hold none, a numbers line only glossed ones,
and Present mode's visible text none at all (the numbers line is folded away there)."""

from __future__ import annotations

import re

JARGON: dict[str, str] = {
    # name: regular expression (case-insensitive unless it says otherwise)
    "AUROC": r"AUROC",
    "CI": r"(?-i:\bCI\b)",
    "interval": r"\binterval",
    "95%": r"95 ?%",
    "Δ": r"Δ",
    "nats": r"\bnats?\b",
    "p-value": r"p-value",
    "p =": r"(?<![\w-])p ?=",
    "p <": r"(?<![\w-])p ?<",
    "Cohen's d": r"Cohen",
    "confounded": r"confound",
    "TPR": r"TPR",
    "FPR": r"FPR",
    "perplexity": r"perplexit",
    "Min-K": r"Min-(?:K|\d)",
    "zlib": r"zlib",
    "bootstrap": r"bootstrap",
    "calibration": r"calibration",
    "percentile": r"percentile",
    "blind baseline": r"blind baseline",
    "slope": r"\bslope",
    "loss": r"\bloss\b",
    "log-prob": r"log-?prob",
    "significant": r"significan",
    "Wilcoxon / Mann-Whitney": r"wilcoxon|mann-whitney",
    "internal key": r"(?-i:\b[a-z]+_[a-z0-9_]+\b)",
}


def jargon_in(text: str) -> list[tuple[str, re.Match[str]]]:
    """Every jargon term in ``text`` with its match."""
    return [(name, m) for name, pattern in JARGON.items() for m in re.finditer(pattern, text, re.IGNORECASE)]
