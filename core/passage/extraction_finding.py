"""The extraction test read against freshly written passages, and folded with the placement into one finding.

A passage's continuation is compared with the continuations of the fresh calibration passages (which no
model can have trained on) under the same model: the chance that new text is continued at least this far
is (k + 1) / (N + 1), k of the N comparable fresh passages reaching the passage's count of leading matched
tokens, the exact rule placement uses; fewer than ``MIN_CONTINUATION`` tokens verbatim is never a sign.
Comparable means the fresh passage had at least as many tokens to continue, its count cut at the passage's
length, so a short passage is never measured against counts it could not reach. Levels follow
``LEVEL_CHANCE``.

One passage, two tests (placement, extraction): when both can read, each chance is doubled before its level
is taken (Bonferroni), so reading both never raises the false-positive rate above the level's chance. The
finding is the stronger reading's, and says which evidence carries it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from core.methods.extraction import EXTRACTION_KEY, MIN_CONTINUATION, Continuation, extraction_plan
from core.passage.calibration import FreshCalibration
from core.passage.extraction import ExtractionView
from core.passage.placement import (
    NONE_CHANCE,
    STRENGTH,
    PassagePlacement,
    has_yardstick,
    lacks_own_kind,
    level_of_chance,
    placement_finding,
)
from core.passage.text_form import GROUP_NAMES, PROSE
from core.stats.finding import EXPOSURE_LEVELS, Finding, Level, count


@dataclass(frozen=True)
class ExtractionReading:
    """A passage's continuation against the fresh passages' continuations."""

    leading: int
    """Tokens the model reproduced exactly from the start of the continuation."""
    length: int
    """Tokens there were to reproduce."""
    fresh_leading: tuple[int, ...]
    """Comparable fresh passages' leading matched tokens, each cut at ``length``."""
    tests: int = 1
    group: str = ""
    """The group the comparable fresh passages were kept to (``read_extraction``); "" for every group."""

    @property
    def n_compared(self) -> int:
        return len(self.fresh_leading)

    @property
    def n_at_least(self) -> int:
        return sum(1 for x in self.fresh_leading if x >= self.leading)

    @property
    def chance(self) -> float:
        """How often a freshly written passage is continued at least this far: (k + 1) / (N + 1)."""
        return (self.n_at_least + 1) / (self.n_compared + 1)

    @property
    def best_fresh(self) -> int:
        return max(self.fresh_leading, default=0)

    @property
    def level(self) -> Level:
        """By the chance, once the model wrote at least ``MIN_CONTINUATION`` tokens verbatim: a word or two
        (often the commonest next word) is never a sign however rarely fresh text matches that far."""
        if self.leading < MIN_CONTINUATION:
            return "none"
        return level_of_chance(self.chance * self.tests)

    def to_dict(self) -> dict[str, object]:
        return {
            "leading": self.leading,
            "length": self.length,
            "n_compared": self.n_compared,
            "n_at_least": self.n_at_least,
            "best_fresh": self.best_fresh,
            "chance": self.chance,
            "tests": self.tests,
            "level": self.level,
            "fresh_leading": list(self.fresh_leading),
            "group": self.group,
        }


def read_extraction(
    continuation: Continuation, calibration: FreshCalibration, *, tests: int = 1, group: str = PROSE
) -> ExtractionReading | None:
    """The continuation among the fresh passages' (None: the calibration holds no extraction scores). A passage
    of another group than English prose (code, numbers, dialogue, another language: ``core.passage.text_form``)
    is compared with the fresh passages of its group alone, as placement compares it: stock formats (a code
    comment's ``@param`` lines, a changelog's headings) are continued word for word more often than prose."""
    column = calibration.scores.get(EXTRACTION_KEY)
    if column is None:
        return None
    own_group = group != PROSE and len(calibration.groups) == len(column)
    fresh = []
    for i, (n_tokens, value) in enumerate(zip(calibration.n_tokens, column, strict=True)):
        plan = extraction_plan(n_tokens, continuation.fraction)
        if plan is None or plan[1] < continuation.length or not math.isfinite(value):
            continue
        if own_group and calibration.groups[i] != group:
            continue
        fresh.append(min(int(value), continuation.length))
    return ExtractionReading(
        continuation.leading, continuation.length, tuple(fresh), tests, group=group if own_group else ""
    )


