"""One overlap search end to end: search the indexes, write the report files, optionally decontaminate.

The page and the command run the same sequence, so it lives here once; the outcome also knows which
matches are worth showing first, so every surface lists them in the same order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from core.data.tables import SkippedRow
from core.engine.progress import ProgressCallback
from core.overlap.backends.base import OverlapBackend
from core.overlap.decontaminate import CleanedSet, decontaminate
from core.overlap.matching import Match, SearchSettings, search
from core.overlap.report import ContaminationReport, write_outputs
from core.overlap.sources import EvalSet


@dataclass(frozen=True)
class SearchOutcome:
    """Everything one search produced."""

    matches: list[Match]
    """One per (test instance, training set)."""
    report: ContaminationReport
    paths: list[Path]
    """The per-instance JSONL files and the contamination report written to the output folder."""
    cleaned: list[CleanedSet]
    """Decontaminated training files; empty unless asked for."""
    skipped: list[SkippedRow]
    """Test rows left out (no text, unreadable lines), over every test set."""

    @property
    def n_matching(self) -> int:
        """(instance, training set) pairs with any overlap at all."""
        return sum(m.value > 0 for m in self.matches)

    def best(self, limit: int) -> list[Match]:
        """The ``limit`` pairs with the most overlap, best first; ties in a fixed (eval set, id) order."""
        ranked = sorted(self.matches, key=lambda m: (-m.value, m.eval_name, m.test_id))
        return [m for m in ranked if m.value > 0][:limit]


def run_search(
    backend: OverlapBackend,
    indexes: Sequence[str],
    test_sets: Sequence[EvalSet],
    settings: SearchSettings,
    output_dir: str | Path,
    *,
    clean: bool = False,
    progress: ProgressCallback | None = None,
) -> SearchOutcome:
    """Search ``indexes`` with every instance of ``test_sets`` and write the results to ``output_dir``;
    with ``clean``, also write each training set without the rows that matched."""
    matches = search(backend, list(indexes), list(test_sets), settings, progress=progress)
    report, paths = write_outputs(matches, output_dir)
    cleaned = decontaminate(backend, matches, test_sets, settings, output_dir) if clean else []
    skipped = [row for test_set in test_sets for row in test_set.skipped]
    return SearchOutcome(matches, report, list(paths), cleaned, skipped)


def match_location(match: Match) -> str:
    """Where the best training document sits: 'train_plain row 12' or '... row 3 turn 1'."""
    doc = match.best
    if doc is None:
        return match.train_dataset
    return f"{match.train_dataset} row {doc.row}" + ("" if doc.turn is None else f" turn {doc.turn}")
