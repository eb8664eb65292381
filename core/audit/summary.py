"""The audit told to a stakeholder: the evidence table (one row per test) and what would change the conclusion.

The page, the HTML report and the CSV all read these rows, so the three say the same thing in the same words.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.audit.combine import combine_parts
from core.audit.plan import INFERENCE, LOSS_DELTA, OVERLAP, TEST_BY_KEY, AuditTest
from core.audit.run import Audit
from core.stats.finding import EXPOSURE_LEVELS

SOURCE_FOR: dict[str, str] = {
    LOSS_DELTA.key: "a reference set of fresh problems of the same kind (--reference)",
    INFERENCE.key: "held-out texts from the benchmark's source (--validation)",
    OVERLAP.key: "a training-data index (--index)",
}
"""What a user can give to add a test that needs more than the benchmark."""
LEVEL_WORDS = {
    "strong": "strong evidence",
    "moderate": "moderate evidence",
    "weak": "weak evidence",
    "none": "no sign",
    "inconclusive": "cannot tell",
    "confounded": "confounded",
}


@dataclass(frozen=True)
class EvidenceRow:
    """One test that ran, as the evidence table shows it."""

    key: str
    test: str
    checks: str
    finding: str
    level: str
    """The level in words (``LEVEL_WORDS``)."""
    level_key: str
    """The level as the findings vocabulary names it (``strong`` ... ``confounded``)."""
    key_number: str
    """The first figure of the finding's numbers line: the one number a reader needs (terms glossed where shown)."""
    numbers: str
    """The whole numbers line (shown on hover and in the report)."""
    chance: str
    """How likely a result this strong is by chance, before and after Holm's correction ("" when no test)."""
    counted: str
    """"Yes" (evidence that holds up after the correction), "No", or why it is not counted."""


def _test(key: str) -> AuditTest:
    return TEST_BY_KEY.get(key) or AuditTest(key, key, "", "")


def evidence_rows(audit: Audit) -> list[EvidenceRow]:
    rows = []
    for part in audit.parts:
        test = _test(part.key)
        adjusted = audit.verdict.adjusted.get(part.key)
        if part.p_value is None or adjusted is None:
            chance, counted = "", "Not counted: no test of chance"
        else:
            chance = f"p = {part.p_value:.2g}, {adjusted:.2g} after Holm"
            held = part.key in audit.verdict.survivors and part.finding.level in EXPOSURE_LEVELS
            counted = "Yes" if held else "No"
        rows.append(
            EvidenceRow(
                part.key,
                test.title,
                test.checks,
                part.finding.headline,
                LEVEL_WORDS.get(part.finding.level, part.finding.level),
                part.finding.level,
                part.finding.numbers.split(" · ")[0],
                part.finding.numbers,
                chance,
                counted,
            )
        )
    return rows


def what_would_change(audit: Audit) -> list[str]:
    """Plain lines on how firm the verdict is: what it rests on, what more data would settle, what else could run."""
    verdict = audit.verdict
    lines: list[str] = []
    if verdict.level in EXPOSURE_LEVELS and verdict.strongest:
        without = [p.result for p in audit.parts if p.key != verdict.strongest]
        rest = combine_parts(without, verdict.alpha).level if without else "inconclusive"
        lines.append(
            f"The verdict rests most on {_test(verdict.strongest).title.lower()}; without it the audit would read "
            f"{LEVEL_WORDS[rest]}."
        )
    for part in audit.parts:
        if part.finding.level == "inconclusive":
            lines.append(f"{_test(part.key).title}: {part.finding.headline}")
        elif part.finding.level == "confounded":
            lines.append(
                f"{_test(part.key).title} is confounded, so it is not read as evidence: {part.finding.headline}"
            )
    for planned in audit.plan.left_out:
        source = SOURCE_FOR.get(planned.key)
        if source:
            lines.append(f"Giving {source} would add {planned.title.lower()}.")
    if verdict.level == "none":
        lines.append(
            "No sign means the tests that ran rule out an effect of useful size; a model can still have seen a few "
            "items, and a test that could not run here might find what these did not."
        )
    return lines
