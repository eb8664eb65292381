"""One overlap search end to end: search the indexes, write the report files, optionally decontaminate.

The page and the command run the same sequence, so it lives here once; the outcome also knows which
matches are worth showing first, so every surface lists them in the same order.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from core.config import cache_subdir
from core.data.tables import SkippedRow
from core.engine.progress import ProgressCallback
from core.files.outputs import OutputPlan
from core.overlap.backends.base import IndexInfo, OverlapBackend
from core.overlap.decontaminate import CleanedSet, decontaminate
from core.overlap.matching import Match, SearchSettings, search
from core.overlap.report import REPORT_FILE, ContaminationReport, OutputNames, pair_columns, write_outputs
from core.overlap.sources import EvalSet, TrainingSource, distinct_names, source_file


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
    drop_malformed: bool = False,
    progress: ProgressCallback | None = None,
    plan: OutputPlan | None = None,
) -> SearchOutcome:
    """Search ``indexes`` with every instance of ``test_sets`` and write the results to ``output_dir``;
    with ``clean``, also write each training set without the rows that matched (and, with
    ``drop_malformed``, without its unreadable lines).

    Every file it will write is named and checked before the search starts (``plan`` holds the command's
    other inputs and outputs): none may be a test set, a recorded training source or another output.
    Test sets that share a name are told apart by their folders, so each keeps its own rows and files."""
    test_sets = distinct_test_sets(test_sets)
    plan = plan or OutputPlan()
    infos = [backend.searchable_info(name) for name in indexes]
    columns = pair_columns([(info.name, name) for info in infos for name in _set_names(info)])
    names = OutputNames.plan([t.name for t in test_sets], list(columns.values()))
    out = plan.claim_folder(output_dir, "output folder")
    plan.add_inputs((f"test set {t.name}", t.source) for t in test_sets if Path(t.source).is_file())
    for info in infos:
        plan.add_inputs(
            (f"training source of index {info.name}", source_file(TrainingSource.from_dict(spec)))
            for spec in info.sources
        )
    plan.claim(out / REPORT_FILE, "contamination report")
    for (eval_name, column), filename in names.pairs.items():
        plan.claim(out / filename, f"result file of {eval_name} in {column}")
    if clean:
        for column, filename in names.cleaned.items():
            plan.claim(out / filename, f"decontaminated copy of {column}")
    matches = search(backend, list(indexes), list(test_sets), settings, progress=progress)
    report, paths = write_outputs(matches, output_dir, names)
    cleaned = []
    if clean:
        cleaned = decontaminate(
            backend, matches, test_sets, settings, output_dir, drop_malformed=drop_malformed, names=names
        )
    skipped = [row for test_set in test_sets for row in test_set.skipped]
    return SearchOutcome(matches, report, list(paths), cleaned, skipped)


def distinct_test_sets(test_sets: Sequence[EvalSet]) -> list[EvalSet]:
    """The test sets with distinct names (``a/test.jsonl`` and ``b/test.jsonl`` become ``a__test`` and
    ``b__test``), so two files are never merged into one row of the report."""
    names = distinct_names([t.source for t in test_sets], [t.name for t in test_sets])
    return [t if t.name == name else replace(t, name=name) for t, name in zip(test_sets, names)]


def _set_names(info: IndexInfo) -> list[str]:
    """The training sets an index holds, in indexing order."""
    return [str(spec["name"]) for spec in info.sources if spec.get("name")] or list(info.datasets)


RESULTS_BUDGET = 2 * 2**30
"""Bytes of page results (reports and decontaminated copies) kept under the cache before old ones go."""
RESULTS_KEPT = 5
"""The newest result folders are never deleted: a page that still shows one may offer its files."""


def results_dir(max_bytes: int = RESULTS_BUDGET, keep: int = RESULTS_KEPT, root: Path | None = None) -> Path:
    """A new folder for one search's files under ``<cache>/overlap-results`` (a page has no output folder).

    Older folders are deleted, oldest first, until those left fit in ``max_bytes`` (the ``keep`` newest
    always stay): decontaminated copies of whole training sets would otherwise fill the disk."""
    root = root or cache_subdir("overlap-results")
    folders = sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True)
    total = 0
    for rank, folder in enumerate(folders):
        total += sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
        if rank >= keep and total > max_bytes:
            shutil.rmtree(folder, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix="search-", dir=root))


def match_location(match: Match) -> str:
    """Where the best training document sits: 'train_plain row 12' or '... row 3 turn 1'."""
    doc = match.best
    if doc is None:
        return match.train_dataset
    return f"{match.train_dataset} row {doc.row}" + ("" if doc.turn is None else f" turn {doc.turn}")
