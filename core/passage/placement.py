"""Where one passage sits among freshly written passages of similar length, in one plain sentence.

A single score has no threshold of its own; freshly written passages (which no model can have trained on)
scored by the same model give one. The passage is compared only with fresh passages of similar length,
since loss falls as a text grows longer and the model has more context to predict from. It is placed by its
loss against close rewordings of itself (``PLACED_METHODS``: text predictable for its kind stays predictable
reworded, text the model read does not), or, where the source cannot reword it, by loss and Min-K% read against
its nearest fresh passages in kind; it gets the share of those passages it stands above (a percentile).

The level follows that percentile (99th strong, 95th moderate, 90th weak) in the exact form a finite set
allows: were the passage itself fresh, it would score at least this high with chance (k + 1) / (N + 1),
k being how many of the N fresh passages score at least as high, and strong / moderate / weak need that
chance at most 1% / 5% / 10%. So with fewer than 99 passages to compare with, even a passage above all of
them is at most ``moderate``: the data cannot say more. Of the methods placed, the less extreme one sets
the level and the headline, so a reading never rests on the one detector that happened to fire. ``none``
needs every method inside the bulk of fresh text (``NONE_CHANCE``); a passage above most of it but below
``weak`` is ``inconclusive``.

Before any of that, the finding is ``inconclusive`` when the data cannot tell:
- the passage has fewer than ``core.passage.summary.MIN_PASSAGE_TOKENS`` scored tokens: "Too short to judge";
- fewer than ``MIN_SIMILAR`` fresh passages are within ``LENGTH_FACTOR`` of its length (the comparison had
  to widen to passages of another length), or the whole fresh set is smaller than that: "no fresh passages
  of this length to compare with". A 2-token passage is never "less predictable than all 15 fresh
  passages" that are 78 tokens and longer.
Probability slopes never enter the finding; see ``MIN_SLOPE_TOKENS`` for
when a slope may be shown at all (``core.passage.summary``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from core.engine.model_source import ScoringModel
from core.errors import LeakLensError
from core.methods import Method, parse_methods
from core.passage.calibration import FRESH_NEIGHBOURHOOD, FreshCalibration, FreshPassage, fresh_lengths
from core.passage.kind import adjusted_fresh, kind_words, nearest
from core.passage.summary import format_perplexity, percentile_of, too_short, too_short_text
from core.passage.text_form import GROUP_NAMES, PROSE, guess_group
from core.stats.finding import Finding, Level, count

LENGTH_FACTOR = 2.0
"""Fresh passages whose token count is within this factor of the passage's count as similar in length."""
MIN_SIMILAR = 15
"""Fewest passages of similar length to compare with. When the factor finds fewer, the nearest in length are
still placed (for the chart) but the finding is inconclusive: loss falls as texts grow longer, so passages of
another length say nothing about this one. 15 similar passages let a passage above all of them reach ``weak``
(chance 1/16 < 10%); fewer could not give any reading but ``none``."""
NEIGHBOURHOOD_KEY = FRESH_NEIGHBOURHOOD.key
PLACED_METHODS: tuple[str, ...] = (NEIGHBOURHOOD_KEY,)
"""What a passage is placed by: its loss against close rewordings of itself (the neighbourhood comparison). Loss
alone reads any text predictable by its kind (a recipe, a licence, a changelog) as seen; reworded, such text
stays as predictable, while text the model has read is predictable only in its own words (docs/methods.md)."""
FALLBACK_METHODS: tuple[str, ...] = ("loss", "min_k_20")
"""What a passage is placed by when the source cannot reword it (a server without its top alternatives), each
read against its nearest fresh passages in kind."""
KIND_ADJUSTED_METHODS: frozenset[str] = frozenset(FALLBACK_METHODS)
"""Methods read against the passage's nearest fresh passages in kind (``core.passage.kind``). The
neighbourhood reading needs no such adjustment: it compares the passage with rewordings of itself."""
LEVEL_CHANCE: tuple[tuple[Level, float], ...] = (("strong", 0.01), ("moderate", 0.05), ("weak", 0.10))
"""Largest chance that a fresh passage scores this high, per level (the 99th / 95th / 90th percentile)."""
NONE_CHANCE = 0.25
"""No-effect margin of a single passage: ``none`` needs every placed method to leave at least a quarter of the
fresh passages scoring as high (chance ≥ 25%, below the 75th percentile): the passage sits inside the bulk of
new text. Between that and ``weak`` (chance ≤ 10%) the passage is above most new text but not far enough to
call: ``inconclusive``, and only more passages from the same source (a set-level test) can tell."""
HEADLINE_NAMES = {"loss": "loss", NEIGHBOURHOOD_KEY: "against its rewordings"}
"""Short method names for the headline, where the method's own label is long."""
STRENGTH = {"strong": "a strong sign", "moderate": "a sign", "weak": "a weak sign"}
FORMULAIC_CAVEAT = (
    "Famous, quoted or formulaic text (legal boilerplate, lists, code, stock phrases) can be highly "
    "predictable without being memorised: this is evidence, not proof."
)


