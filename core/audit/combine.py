"""One verdict from the tests an audit ran, with family-wise error control by Holm's step-down.

The rule:
1. The family is the parts that ran and have a p-value (m of them). A part without one (overlap: a match is a
   fact, not a test) is not combinable: it is named as such and never counts as evidence.
2. Holm at family-wise level alpha (default 0.05): with the family's p-values sorted, p_(1) <= ... <= p_(m),
   the adjusted p_(i) = max over j <= i of min(1, (m - j + 1) * p_(j)); a part survives when its adjusted p is
   at most alpha (Holm rejects its null).
3. The combined level is the strongest level, in the project's order (strong, moderate, weak), among the
   surviving parts; a surviving part counts at its own level only when that level is evidence, since a
   part's own rules already say why its p-value does not count when it reads none, inconclusive or
   confounded (an effect inside the no-effect margin, too few items, a confound).
4. Otherwise ``none`` when every part that ran (with a p-value or not) is ``none``;
5. otherwise ``inconclusive``, as when no part ran at all.
Parts whose own level is ``confounded`` or ``inconclusive`` are named in the result, never hidden.

Why Holm: it keeps the chance that a model which never saw the benchmark reads evidence anywhere in the audit at
alpha or below, whatever the dependence between the tests (they read the same benchmark), and it rejects
everything Bonferroni rejects and more.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from core.audit.plan import TEST_BY_KEY, AuditTest
from core.stats.finding import EXPOSURE_LEVELS, LEVELS, Finding, Level, count

DEFAULT_ALPHA = 0.05
FLAGGED_LEVELS: tuple[Level, ...] = ("confounded", "inconclusive")
"""Levels a part is named for in the result: its test could not give a verdict, and the reader must see which."""
LEAD: dict[str, str] = {"strong": "Very likely", "moderate": "Likely", "weak": "Possibly"}
"""How sure the headline sounds at each level of evidence."""


@dataclass(frozen=True)
class PartResult:
    """One test that ran: its finding and the p-value of its test (None when the test yields none)."""

    key: str
    finding: Finding
    p_value: float | None

    def __post_init__(self) -> None:
        if self.p_value is not None and not (0.0 <= self.p_value <= 1.0):
            raise ValueError(f"The p-value of {self.key!r} must lie between 0 and 1, got {self.p_value!r}.")

    @property
    def test(self) -> AuditTest:
        """The test's words (``core.audit.plan.AUDIT_TESTS``); a key the audit does not know is named as is."""
        return TEST_BY_KEY.get(self.key) or AuditTest(self.key, self.key, "", f"gives evidence in the {self.key} test")

    @property
    def level(self) -> Level:
        return self.finding.level


@dataclass(frozen=True)
class CombinedVerdict:
    """The audit's one verdict and the parts behind it."""

    level: Level
    alpha: float
    parts: tuple[PartResult, ...]
    """Every part that ran, in the order given (the plan's)."""
    adjusted: dict[str, float] = field(default_factory=dict)
    """Holm-adjusted p-value per part in the family (parts without a p-value have none)."""
    survivors: tuple[str, ...] = ()
    """Parts whose null Holm rejects at ``alpha``, in the order given."""
    flagged: tuple[str, ...] = ()
    """Parts whose own level is ``confounded`` or ``inconclusive``: named, never hidden."""
    not_combinable: tuple[str, ...] = ()
    """Parts that ran without a p-value: shown, never counted as evidence."""
    strongest: str | None = None
    """The surviving part with the strongest evidence (its chart carries the verdict); None without evidence."""

    def part(self, key: str) -> PartResult:
        for part in self.parts:
            if part.key == key:
                return part
        raise KeyError(f"No part {key!r} in the audit; parts: {', '.join(p.key for p in self.parts)}.")

    @property
    def evidence_parts(self) -> tuple[PartResult, ...]:
        """The surviving parts whose own level is evidence, strongest first (``_evidence``)."""
        return _evidence(self.parts, self.survivors, self.adjusted)

    @property
    def headline(self) -> str:
        return audit_headline(self)

    def finding(self) -> Finding:
        """The verdict as every test's result is told: level, headline, one line per part, what it leaves out."""
        evidence = tuple(_part_line(self, part) for part in self.parts)
        caveats = []
        if self.flagged:
            caveats.append(f"Could not give a verdict: {_titles(self, self.flagged)}.")
        if self.not_combinable:
            caveats.append(
                f"Shown but not counted in the combined verdict (no p-value): {_titles(self, self.not_combinable)}."
            )
        family = len(self.adjusted)
        numbers = (
            f"Holm correction over {count(family, 'test')} at family-wise level {self.alpha:g} · "
            f"{len(self.survivors)} of {family} hold up"
        )
        return Finding(self.level, self.headline, evidence, tuple(caveats), numbers)


