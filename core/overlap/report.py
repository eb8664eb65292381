"""The contamination table (rows: eval sets, columns: training sets) and the per-instance files."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

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
    """(index, training set) -> report column name, named after the index the user built and searched.

    An index holding one training set is its column (``tulu-mix``); an index holding several gives one
    column per set, ``INDEX/DATASET`` (``tulu-mix/train_chat``). Every column name is unique, since index
    names are. The TSV, the per-pair files and the decontaminated files use the same names.
    """
    pairs = list(dict.fromkeys((m.index, m.train_dataset) for m in matches))
    indexes = [i for i, _ in pairs]
    return {(i, d): i if indexes.count(i) == 1 else f"{i}/{d}" for i, d in pairs}


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


def write_outputs(matches: Sequence[Match], output_dir: str | Path) -> tuple[ContaminationReport, list[Path]]:
    """Writes ``contamination_report.tsv`` and one ``<eval>__<train>.jsonl`` per pair; returns the paths."""
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    report = build_contamination_report(matches)
    columns = column_names(matches)
    files: dict[str, list[Match]] = {}
    for m in matches:
        name = f"{safe_name(m.eval_name)}__{safe_name(columns[(m.index, m.train_dataset)])}.jsonl"
        files.setdefault(name, []).append(m)
    written = []
    for filename, rows in files.items():
        path = out / filename
        with path.open("w", encoding="utf-8") as handle:
            for m in rows:
                handle.write(json.dumps(m.to_json(), ensure_ascii=False) + "\n")
        written.append(path)
    tsv = out / "contamination_report.tsv"
    tsv.write_text(report.to_tsv(), encoding="utf-8")
    return report, [tsv, *written]