def other_form_caveat(group: str, n_own: int) -> str:
    """Said when a passage could not be compared with fresh text of its own kind."""
    return (
        f"It reads as {GROUP_NAMES[group]}, and only {n_own} freshly written passages of that kind are near its "
        "length, so it is compared with passages of every kind, mostly English prose: its percentile means less."
    )


def level_of_chance(chance: float) -> Level:
    """strong / moderate / weak at a chance of at most 1% / 5% / 10%, else none (``LEVEL_CHANCE``)."""
    return next((level for level, limit in LEVEL_CHANCE if chance <= limit), "none")


@dataclass(frozen=True)
class MethodPlacement:
    """One method's reading: the passage's score against the similar-length fresh passages' scores."""

    method_key: str
    label: str
    score: float
    """The passage's score (higher = more predictable, as every method's score)."""
    percentile: float
    """Share (0..100) of the compared fresh passages the passage is more predictable than (ties count half)."""
    n_at_least: int
    """Compared fresh passages scoring at least as high as the passage."""
    calibration_scores: tuple[float, ...]
    """The compared fresh passages' scores (finite ones), for the distribution chart."""
    tests: int = 1
    """Tests read for the same passage (placement and extraction: 2); the level allows for each (Bonferroni)."""
    kind_positions: tuple[int, ...] = ()
    """Which of ``calibration_scores`` are the passage's nearest fresh passages in kind (``core.passage.kind``);
    empty when the fresh set has no embeddings (the plain placement by score)."""
    kind_words: str = ""
    """What those nearest passages are, in plain words ("recipes and instructions")."""
    kind_n_at_least: int = 0
    """Of the nearest in kind, how many score at least as high as the passage (its rank among its own kind)."""
    adjusted: float | None = None
    """The passage's kind-adjusted score: its score minus the median of its nearest fresh passages in kind. When
    set, ``percentile`` and ``n_at_least`` place this among the compared fresh passages' own adjusted scores."""

    @property
    def n_compared(self) -> int:
        return len(self.calibration_scores)

    @property
    def kind_adjusted(self) -> bool:
        return self.adjusted is not None and bool(self.kind_positions)

    @property
    def n_kind(self) -> int:
        return len(self.kind_positions)

    @property
    def kind_scores(self) -> tuple[float, ...]:
        return tuple(self.calibration_scores[i] for i in self.kind_positions)

    @property
    def chance(self) -> float:
        """How often a fresh passage of this length would score at least this high: (k + 1) / (N + 1)."""
        return (self.n_at_least + 1) / (self.n_compared + 1)

    @property
    def level(self) -> Level:
        return level_of_chance(self.chance * self.tests)

    def chart_data(self) -> dict[str, Any]:
        """Plain lists for a small distribution chart: the fresh passages' scores and the passage's own."""
        return {
            "method": self.method_key,
            "label": self.label,
            "calibration_scores": list(self.calibration_scores),
            "passage_score": self.score,
            "percentile": self.percentile,
            "kind_positions": list(self.kind_positions),
            "kind_words": self.kind_words,
            "kind_n_at_least": self.kind_n_at_least,
            "adjusted": self.adjusted,
        }


