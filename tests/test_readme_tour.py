"""The README's tour says what each step reads with the bundled model; this holds it to what the steps give.

Every step's stated verdict is checked against the newest tour bench record of that step (``make tour`` runs each
README command cold on a fresh install and keeps its finding), which must have run the README's own command. The
quick steps (Inspect, overlap, order test) are also run here with the bundled model; the membership, loss delta,
MCQ (300 MMLU questions) and dataset inference steps take 50-150 s each on the 2-core machine, past a test's
budget, so for them the bench record is the evidence.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from core.cli import main
from core.config import PROJECT_ROOT

README = PROJECT_ROOT / "README.md"
RESULTS = PROJECT_ROOT / "bench" / "results"
STEP = re.compile(r"^\*\*(\d)\. [^*]+\*\*", re.MULTILINE)
STATED = re.compile(r"reads \*(strong|moderate|weak|no sign|cannot tell yet|not a fair test)\*")
LEVELS = {
    "strong": "strong",
    "moderate": "moderate",
    "weak": "weak",
    "no sign": "none",
    "cannot tell yet": "inconclusive",
    "not a fair test": "confounded",
}


def _tour_steps() -> dict[int, str]:
    """Each numbered tour step's text, from its bold heading to the next one."""
    text = README.read_text(encoding="utf-8")
    tour = text[text.index("## Five-minute tour") :]
    tour = tour[: tour.index("\n## ", 5)]
    marks = list(STEP.finditer(tour))
    return {int(m.group(1)): tour[m.start() : (marks[i + 1].start() if i + 1 < len(marks) else len(tour))]
            for i, m in enumerate(marks)}  # fmt: skip


def _commands(step: str) -> list[list[str]]:
    """The step's ``python -m core`` commands, as argument lists (line continuations joined)."""
    joined = step.replace("\\\n", " ")
    return [shlex.split(line.split(" -m core ", 1)[1]) for line in joined.splitlines() if " -m core " in line]


def _plain(command: str) -> str:
    """A command as the bench records it (arguments joined by spaces, unquoted), with what makes no difference to
    its finding left out: the bundled model is the default, and the bench rebuilds the overlap index warm."""
    for extra in (" --model smollm2-135m", " --overwrite"):
        command = command.replace(extra, "")
    return command


def _stated(step: str) -> str:
    found = STATED.findall(" ".join(step.split()))
    assert len(found) == 1, f"the step should state one verdict with the bundled model: {step[:120]!r}"
    return LEVELS[found[0]]


def _bench_record(name: str) -> dict:
    """The newest tour bench record of a step (by the bench's step name)."""
    for path in sorted(RESULTS.glob("tour-*.json"), reverse=True):
        for row in json.loads(path.read_text(encoding="utf-8"))["steps"]:
            if row["step"] == name:
                return row
    raise AssertionError(f"no tour bench record of step {name}: run `make tour`")


BENCH_STEPS = {1: "inspect", 2: "mia", 3: "delta", 4: "mcq", 5: "overlap", 6: "dataset-inference", 8: "order-test"}


@pytest.mark.parametrize(("number", "name"), sorted(BENCH_STEPS.items()))
def test_each_stated_verdict_is_what_the_tour_bench_measured_with_the_readme_command(number, name):
    step = _tour_steps()[number]
    record = _bench_record(name)
    ran = [_plain(c["command"].split(" -m core ", 1)[1]) for c in record["cold"]["commands"]]
    assert ran == [_plain(" ".join(argv)) for argv in _commands(step)], "rerun `make tour`"
    levels = [re.match(r"finding \((\w+)\)", c["finding"]).group(1) for c in record["cold"]["commands"] if c["finding"]]
    assert levels[-1:] == [_stated(step)], record["cold"]["commands"][-1]["finding"]
    assert float(record["cold"]["seconds"]) < 180  # every step within three minutes on a fresh install


@pytest.mark.slow
@pytest.mark.parametrize("number", [1, 5, 8])
def test_a_quick_step_gives_its_stated_verdict_with_the_bundled_model(number, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the overlap step writes its output folder where it runs
    step = _tour_steps()[number]
    store = ["--store", str(tmp_path / "results.sqlite")]
    levels = []
    for index, argv in enumerate(_commands(step)):
        if argv[:2] == ["overlap", "index"]:
            argv = [*argv, "--index-dir", str(tmp_path / "indexes")]
            assert main(argv) == 0
            continue
        out = tmp_path / f"out{index}.json"
        if argv[:2] == ["overlap", "search"]:  # no model, no results store
            assert main([*argv, "--index-dir", str(tmp_path / "indexes"), "--out", str(out)]) == 0
        else:
            assert main([*argv, *store, "--out", str(out)]) == 0
        levels.append(json.loads(out.read_text(encoding="utf-8"))["finding"]["level"])
    assert levels[-1] == _stated(step)