def holm_adjusted(p_values: Sequence[float]) -> list[float]:
    """Holm's adjusted p-values, in the order given: sorted ascending, p_(i) becomes the running maximum of
    min(1, (m - j + 1) p_(j)) over j <= i. A null is rejected at family-wise level alpha when its value is at most
    alpha."""
    m = len(p_values)
    for p in p_values:
        if not (0.0 <= p <= 1.0):  # also refuses NaN
            raise ValueError(f"A p-value must lie between 0 and 1, got {p!r}.")
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [math.nan] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def combine_parts(parts: Sequence[PartResult], alpha: float = DEFAULT_ALPHA) -> CombinedVerdict:
    """The audit's verdict from the parts that ran, by the rule in this module's docstring."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"The family-wise level alpha must lie between 0 and 1, got {alpha!r}.")
    keys = [part.key for part in parts]
    if len(set(keys)) != len(keys):
        raise ValueError(
            f"Each test may appear once in an audit; repeated: {sorted({k for k in keys if keys.count(k) > 1})}."
        )
    family = [part for part in parts if part.p_value is not None]
    adjusted = dict(zip((p.key for p in family), holm_adjusted([p.p_value for p in family if p.p_value is not None])))
    survivors = tuple(key for key in keys if key in adjusted and adjusted[key] <= alpha)
    evidence = _evidence(parts, survivors, adjusted)
    level: Level
    strongest = None
    if evidence:
        level, strongest = evidence[0].level, evidence[0].key
    elif parts and all(part.level == "none" for part in parts):
        level = "none"
    else:
        level = "inconclusive"
    return CombinedVerdict(
        level=level,
        alpha=alpha,
        parts=tuple(parts),
        adjusted=adjusted,
        survivors=survivors,
        flagged=tuple(part.key for part in parts if part.level in FLAGGED_LEVELS),
        not_combinable=tuple(part.key for part in parts if part.p_value is None),
        strongest=strongest,
    )


def _evidence(
    parts: Sequence[PartResult], survivors: Sequence[str], adjusted: dict[str, float]
) -> tuple[PartResult, ...]:
    """Surviving parts whose own level is evidence: strongest level first, then smallest adjusted p, then in the
    order given."""
    found = [part for part in parts if part.key in survivors and part.level in EXPOSURE_LEVELS]
    return tuple(sorted(found, key=lambda part: (LEVELS.index(part.level), adjusted[part.key])))


def joined(phrases: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(phrases) <= 1:
        return "".join(phrases)
    return f"{', '.join(phrases[:-1])} and {phrases[-1]}"


def _titles(verdict: CombinedVerdict, keys: Sequence[str]) -> str:
    return ", ".join(verdict.part(key).test.title for key in keys)


def audit_headline(verdict: CombinedVerdict) -> str:
    """The verdict in plain words, built from the surviving parts' evidence phrases (``AUDIT_TESTS``).

    "Very likely trained on this benchmark: it prefers the file's own order of questions and finishes its options
    word for word."
    """
    n = len(verdict.parts)
    if verdict.level in EXPOSURE_LEVELS:
        parts = verdict.evidence_parts  # strongest first: its claim leads
        return f"{LEAD[verdict.level]} {parts[0].test.claim}: it {joined([p.test.evidence for p in parts])}."
    if verdict.level == "none":
        each = "the one test" if n == 1 else f"each of the {n} tests"
        return f"No sign of training on this benchmark: {each} that ran rules out an effect of useful size."
    if not n:
        return "Cannot tell whether the model trained on this benchmark: no test ran."
    headline = "Cannot tell yet whether the model trained on this benchmark: no test found evidence that holds up"
    undecided = [verdict.part(k).test.title.lower() for k in verdict.flagged if verdict.part(k).level == "inconclusive"]
    confounded = [verdict.part(k).test.title.lower() for k in verdict.flagged if verdict.part(k).level == "confounded"]
    if undecided:
        headline += f", and {joined(undecided)} could not decide yet"
    if confounded:
        headline += f"; {joined(confounded)} {'is' if len(confounded) == 1 else 'are'} explained by something else"
    return headline + "."


def _part_line(verdict: CombinedVerdict, part: PartResult) -> str:
    """``Benchmark order: strong, p 0.0004 (0.0012 after Holm), holds up``."""
    if part.p_value is None:
        return f"{part.test.title}: {part.level}, no p-value (not counted)"
    held = "holds up" if part.key in verdict.survivors else "does not hold up"
    adjusted = verdict.adjusted[part.key]
    return f"{part.test.title}: {part.level}, p = {part.p_value:.2g} ({adjusted:.2g} after Holm), {held}"