@dataclass(frozen=True)
class PassagePlacement:
    """A passage placed among the fresh passages of similar length, per method."""

    model: str
    n_tokens: int
    """Tokens scored in the passage (under the model's tokenizer, like the fresh passages' counts)."""
    similar_ids: tuple[str, ...]
    similar_n_tokens: tuple[int, ...]
    widened: bool
    """Fewer than ``minimum`` fresh passages were within the factor, so the nearest in length were used."""
    n_calibration: int
    """Size of the whole fresh set."""
    methods: tuple[MethodPlacement, ...]
    factor: float = LENGTH_FACTOR
    minimum: int = MIN_SIMILAR
    group: str = PROSE
    """The kind of text the passage reads as (``core.passage.text_form``)."""
    n_own_group: int | None = None
    """Fresh passages of its kind within the length factor; None when the calibration has no kinds."""

    @property
    def group_matched(self) -> bool:
        """Compared only with fresh passages of its own kind (enough of them were near its length)."""
        return self.n_own_group is not None and self.n_own_group >= self.minimum

    @property
    def n_similar(self) -> int:
        return len(self.similar_ids)

    @property
    def token_range(self) -> tuple[int, int]:
        return min(self.similar_n_tokens), max(self.similar_n_tokens)

    def method(self, key: str) -> MethodPlacement | None:
        return next((m for m in self.methods if m.method_key == key), None)

    @property
    def deciding(self) -> MethodPlacement:
        """The least extreme method (highest chance): it sets the level and the headline."""
        return max(self.methods, key=lambda m: m.chance)  # first of equals: the order of PLACED_METHODS

    @property
    def level(self) -> Level:
        return self.deciding.level

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (``--out`` files, tests): the comparison set and every method's chart data."""
        return {
            "model": self.model,
            "n_tokens": self.n_tokens,
            "similar_ids": list(self.similar_ids),
            "similar_n_tokens": list(self.similar_n_tokens),
            "widened": self.widened,
            "n_calibration": self.n_calibration,
            "factor": self.factor,
            "group": self.group,
            "group_matched": self.group_matched,
            "methods": [
                {**m.chart_data(), "chance": m.chance, "tests": m.tests, "level": m.level} for m in self.methods
            ],
        }


def similar_length(
    n_tokens: int, lengths: Sequence[int], *, factor: float = LENGTH_FACTOR, minimum: int = MIN_SIMILAR
) -> tuple[list[int], bool]:
    """Positions of the lengths within ``factor`` of ``n_tokens``, nearest first; the ``minimum`` nearest
    (on a log scale) when the factor finds fewer, with True for "widened"."""
    if n_tokens < 1:
        raise LeakLensError("The passage has no scored token to compare.")
    if factor < 1:
        raise LeakLensError(f"The length factor must be at least 1, got {factor}.")
    distance = [abs(math.log(max(m, 1) / n_tokens)) for m in lengths]
    order = sorted(range(len(lengths)), key=lambda i: (distance[i], i))
    within = [i for i in order if distance[i] <= math.log(factor) + 1e-12]
    if len(within) >= minimum:
        return within, False
    return order[:minimum], len(order) > len(within)


def comparison_positions(
    n_tokens: int,
    lengths: Sequence[int],
    groups: Sequence[str] = (),
    *,
    group: str = PROSE,
    factor: float = LENGTH_FACTOR,
    minimum: int = MIN_SIMILAR,
) -> tuple[list[int], bool, int | None]:
    """Which fresh passages (positions in ``lengths``) a passage of ``n_tokens`` and kind ``group`` is compared
    with, nearest in length first: those of its kind within ``factor`` when ``minimum`` of them are, else every
    kind's (``similar_length``). Returns (positions, widened, fresh passages of its kind within the factor;
    None without ``groups``). Any superset of the positions returned selects the same ones again, so the
    fresh passages can be scored these first and the rest later."""
    positions, widened = similar_length(n_tokens, lengths, factor=factor, minimum=minimum)
    n_own = None
    if groups:
        own = [i for i, g in enumerate(groups) if g == group]
        near, own_widened = similar_length(n_tokens, [lengths[i] for i in own], factor=factor, minimum=1)
        n_own = 0 if own_widened or not own else len(near)
        if n_own >= minimum:
            positions, widened = [own[i] for i in near], False
    return positions, widened, n_own


