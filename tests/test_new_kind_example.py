"""The worked example of a new kind of test (docs/contributing.md, "Adding a kind of test"), replayed.

The section's code blocks are written into a copy of the repository exactly as the section says (each block to
the file its first line names, the registration blocks where they say), so the docs cannot drift from what a new
test takes. The copy then shows that (a) only the files and registration points the section names changed, in
the number it states, (b) a run stored by the new command is listed and opened on the Results page, and (c)
``python -m core report RUN_ID --out x.html`` renders it; its page runs, and its imports point down the layers.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "contributing.md"
SECTION = "## Adding a kind of test"
COPIED = ("core", "ui", "pages", "app.py", ".streamlit", "tests/test_architecture.py")
"""What the copy holds of the repository (assets are linked, not copied: the example changes none)."""
WHERE = re.compile(r"^# (?P<path>\S+?)(?:, (?P<place>with its imports|in (?P<name>\w+)))?$")

SCRIPT = r"""
import importlib.util
import json
import sys

from streamlit.testing.v1 import AppTest

from core.cli import main
from core.store.results import ResultStore
from ui.home import PAGES

store, out = sys.argv[1], sys.argv[2]
facts = {}
texts = ["the cat saw the cat and the dog", "every word here is new"]
facts["run_code"] = main(["repeats", "--store", store, "--name", "two notes", *texts])
facts["runs"] = [run.run_id for run in ResultStore(store).list_runs("repeats")]

results = AppTest.from_file("pages/7_Results.py", default_timeout=180)
results.run()
facts["results_exceptions"] = [e.value for e in results.exception]
facts["cards"] = [m.value for m in results.markdown if 'class="leaklens-card"' in m.value]
facts["banners"] = [m.value for m in results.markdown if 'class="leaklens-finding"' in m.value]
facts["charts"] = [chart.proto.id for chart in results.get("plotly_chart")]
facts["downloads"] = [button.proto.label for button in results.get("download_button")]
facts["expanders"] = [expander.label for expander in results.expander]
facts["captions"] = [caption.value for caption in results.caption]

facts["report_code"] = main(["report", facts["runs"][0][:10], "--out", out, "--store", store])
facts["home_cards"] = [(card.path, card.title) for card in PAGES]

page = AppTest.from_file("pages/9_Repeated_words.py", default_timeout=180)
page.run()
page.text_area(key="repeats_texts").input("a a a b\nc d e f").run()
page.button(key="repeats_run").click().run()
facts["page_exceptions"] = [e.value for e in page.exception]
facts["page_titles"] = [title.value for title in page.title]
facts["page_banners"] = [m.value for m in page.markdown if 'class="leaklens-finding"' in m.value]

spec = importlib.util.spec_from_file_location("architecture", "tests/test_architecture.py")
architecture = importlib.util.module_from_spec(spec)
spec.loader.exec_module(architecture)
facts["layer_violations"] = architecture.layer_violations(architecture._whole_graph())
facts["cycle"] = architecture.find_cycle(architecture.import_graph())
print("FACTS " + json.dumps(facts))
"""


def example_blocks() -> list[tuple[str, str | None, str]]:
    """(path, where in it (None: a new file), code) of each Python block of the section, in order."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    section = section[: section.index("\n## ", len(SECTION))]
    found = []
    for block in re.findall(r"^```python\n(.*?)^```", section, flags=re.MULTILINE | re.DOTALL):
        first, rest = block.split("\n", 1)
        match = WHERE.match(first)
        assert match, f"a block of the example must open with '# PATH' or '# PATH, in NAME': {first!r}"
        place = match["name"] or ("imports" if match["place"] else None)
        found.append((match["path"], place, block if place is None else rest))
    return found


def _insert(text: str, place: str, code: str) -> str:
    """``code`` added to a module: after its last top-level core import, or before the end of ``place``'s literal."""
    lines = text.splitlines(keepends=True)
    if place == "imports":
        at = max(i for i, line in enumerate(lines) if line.startswith(("from core.", "import core."))) + 1
    else:
        start = next(i for i, line in enumerate(lines) if re.match(rf"{place}\b.*= [(\[]$", line.rstrip()))
        at = next(i for i in range(start + 1, len(lines)) if lines[i].rstrip() in (")", "]"))
    return "".join(lines[:at]) + code + "".join(lines[at:])


