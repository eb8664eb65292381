"""The contamination table (rows: eval sets, columns: training sets) and the per-instance files."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from core.files.outputs import write_atomic
from core.overlap.matching import Match


@dataclass(frozen=True)
class ContaminationReport:
    evals: list[str]
    trains: list[str]
    """Column names, after the indexes: the index name when the index holds one training set, else
    ``INDEX/DATASET`` (see ``column_names``)."""
    scores: dict[tuple[str, str], float]
    """(eval, train) -> mean instance score."""
    matched: dict[tuple[str, str], int]
    """(eval, train) -> instances with a non-zero score."""
    counts: dict[str, int]
    """eval -> number of instances."""

    def table(self) -> list[list[str]]:
        header = ["eval_dataset", *self.trains]
        rows = [header]
        for e in self.evals:
            rows.append([e, *(f"{self.scores[(e, t)]:.4f}" for t in self.trains)])
        return rows

    def to_tsv(self) -> str:
        return "".join("\t".join(row) + "\n" for row in self.table())

    def format(self) -> str:
        rows = self.table()
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def column_names(matches: Sequence[Match]) -> dict[tuple[str, str], str]:
    """(index, training set) -> report column name, for the pairs ``matches`` cover (see ``pair_columns``)."""
    return pair_columns(list(dict.fromkeys((m.index, m.train_dataset) for m in matches)))


def pair_columns(pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """(index, training set) -> report column name, named after the index the user built and searched.

    An index holding one training set is its column (``tulu-mix``); an index holding several gives one
    column per set, ``INDEX/DATASET`` (``tulu-mix/train_chat``). Every column name is unique, since index
    names are. The TSV, the per-pair files and the decontaminated files use the same names.
    """
    indexes = [i for i, _ in pairs]
    return {(i, d): i if indexes.count(i) == 1 else f"{i}/{d}" for i, d in pairs}


REPORT_FILE = "contamination_report.tsv"


@dataclass(frozen=True)
class OutputNames:
    """The file name of every output of one search, fixed before it runs: distinct, and stable for the same
    test sets and columns (names that collide once made file-safe get ``-2``, ``-3`` in order)."""

    pairs: dict[tuple[str, str], str]
    """(test set, column) -> its per-instance JSONL file."""
    cleaned: dict[str, str]
    """column -> its decontaminated training file."""

    @classmethod
    def plan(cls, evals: Sequence[str], columns: Sequence[str]) -> OutputNames:
        taken = {REPORT_FILE.lower()}
        pairs = {(e, c): _distinct(f"{safe_name(e)}__{safe_name(c)}", ".jsonl", taken) for e in evals for c in columns}
        cleaned = {c: _distinct(safe_name(c), ".decontaminated.jsonl", taken) for c in columns}
        return cls(pairs, cleaned)


def _distinct(stem: str, suffix: str, taken: set[str]) -> str:
    """``stem + suffix``, or with ``-N`` before the suffix while that name is taken (compared without case,
    since some file systems ignore it)."""
    name, n = stem + suffix, 1
    while name.lower() in taken:
        n += 1
        name = f"{stem}-{n}{suffix}"
    taken.add(name.lower())
    return name


def build_contamination_report(matches: Sequence[Match]) -> ContaminationReport:
    columns = column_names(matches)
    evals = list(dict.fromkeys(m.eval_name for m in matches))
    trains = list(columns.values())
    sums: dict[tuple[str, str], float] = {}
    hits: dict[tuple[str, str], int] = {}
    n: dict[tuple[str, str], int] = {}
    for m in matches:
        key = (m.eval_name, columns[(m.index, m.train_dataset)])
        sums[key] = sums.get(key, 0.0) + m.score
        hits[key] = hits.get(key, 0) + (m.score > 0)
        n[key] = n.get(key, 0) + 1
    scores = {k: sums[k] / n[k] for k in sums}
    counts = {e: max(n[(e, t)] for t in trains if (e, t) in n) for e in evals}
    return ContaminationReport(evals, trains, scores, hits, counts)


def safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "dataset"


def write_outputs(
    matches: Sequence[Match], output_dir: str | Path, names: OutputNames | None = None
) -> tuple[ContaminationReport, list[Path]]:
    """Writes ``contamination_report.tsv`` and one ``<eval>__<train>.jsonl`` per pair, each atomically;
    returns the paths written. ``names`` comes from the search's plan (else it is made from ``matches``)."""
    out = Path(output_dir)
    report = build_contamination_report(matches)
    columns = column_names(matches)
    names = names or OutputNames.plan(report.evals, report.trains)
    files: dict[str, list[Match]] = {}
    for m in matches:
        files.setdefault(names.pairs[(m.eval_name, columns[(m.index, m.train_dataset)])], []).append(m)
    write_atomic(out / REPORT_FILE, report.to_tsv())
    for filename, rows in files.items():
        write_atomic(out / filename, "".join(json.dumps(m.to_json(), ensure_ascii=False) + "\n" for m in rows))
    return report, [out / REPORT_FILE, *(out / filename for filename in files)]