def fresh_positions_for(
    lm: ScoringModel, passages: Sequence[FreshPassage], wanted: Sequence[tuple[int, str]]
) -> list[int]:
    """Positions of the fresh passages that passages of these (token count, kind) pairs are compared with
    (``comparison_positions``), nearest in length to the first passage first: what to score before a verdict."""
    lengths = fresh_lengths(lm, passages)
    groups = [guess_group(p.text) for p in passages]
    order: list[int] = []
    for n_tokens, group in wanted:
        order += comparison_positions(max(n_tokens, 1), lengths, groups, group=group)[0]
    return list(dict.fromkeys(order))


def place_passage(
    scores: Mapping[str, float],
    n_tokens: int,
    calibration: FreshCalibration,
    *,
    methods: Sequence[str] | None = None,
    factor: float = LENGTH_FACTOR,
    minimum: int = MIN_SIMILAR,
    tests: int = 1,
    group: str = PROSE,
    vector: np.ndarray | None = None,
) -> PassagePlacement:
    """Place a passage's ``scores`` (by method key, e.g. ``PassageAnalysis.scores``) and its scored token
    count among ``calibration``'s passages of similar length, for each of ``methods`` both sides have;
    ``tests``: how many tests the passage's finding reads (``MethodPlacement.tests``); ``group``: the kind of
    text it reads as, compared only with fresh passages of that kind when ``minimum`` of them are near its
    length, else with every fresh passage; ``vector``: the passage's embedding (``core.passage.kind``), which
    reads it against its nearest fresh passages in kind when the calibration has embeddings. ``methods``
    default: ``placed_by(scores, calibration)``."""
    methods = placed_by(scores, calibration) if methods is None else methods
    positions, widened, n_own = comparison_positions(
        n_tokens, calibration.n_tokens, calibration.groups, group=group, factor=factor, minimum=minimum
    )
    vectors = calibration.vectors() if vector is not None else None
    placed = []
    for key in methods:
        value = scores.get(key)
        column = calibration.scores.get(key)
        if value is None or column is None or not math.isfinite(value):
            continue
        kept = [i for i in positions if math.isfinite(column[i])]
        compared = np.asarray([column[i] for i in kept], dtype=np.float64)
        if compared.size == 0:
            continue
        placed.append(_method_placement(calibration, key, float(value), compared, kept, vectors, vector, tests))
    if not placed:
        raise LeakLensError(
            f"None of {', '.join(methods)} is scored both for the passage and for the fresh passages; "
            "score the passage with loss or Min-K% to place it."
        )
    return PassagePlacement(
        model=calibration.model,
        n_tokens=int(n_tokens),
        similar_ids=tuple(calibration.ids[i] for i in positions),
        similar_n_tokens=tuple(int(calibration.n_tokens[i]) for i in positions),
        widened=widened,
        n_calibration=calibration.n,
        methods=tuple(placed),
        factor=factor,
        minimum=minimum,
        group=group,
        n_own_group=n_own,
    )


def placed_by(scores: Mapping[str, float], calibration: FreshCalibration) -> tuple[str, ...]:
    """``PLACED_METHODS`` when both the passage and the fresh passages have them, else ``FALLBACK_METHODS``."""
    have = all(math.isfinite(scores.get(key, math.nan)) and key in calibration.scores for key in PLACED_METHODS)
    return PLACED_METHODS if have else FALLBACK_METHODS


def placing_methods() -> list[Method]:
    """Every method a passage may be placed by, for the passage's own scoring pass."""
    return [FRESH_NEIGHBOURHOOD, *parse_methods(list(FALLBACK_METHODS))]