def replay(root: Path) -> None:
    """The repository's code copied to ``root`` and the example applied to it as the section says."""
    for name in COPIED:
        source, target = REPO / name, root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target)
    (root / "assets").symlink_to(REPO / "assets")
    for path, place, code in example_blocks():
        target = root / path
        if place is None:
            assert not target.exists(), f"{path} is already a file of the repository"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(code, encoding="utf-8")
        else:
            target.write_text(_insert(target.read_text(encoding="utf-8"), place, code), encoding="utf-8")


def _files(root: Path) -> dict[str, Path]:
    return {
        path.relative_to(root).as_posix(): path
        for name in COPIED
        for path in ([root / name] if (root / name).is_file() else (root / name).rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("new-kind") / "repo"
    replay(root)
    return root


@pytest.fixture(scope="module")
def facts(example, tmp_path_factory) -> dict:
    """What the copy's command, Results page, report command, Home cards, page and layer check give."""
    work = tmp_path_factory.mktemp("new-kind-run")
    env = {
        **os.environ,
        "PYTHONPATH": str(example),
        "LEAKLENS_STORE": str(work / "results.sqlite"),
        "LEAKLENS_DEFAULT_MODEL": "tiny-random",
    }
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(work / "results.sqlite"), str(work / "report.html")],
        cwd=example,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("FACTS "))
    return {**json.loads(line.removeprefix("FACTS ")), "report": (work / "report.html").read_text(encoding="utf-8")}


def test_the_example_touches_exactly_the_files_and_registration_points_the_docs_name(example):
    blocks = example_blocks()
    before, after = _files(REPO), _files(example)
    new = sorted(set(after) - set(before))
    changed = sorted(p for p in set(after) & set(before) if after[p].read_bytes() != before[p].read_bytes())
    assert new == sorted(path for path, place, _ in blocks if place is None)
    assert changed == ["core/cli/__init__.py", "core/results/kinds.py"]
    assert set(after) >= set(before)  # nothing removed
    for path in changed:
        old, now = before[path].read_text().splitlines(), after[path].read_text().splitlines()
        edits = difflib.SequenceMatcher(None, old, now, autojunk=False).get_opcodes()
        assert {tag for tag, *_ in edits} == {"equal", "insert"}, f"{path}: lines changed, not only added"
        added = [line for tag, _, _, start, end in edits if tag == "insert" for line in now[start:end]]
        given = [line for p, place, code in blocks if p == path and place for line in code.splitlines()]
        assert added == given, path
    registrations = [(path, place) for path, place, _ in blocks if place not in (None, "imports")]
    assert registrations == [("core/results/kinds.py", "KINDS"), ("core/cli/__init__.py", "COMMAND_MODULES")]
    assert len(new) == 6
    section = DOC.read_text(encoding="utf-8").split(SECTION, 1)[1]
    assert f"**{len(new)} new files and {len(registrations)} registration points**" in section


def test_a_stored_run_of_the_new_kind_is_listed_and_opened_on_the_results_page(facts):
    assert facts["run_code"] == 0
    assert len(facts["runs"]) == 1
    assert facts["results_exceptions"] == []
    (card,) = facts["cards"]
    assert "Repeated words" in card
    assert "two notes" in card
    (banner,) = facts["banners"]
    assert "words repeat earlier ones" in banner
    assert any("results_repeats_figure" in chart for chart in facts["charts"])
    assert facts["downloads"][:2] == ["Report of this run (HTML)", "Repeated words per text (CSV)"]
    assert "Tables and further charts" in facts["expanders"]  # its ui module's results_more
    assert "Repeated words · 2 texts" in facts["captions"]


def test_the_report_command_renders_the_new_kind(facts):
    assert facts["report_code"] == 0
    html = facts["report"]
    assert "<h1>LeakLens repeated-words report</h1>" in html
    assert "Repeated words · two notes" in html
    body = html[html.index("<body>") :]
    assert body.index('class="leaklens-finding"') < body.index('class="plotly-graph-div"')
    assert body.count("<tr>") == 1 + 2  # the table: a header and one row per text


def test_the_new_kind_gets_its_home_card_and_a_working_page(facts):
    assert ["pages/9_Repeated_words.py", "Repeated words"] in facts["home_cards"]
    assert facts["home_cards"][-1] == ["pages/7_Results.py", "Results"]
    assert facts["page_exceptions"] == []
    assert facts["page_titles"] == ["Repeated words"]
    assert len(facts["page_banners"]) == 1


def test_the_new_package_fits_the_layers_without_a_line_in_layers(facts):
    assert facts["layer_violations"] == []
    assert facts["cycle"] is None
