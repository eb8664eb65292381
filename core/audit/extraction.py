"""Extraction over a sample of a benchmark's items: given each item's first half, does the model write the rest
word for word further than it continues freshly written text?

Each sampled item is continued once (one batched greedy generation) and read against the fresh passages'
continuations under the same model, exactly as the Inspect page reads one passage
(``core.passage.extraction_finding``): an item *counts* when the model reproduced at least ``MIN_CONTINUATION``
tokens and at most ``ITEM_CHANCE`` of the comparable fresh passages were continued that far. For an item the model
never saw, that chance is at most ``ITEM_CHANCE``, so the count of items is read against that rate as a share
(``core.stats.proportion``): its interval gives the level, its one-sided binomial p-value the audit's test.
Items too short to split are left out and counted; the fresh passages a verdict needs are scored once per model
and stored (shipped for the bundled model).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from core.engine.handle import ModelHandle
from core.engine.progress import ProgressCallback
from core.engine.records import scored_text
from core.errors import LeakLensError
from core.methods.extraction import MIN_CONTINUATION, extract
from core.passage.calibration import stored_fresh_calibration
from core.passage.extraction_finding import read_extraction
from core.passage.placement import fresh_positions_for
from core.passage.text_form import guess_group
from core.stats.finding import Finding, count, interval, more_would_settle, too_few
from core.stats.proportion import NONE_MARGIN, ShareReading
from core.store.results import ResultStore

SAMPLE = 100
"""Items continued per audit: enough for a share to settle (0 of 100 puts its interval's upper end at 4%, inside
chance plus the margin), few enough for one batched generation."""
ITEM_CHANCE = 0.05
"""An item counts when no more than this share of comparable fresh passages was continued as far."""
MIN_ITEMS = 5
SEED = 0


@dataclass(frozen=True)
class ItemReading:
    """One item's continuation against the fresh passages'."""

    index: int
    """The item's position in the benchmark (0-based)."""
    leading: int
    length: int
    chance: float

    @property
    def counts(self) -> bool:
        return self.leading >= MIN_CONTINUATION and self.chance <= ITEM_CHANCE


@dataclass(frozen=True)
class ItemsExtraction:
    """The extraction test over a sample of items: each item's reading, their share, and the finding."""

    readings: tuple[ItemReading, ...]
    n_sampled: int
    n_too_short: int
    fresh_compared: int
    """Fresh passages whose continuations the items were read against."""

    @property
    def share(self) -> ShareReading | None:
        if not self.readings:
            return None
        return ShareReading(sum(r.counts for r in self.readings), len(self.readings), ITEM_CHANCE)

    @property
    def p_value(self) -> float | None:
        share = self.share
        return None if share is None else share.p_value

    @property
    def finding(self) -> Finding:
        return items_finding(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "readings": [[r.index, r.leading, r.length, r.chance] for r in self.readings],
            "n_sampled": self.n_sampled,
            "n_too_short": self.n_too_short,
            "fresh_compared": self.fresh_compared,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ItemsExtraction:
        readings = tuple(ItemReading(int(i), int(lead), int(n), float(c)) for i, lead, n, c in data["readings"])
        return cls(readings, int(data["n_sampled"]), int(data["n_too_short"]), int(data["fresh_compared"]))


def sample_items(n_items: int, size: int = SAMPLE, seed: int = SEED) -> list[int]:
    """A seeded sample of item positions, in the benchmark's order (every item when there are few)."""
    if n_items <= size:
        return list(range(n_items))
    return sorted(random.Random(seed).sample(range(n_items), size))


def items_extraction(
    model: ModelHandle,
    texts: Sequence[str],
    *,
    store: ResultStore,
    progress: Callable[[str], ProgressCallback | None] | None = None,
    size: int = SAMPLE,
) -> ItemsExtraction:
    """Continue a seeded sample of ``texts`` (the benchmark's items) and read each against the fresh passages.

    ``progress(stage)`` gives a callback per stage: ``fresh`` (fresh passages scored once for this model) and
    ``items`` (the continuations)."""
    from core.engine.scoring import score_texts

    stage = progress or (lambda _: None)
    chosen = sample_items(len(texts), size)
    lm = model.load()
    records = score_texts(lm, [texts[i] for i in chosen], kgram_max=0)
    wanted = [(rec.n_tokens, guess_group(scored_text(rec))) for rec in records]
    calibration = stored_fresh_calibration(
        model, store=store, progress=stage("fresh"), only=lambda rows: fresh_positions_for(lm, rows, wanted)
    )
    continuations = extract(lm, records, progress=stage("items"))
    readings, too_short, compared = [], 0, 0
    for index, (continuation,) in zip(chosen, continuations, strict=True):
        if continuation is None:
            too_short += 1
            continue
        reading = read_extraction(continuation, calibration)
        if reading is None:
            raise LeakLensError("The fresh passages' continuations were not measured for this model.")
        compared = max(compared, reading.n_compared)
        readings.append(ItemReading(index, reading.leading, reading.length, reading.chance))
    return ItemsExtraction(tuple(readings), len(chosen), too_short, compared)


def items_finding(result: ItemsExtraction) -> Finding:
    """The extraction test's verdict over the sampled items (see the module docstring)."""
    share = result.share
    skipped = (
        (f"{count(result.n_too_short, 'item')} too short to split into a prompt and a continuation were left out.",)
        if result.n_too_short
        else ()
    )
    caveats = (
        "Items are compared with freshly written passages: a benchmark of very formulaic items (lists, code "
        "boilerplate) may be continued further than prose by any model.",
        *skipped,
    )
    if share is None or share.n < MIN_ITEMS:
        have = count(share.n if share else 0, "item long enough to continue")
        return Finding("inconclusive", too_few(have, str(MIN_ITEMS)), (), caveats)
    lo, hi = share.interval
    evidence = (
        f"given the first half of {count(share.n, 'item')}, the model wrote the rest word for word further than "
        f"{1 - ITEM_CHANCE:.0%} of freshly written text for {share.hits} ({share.share:.0%}, 95% interval "
        f"{lo:.0%}–{hi:.0%})",
        f"chance allows at most {ITEM_CHANCE:.0%} of items; one-sided binomial p = {share.p_value:.2g}",
        f"compared with {count(result.fresh_compared, 'freshly written passage')}",
    )
    numbers = (
        f"continued word for word beyond fresh text: {share.hits} of {share.n} items ({interval(lo, hi, '.0%')}) · "
        f"chance ≤ {ITEM_CHANCE:.0%} · no-effect margin {NONE_MARGIN:.0%} above chance"
    )
    level = share.level
    if level in ("strong", "moderate", "weak"):
        headline = (
            f"{level.capitalize()} evidence the model has seen these items: given the first half, it writes the rest "
            f"word for word for {share.share:.0%} of them, where new text allows at most {ITEM_CHANCE:.0%}."
        )
    elif level == "none":
        headline = (
            f"No sign the model has seen these items: it continues {share.share:.0%} of them word for word beyond "
            "what it does for freshly written text."
        )
    else:
        needed = share.items_needed()
        more = more_would_settle(needed, share.n, "items")
        headline = f"Cannot tell from the continuations yet; {more}."
    return Finding(level, headline, evidence, caveats, numbers)
