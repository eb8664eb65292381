"""Patterns in the published order that a model could know without ever reading the file.

The test's guarantee rests on one assumption: without the file, the published order is no likelier than
any shuffle. A file sorted by a property the text shows (difficulty, subject, alphabetically) or whose
examples carry rising numbers ("Question 12") breaks it: a model that never saw the file can still
prefer the published order. Only the order *within* shards matters (shards are never shuffled with each
other), so a file grouped by subject in long blocks is fine while a file sorted inside each block is not.
The obvious cases are detected; a finding on such a file is ``confounded``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scipy import stats

from core.data.tables import ROW_ID_COLUMNS

MIN_PAIRS = 10
"""Neighbouring pairs (within shards, values differing) needed before an order is called a pattern."""
SORTED_SHARE = 0.8
"""Share of those pairs that must run one way, ascending or descending."""
PATTERN_P = 0.001
"""And the two-sided binomial p-value of that share under a random order must be below this."""
NUMBERED_SHARE = 0.8
"""Share of examples that must carry a number before their numbers are read as numbering."""
_NUMBER = re.compile(r"\d+")


@dataclass(frozen=True)
class OrderPattern:
    what: str
    """e.g. ``column 'difficulty'`` or ``the first number in each example``."""
    ascending: int
    descending: int

    @property
    def direction(self) -> str:
        return "rises" if self.ascending >= self.descending else "falls"

    def reason(self) -> str:
        pairs = self.ascending + self.descending
        return (
            f"{self.what} {self.direction} from one example to the next in "
            f"{max(self.ascending, self.descending)} of {pairs} neighbouring pairs within shards"
        )


def _sortable(value: Any) -> tuple[int, float | str] | None:
    """A value as something orderable: numbers numerically, text as text; None when missing."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return (0, float(value))
    text = str(value).strip()
    if not text:
        return None
    try:
        return (0, float(text))
    except ValueError:
        return (1, text.casefold())


def _pattern(what: str, values: Sequence[Any], bounds: Sequence[tuple[int, int]]) -> OrderPattern | None:
    keys = [_sortable(v) for v in values]
    up = down = 0
    for start, stop in bounds:
        for a, b in zip(keys[start : stop - 1], keys[start + 1 : stop], strict=True):
            if a is None or b is None or a == b or a[0] != b[0]:
                continue
            if a < b:
                up += 1
            else:
                down += 1
    pairs = up + down
    if pairs < MIN_PAIRS or max(up, down) < SORTED_SHARE * pairs:
        return None
    if stats.binomtest(max(up, down), pairs, 0.5).pvalue >= PATTERN_P:
        return None
    return OrderPattern(what, up, down)


def first_numbers(texts: Sequence[str]) -> list[int | None]:
    found = [_NUMBER.search(text) for text in texts]
    return [int(m.group()) if m else None for m in found]


def order_patterns(
    rows: Sequence[Mapping[str, Any]],
    texts: Sequence[str],
    bounds: Sequence[tuple[int, int]],
    template_fields: Sequence[str],
) -> list[OrderPattern]:
    """Every obvious pattern of the published order within shards.

    Checked: each column (a row-id column only when the template shows it: ids run in the file's order by
    construction and cannot be seen otherwise), the rendered examples as text (alphabetical order), and the
    first number in each example when most carry one (numbered questions).
    """
    found: list[OrderPattern] = []
    columns = list(dict.fromkeys(key for row in rows for key in row))
    for column in columns:
        if column in ROW_ID_COLUMNS and column not in template_fields:
            continue
        pattern = _pattern(f"column {column!r}", [row.get(column) for row in rows], bounds)
        if pattern is not None:
            found.append(pattern)
    text_pattern = _pattern("the examples' text (alphabetical order)", texts, bounds)
    if text_pattern is not None:
        found.append(text_pattern)
    numbers = first_numbers(texts)
    if sum(n is not None for n in numbers) >= NUMBERED_SHARE * len(texts):
        number_pattern = _pattern("the first number in each example", numbers, bounds)
        if number_pattern is not None:
            found.append(number_pattern)
    return found
