"""``python -m core mia``: the printed AUROC table, the --out JSON, reuse of a stored run, and errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

from core.cli import main
from core.store import FINISHED, ResultStore

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def test_mia_prints_table_writes_json_and_reuses_store(tmp_path, capsys, tiny_lm):
    store_path = tmp_path / "results.sqlite"
    out = tmp_path / "out" / "results.json"
    args = ["mia", "--dataset", str(DATA / "booktection_sample.csv"), "--model", "tiny-random", "--limit", "12",
            "--methods", "loss", "zlib", "--store", str(store_path), "--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "text column 'Example_A', label column 'Label'" in printed  # DE-COP format detected
    assert "12 texts scored" in printed
    row_start = re.compile(r"^(loss|zlib|blind_baseline|ensemble) ")
    table = {line.split()[0]: line for line in printed.splitlines() if row_start.match(line)}
    assert set(table) == {"loss", "zlib", "blind_baseline", "ensemble"}

    doc = json.loads(out.read_text())
    assert doc["dataset"] == "booktection_sample.csv" and doc["model"] == "tiny-random" and doc["n"] == 12
    assert sorted(s["label"] for s in doc["samples"]).count(1) == 6
    for name in ("loss", "zlib"):
        entry = doc["methods"][name]
        # the printed row carries the same numbers, rounded to three decimals
        assert f"{entry['auroc']:.3f}" in table[name]
        assert f"[{entry['ci'][0]:.3f}, {entry['ci'][1]:.3f}]" in table[name]
    assert f"{doc['blind_baseline']['auroc']:.3f}" in table["blind_baseline"]

    (run,) = ResultStore(store_path).list_runs("mia")
    assert run.status == FINISHED and run.n_done == 12 and run.dataset == "booktection_sample.csv"

    out.unlink()
    assert main(args) == 0
    again = capsys.readouterr().out
    assert "from the store" in again and "texts scored" not in again
    assert json.loads(out.read_text()) == doc


def test_mia_errors_are_clear(tmp_path, capsys):
    store = str(tmp_path / "results.sqlite")
    assert main(["mia", "--dataset", str(tmp_path / "missing.csv"), "--model", "tiny-random", "--store", store]) == 2
    assert "error:" in capsys.readouterr().err
    assert main(["mia", "--dataset", str(DATA / "booktection_sample.csv"), "--model", "tiny-random",
                 "--limit", "1", "--store", store]) == 2
    assert "--limit must be at least 2" in capsys.readouterr().err
    bad = tmp_path / "bad.csv"
    bad.write_text("text,label\nhello there,1\ngeneral kenobi,2\n")
    assert main(["mia", "--dataset", str(bad), "--model", "tiny-random", "--store", store]) == 2
    assert "error:" in capsys.readouterr().err