def extraction_sentence(reading: ExtractionReading, view: ExtractionView) -> str:
    """``Given the first 28 words, the model wrote the next 41 exactly (52 tokens); no freshly written passage
    was continued beyond 3 tokens.``"""
    given = f"Given the first {count(view.prompt_words, 'word')}"
    if reading.leading == 0:
        wrote = "the model's continuation differed from the passage at once"
    elif reading.leading == reading.length:
        wrote = (
            f"the model wrote the rest word for word ({count(view.leading_words, 'word')}, "
            f"{count(reading.leading, 'token')})"
        )
    else:
        wrote = (
            f"the model wrote the next {count(view.leading_words, 'word')} exactly "
            f"({reading.leading} of {count(reading.length, 'token')})"
        )
    near = f" ({GROUP_NAMES[reading.group]}, like this one)" if reading.group else ""
    if reading.leading == 0:
        same = sum(1 for x in reading.fresh_leading if x == 0)
        fresh = f"{same} of {reading.n_compared} freshly written passages{near} were not continued word for word either"
    elif reading.n_at_least == 0:
        among = f" of the {reading.n_compared}{near}" if near else ""
        fresh = f"no freshly written passage{among} was continued beyond {count(reading.best_fresh, 'token')}"
    else:
        fresh = (
            f"{reading.n_at_least} of {reading.n_compared} freshly written passages{near} were continued at least "
            "as far"
        )
    return f"{given}, {wrote}; {fresh}."


def extraction_finding(reading: ExtractionReading, view: ExtractionView) -> Finding:
    """The extraction test's own verdict, in the placement's vocabulary."""
    sentence = extraction_sentence(reading, view)
    level = reading.level
    evidence = (
        sentence,
        f"compared with {reading.n_compared} freshly written passages that had at least "
        f"{count(reading.length, 'token')} to continue",
    )
    numbers = (
        f"extraction: {reading.leading} of {reading.length} tokens verbatim · "
        f"{reading.n_at_least} of {reading.n_compared} fresh passages continued as far"
        + (f" (1 in {round(1 / reading.chance)})" if reading.chance <= 0.5 else "")
    )
    caveats: tuple[str, ...] = ()
    if reading.tests > 1:
        caveats = ("Two tests were read for this passage, so each needed twice the evidence for its level.",)
    if level in EXPOSURE_LEVELS:
        return Finding(level, f"{sentence[:-1]}: {STRENGTH[level]} the model has seen it.", evidence, caveats, numbers)
    if reading.chance >= NONE_CHANCE:
        return Finding("none", f"Not continued word for word: {_lower_first(sentence)}", evidence, caveats, numbers)
    return Finding(
        "inconclusive",
        f"Cannot tell from the continuation: {_lower_first(sentence)[:-1]}, further than most new text but not "
        "far enough to count as a sign.",
        evidence,
        caveats,
        numbers,
    )


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


RANK = {"strong": 3, "moderate": 2, "weak": 1}


def passage_finding(
    placement: PassagePlacement, reading: ExtractionReading | None, view: ExtractionView | None
) -> Finding:
    """One finding for the passage from its placement and (when measured) its extraction: the stronger sign
        carries it and is named; with no sign from either, ``none`` needs both inside new text's range. A passage of a
    kind no fresh text is of (a table of numbers) is at most ``inconclusive``: its continuation is not read either."""
    place = placement_finding(placement)
    if reading is None or view is None:
        return place
    extracted = extraction_finding(reading, view)
    if lacks_own_kind(placement):  # no fresh text of its kind: its continuation has nothing to be read against
        return replace(place, evidence=(*place.evidence, f"the continuation: {extracted.headline}"))
    readable = has_yardstick(placement)
    place_rank = RANK.get(place.level, 0) if readable else 0
    extract_rank = RANK.get(extracted.level, 0)
    if extract_rank > place_rank or (extract_rank == place_rank == 0 and _extraction_decides(place, extracted)):
        carrier, other, carried_by = extracted, place, "the extraction test"
    else:
        carrier, other, carried_by = place, extracted, "the placement among fresh passages"
    evidence = (*carrier.evidence, f"the other test: {other.headline}", *other.evidence)
    caveats = (f"This reading rests on {carried_by}.", *carrier.caveats)
    caveats += tuple(c for c in other.caveats if c not in caveats)
    return Finding(carrier.level, carrier.headline, evidence, caveats, f"{carrier.numbers} · {other.numbers}")


def _extraction_decides(place: Finding, extracted: Finding) -> bool:
    """With no sign from either test, ``none`` needs both: a continuation further than most new text turns
    the placement's ``none`` into ``inconclusive``; an uncertain placement stays the reading."""
    return place.level == "none" and extracted.level == "inconclusive"