def _method_placement(
    calibration: FreshCalibration,
    key: str,
    value: float,
    compared: np.ndarray,
    kept: list[int],
    vectors: np.ndarray | None,
    vector: np.ndarray | None,
    tests: int,
) -> MethodPlacement:
    """One method's reading among the compared passages: by its plain score, or, for ``KIND_ADJUSTED_METHODS``
    with embeddings, by its kind-adjusted score among the compared passages' own kind-adjusted scores. With
    embeddings the passage's nearest fresh passages in kind are named either way (the chart shows them)."""
    plain = MethodPlacement(
        key,
        calibration.label(key),
        value,
        tests=tests,
        percentile=percentile_of(value, compared),
        n_at_least=int(np.count_nonzero(compared >= value)),
        calibration_scores=tuple(float(x) for x in compared),
    )
    if vectors is None or vector is None or len(kept) < 2:
        return plain
    compared_vectors = vectors[kept]
    near = nearest(vector, compared_vectors)
    forms = [calibration.forms[i] if i < len(calibration.forms) else "" for i in kept]
    in_kind = replace(
        plain,
        kind_positions=tuple(int(i) for i in near),
        kind_words=kind_words([forms[i] for i in near]),
        kind_n_at_least=int(np.count_nonzero(compared[near] >= value)),
    )
    if key not in KIND_ADJUSTED_METHODS:
        return in_kind
    adjusted = value - float(np.median(compared[near]))
    fresh_adjusted = adjusted_fresh(compared, compared_vectors)
    return replace(
        in_kind,
        percentile=percentile_of(adjusted, fresh_adjusted),
        n_at_least=int(np.count_nonzero(fresh_adjusted >= adjusted)),
        adjusted=adjusted,
    )


def has_yardstick(placement: PassagePlacement) -> bool:
    """True when the passage can be read against the fresh passages at all: long enough to judge, and enough
    fresh passages of similar length (``MIN_SIMILAR`` within ``LENGTH_FACTOR``) without widening."""
    return (
        not too_short(placement.n_tokens)
        and not placement.widened
        and _n_within(placement) >= placement.minimum
        and not lacks_own_kind(placement)
    )


def lacks_own_kind(placement: PassagePlacement) -> bool:
    """The passage reads as a kind of text (code, dialogue, numbers, another language) of which too few fresh
    passages are near its length: fresh text of other kinds is no yardstick for it."""
    return placement.group != PROSE and placement.n_own_group is not None and not placement.group_matched


def placement_finding(placement: PassagePlacement) -> Finding:
    """The passage's verdict against fresh text: level from the less extreme method, never proof."""
    deciding = placement.deciding
    level = deciding.level
    name = _headline_name(deciding)
    low, high = placement.token_range
    evidence = [_method_evidence(m) for m in placement.methods]
    evidence.append(
        f"compared with {placement.n_similar} of the {placement.n_calibration} fresh passages"
        + (f" ({GROUP_NAMES[placement.group]}, like this one)" if placement.group_matched else "")
        + f", {low}–{high} tokens long (this passage: {placement.n_tokens} tokens)"
    )
    if deciding.chance <= 0.5:
        evidence.append(
            f"a freshly written passage of this length scores this high about 1 time in "
            f"{round(1 / deciding.chance)} ({name})"
        )
    others = [m for m in placement.methods if m is not deciding]
    lengths = f"{low} tokens" if low == high else f"{low}–{high} tokens"
    caveats = [FORMULAIC_CAVEAT]
    if lacks_own_kind(placement):
        caveats.append(other_form_caveat(placement.group, placement.n_own_group or 0))
    within = _n_within(placement)
    if not has_yardstick(placement):
        # No percentile in the numbers: passages of another length are no yardstick for this one.
        numbers = (
            f"this passage {count(placement.n_tokens, 'token')} · {within} of the {placement.n_calibration} "
            f"fresh passages within {placement.factor:g}× its length · the nearest are {lengths}"
        )
    else:
        numbers = " · ".join(
            [
                *(_numbers(m) for m in (deciding, *others)),
                f"this passage {count(placement.n_tokens, 'token')}, compared with {lengths}",
            ]
        )
    if too_short(placement.n_tokens):
        return Finding("inconclusive", too_short_text(placement.n_tokens), tuple(evidence), tuple(caveats), numbers)
    if placement.widened or within < placement.minimum:
        caveats.append(
            f"Fewer than {placement.minimum} fresh passages are within {placement.factor:g}× its length, "
            f"so the {placement.n_similar} nearest in length are shown; loss tends to fall as texts grow "
            "longer, so they are no yardstick for this passage."
        )
        return Finding(
            "inconclusive",
            "Cannot tell: no fresh passages of this length to compare with. It has "
            f"{count(placement.n_tokens, 'token')}; {_within_words(within)} of the {placement.n_calibration} "
            f"freshly written passages {'is' if within == 1 else 'are'} within {placement.factor:g} times that "
            f"length, and a reading needs {placement.minimum}.",
            tuple(evidence),
            tuple(caveats),
            numbers,
        )
    if lacks_own_kind(placement):
        own = placement.n_own_group or 0
        return Finding(
            "inconclusive",
            f"Cannot tell: it reads as {GROUP_NAMES[placement.group]}, and "
            f"{'no' if own == 0 else f'only {own}'} freshly written "
            f"passage{'' if own == 1 else 's'} of that kind {'is' if own == 1 else 'are'} near its length "
            f"(a reading needs {placement.minimum}): text of other kinds is no yardstick for it.",
            tuple(evidence),
            tuple(caveats),
            numbers,
        )
    highest = min(placement.methods, key=lambda m: m.chance)
    if level == "none" and highest.chance < NONE_CHANCE:
        return Finding(
            "inconclusive",
            f"Cannot tell: {_by(highest, placement)}{more_than(highest)} {_kind_share(highest)}"
            + (
                f", but not {PLAIN_READINGS.get(deciding.method_key, 'by the other reading')}"
                if highest is not deciding
                else ""
            )
            + ": above most new text but not far enough to count as a sign. Testing "
            "more passages from the same source together (Membership or Dataset inference) can tell.",
            tuple(evidence),
            tuple(caveats),
            numbers,
        )
    if deciding.percentile == 0:
        headline = (
            f"No sign the model has seen it: {less_than(deciding)} all {deciding.n_compared} freshly "
            "written passages of similar length."
        )
    elif level == "none":
        headline = (
            f"No clear sign the model has seen it: {more_than(deciding)} {_kind_share(deciding)}, "
            "within the range of new text."
        )
    else:
        headline = (
            f"{_capital(more_than(deciding))} {_kind_share(deciding)}: {STRENGTH[level]} the model may have seen it — "
            "evidence, not proof."
        )
    ceiling = level_of_chance(deciding.tests / (deciding.n_compared + 1))
    if deciding.percentile >= 90 and ceiling != "strong":
        caveats.append(
            f"With {deciding.n_compared} passages to compare with, the strongest possible reading is "
            f"{ceiling}: even text above all of them could be new text scoring high by chance "
            f"(1 in {deciding.n_compared + 1}"
            + (", counted twice since two tests were read)." if deciding.tests > 1 else ").")
        )
    for other in others:
        if other.level != level:
            caveats.append(
                f"The level follows the less extreme reading; {_headline_name(other)} alone places it "
                f"higher ({more_than(other)} {_share(other)} passages)."
            )
    return Finding(level, headline, tuple(evidence), tuple(caveats), numbers)


def how_often(n_at_least: int, n_compared: int, chance: float) -> str:
    """``1 in 13`` while that is at most half of them; above half the count itself (``150 of 200``), since
    "1 in 1" would read as every one."""
    return f"1 in {round(1 / chance)}" if chance <= 0.5 else f"{n_at_least} of {n_compared}"


def _numbers(method: MethodPlacement) -> str:
    """``loss: more predictable than 92% of 200 fresh passages (1 in 13 score this high)``; above half, the
    count itself (``150 of 200 score this high``), since "1 in 1" would read as every one."""
    if method.percentile == 0:
        return f"{_headline_name(method)}: {less_than(method)} all {method.n_compared} fresh passages"
    how_many = how_often(method.n_at_least, method.n_compared, method.chance)
    return f"{_headline_name(method)}: {more_than(method)} {_share(method)} fresh passages ({how_many} score this high)"


def _n_within(placement: PassagePlacement) -> int:
    """Compared fresh passages within the length factor (all of them unless the comparison was widened)."""
    limit = math.log(placement.factor) + 1e-12
    return sum(1 for m in placement.similar_n_tokens if abs(math.log(max(m, 1) / max(placement.n_tokens, 1))) <= limit)


def _within_words(n: int) -> str:
    return "none" if n == 0 else f"only {n}"


def _headline_name(method: MethodPlacement) -> str:
    return HEADLINE_NAMES.get(method.method_key, method.label)


def _share(method: MethodPlacement) -> str:
    """'all 31' when above every one, else the percentile rounded down (never overstated) 'of N'."""
    if method.n_at_least == 0:
        return f"all {method.n_compared}"
    return f"{_percent(method)} of {method.n_compared}"


PLAIN_READINGS = {
    "loss": "over all its words",
    "min_k_20": "on its least predictable words",
    NEIGHBOURHOOD_KEY: "against close rewordings of it",
}
"""The placed methods in words a viewer needs no glossary for (the headline shows in Present mode)."""


def _by(method: MethodPlacement, placement: PassagePlacement) -> str:
    """'over all its words, ' when the passage was placed by more than one method, so the reader knows which
    reading the share is."""
    if len(placement.methods) < 2:
        return ""
    return f"{PLAIN_READINGS.get(method.method_key, 'by one reading')}, "


def _kind_share(method: MethodPlacement) -> str:
    """The comparison in words. Plain: 'all 36 freshly written passages of similar length'. By kind: its rank among
    the fresh passages nearest in kind, then the kind-adjusted share that sets the level: 'all 40 freshly written
    recipes and instructions of similar length, and 99% of 412 fresh passages once each is read against its own
    kind'."""
    among_kind = (
        f"all {method.n_kind}"
        if method.kind_n_at_least == 0
        else f"{method.n_kind - method.kind_n_at_least} of the {method.n_kind}"
    )
    if method.kind_positions and not method.kind_adjusted:
        return (
            f"{_share(method)} freshly written passages of similar length (above {among_kind} "
            f"{method.kind_words} among them nearest to it in kind)"
        )
    if not method.kind_adjusted:
        return f"{_share(method)} freshly written passages of similar length"
    return (
        f"{among_kind} freshly written {method.kind_words} of similar length nearest to it in kind, and than "
        f"{_share(method)} fresh passages once each is read against its own kind"
    )


REWORDED_MORE = "likelier in its own words than reworded, by more than"
REWORDED_LESS = "likelier in its own words than reworded by less than"


def more_than(method: MethodPlacement) -> str:
    """How a method's share reads ("more predictable than" 92% of ...), in words with no jargon: the
    neighbourhood reading says what it measures, the passage against its own rewordings."""
    return REWORDED_MORE if method.method_key == NEIGHBOURHOOD_KEY else "more predictable than"


def less_than(method: MethodPlacement) -> str:
    return REWORDED_LESS if method.method_key == NEIGHBOURHOOD_KEY else "less predictable than"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _percent(method: MethodPlacement) -> str:
    return f"{math.floor(method.percentile)}%"


def _method_evidence(method: MethodPlacement) -> str:
    median = float(np.median(method.calibration_scores))
    if method.method_key == "loss":  # the score is the mean log-prob: perplexity reads better
        against = (
            f"perplexity {format_perplexity(math.exp(-method.score))} against a median of "
            f"{format_perplexity(math.exp(-median))}"
        )
    elif method.method_key == NEIGHBOURHOOD_KEY:
        against = (
            f"its close rewordings are {method.score:.2f} less likely per word, on a log scale, against a median "
            f"of {median:.2f}"
        )
    else:
        against = f"score {method.score:.2f} against a median of {median:.2f}"
    plain = (
        f"{method.label}: {more_than(method)} {_percent(method)} of the {method.n_compared} fresh passages "
        f"compared ({against})"
    )
    if not method.kind_adjusted:
        return plain
    kind_median = float(np.median(method.kind_scores))
    kind_against = (
        f"median perplexity {format_perplexity(math.exp(-kind_median))}"
        if method.method_key == "loss"
        else f"median score {kind_median:.2f}"
    )
    return (
        f"{method.label}: against the {method.n_kind} fresh passages nearest in kind ({method.kind_words}; "
        f"{kind_against}) it scores {method.adjusted:+.2f}; fresh passages read the same way against their own "
        f"kind score that high {how_often(method.n_at_least, method.n_compared, method.chance)} times "
        f"({against}, before allowing for kind)"
    )
