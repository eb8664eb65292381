"""Demo data shipped with LeakLens (``assets/demo/``), usable offline as ``demo:NAME`` anywhere a dataset goes.

Every page offers these as ready examples and every command accepts ``--dataset demo:NAME``, so a fresh
clone can show each test working with nothing beside it. ``assets/demo/README.md`` states how each
file was made and its licence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from core.config import ASSETS_DIR
from core.errors import DataError

DEMO_PREFIX = "demo:"
DEMO_DIR = ASSETS_DIR / "demo"


@dataclass(frozen=True)
class ClassNames:
    """What a labelled set's two classes are called in a verdict, in the data's own words."""

    members: str
    """Label 1, e.g. "the famous passages"."""
    non_members: str
    """Label 0, e.g. "the freshly written passages"."""


UNNAMED_CLASSES = ClassNames("the texts labelled as seen (label 1)", "the texts labelled unseen (label 0)")
"""A user's file names no classes: the verdict says what the labels claim, in plain words."""


@dataclass(frozen=True)
class DemoDataset:
    """One shipped dataset and the test it demonstrates."""

    name: str
    """Used as ``demo:NAME``."""
    task: str
    """``membership``, ``mcq``, ``overlap-train`` or ``overlap-test``."""
    filename: str
    title: str
    description: str
    classes: ClassNames | None = None
    """The two classes of a labelled (membership) demo."""

    @property
    def path(self) -> Path:
        return DEMO_DIR / self.filename

    @property
    def source(self) -> str:
        return DEMO_PREFIX + self.name


DEMO_DATASETS: tuple[DemoDataset, ...] = (
    DemoDataset(
        "famous-vs-fresh",
        "membership",
        "famous_vs_fresh.jsonl",
        "Famous vs fresh passages (demo)",
        "Public-domain passages every web-trained model has read (label 1) against paragraphs freshly written "
        "for LeakLens on the same topics (label 0).",
        ClassNames("the famous passages", "the freshly written passages"),
    ),
    DemoDataset(
        "mcq",
        "mcq",
        "mcq_sample.jsonl",
        "General-knowledge questions (demo)",
        "Multiple-choice questions written for LeakLens (question, A-D, answer).",
    ),
    DemoDataset(
        "mmlu",
        "mcq",
        "mmlu_slice.jsonl",
        "MMLU questions (demo)",
        "300 questions of MMLU's test split, the widely used benchmark (MIT licence): has the model seen MMLU? "
        "(question, A-D, answer)",
    ),
    DemoDataset(
        "overlap-train",
        "overlap-train",
        "overlap_train.jsonl",
        "Small training corpus (demo)",
        "Documents written for LeakLens, standing in for a training set (id, text).",
    ),
    DemoDataset(
        "overlap-test",
        "overlap-test",
        "overlap_test.jsonl",
        "Test set with planted copies (demo)",
        "Test items written for LeakLens: some copied verbatim from the demo training corpus, some nearly, "
        "the rest fresh (id, text).",
    ),
)


def demo_datasets(task: str | None = None) -> list[DemoDataset]:
    """The shipped datasets, optionally only those of one task."""
    return [d for d in DEMO_DATASETS if task is None or d.task == task]


def is_demo_source(source: str) -> bool:
    return source.strip().lower().startswith(DEMO_PREFIX)


def _demo_named(source: str) -> DemoDataset | None:
    """The shipped dataset ``demo:NAME`` names (None for any other source or an unknown name)."""
    if not is_demo_source(source):
        return None
    name = source.strip()[len(DEMO_PREFIX) :].strip().lower()
    return next((d for d in DEMO_DATASETS if d.name == name), None)


def demo_path(source: str) -> Path:
    """The file behind ``demo:NAME``; a clear error naming the choices for an unknown name."""
    demo = _demo_named(source)
    if demo is None:
        choices = ", ".join(d.source for d in DEMO_DATASETS)
        raise DataError(f"Unknown demo dataset '{source.strip()}'; choose one of {choices}.")
    if not demo.path.exists():
        raise DataError(f"The demo file {demo.path} is missing from this checkout; restore assets/demo/.")
    return demo.path


def class_names(name: str) -> ClassNames:
    """The verdict's words for a labelled set's classes: a demo's own, else what the labels claim."""
    demo = _demo_named(name)
    return demo.classes if demo is not None and demo.classes is not None else UNNAMED_CLASSES


def demo_sample_note(name: str, level: str, unit: str) -> str | None:
    """For a verdict that cannot tell yet on a shipped demo: one plain sentence saying the demo is a small sample
    that shows how the test works, and what a real run needs. None for any other data or level."""
    demo = _demo_named(name) if level == "inconclusive" else None
    if demo is None or not demo.path.exists():
        return None
    rows = sum(1 for line in demo.path.read_text(encoding="utf-8").splitlines() if line.strip())
    return (
        f"This demo is a small sample ({rows} {unit}) that shows how the test works; with so few it usually "
        f"cannot tell yet. A real benchmark of a few hundred {unit} can settle it."
    )


def dataset_label(name: str) -> str:
    """What people call a data set on screen and in reports: a shipped demo's title, else ``name`` itself."""
    if is_demo_source(name):
        wanted = name.strip().removeprefix(DEMO_PREFIX)
        return next((d.title for d in DEMO_DATASETS if d.name == wanted), name)
    return name


_WHERE = re.compile(r"^(?P<name>.+?) \((?P<where>[^()]+)\)$")


def name_label(name: str) -> str:
    """A stored data name as people call it: a demo's title, with any row filter kept ("... (label=1)")."""
    match = _WHERE.match(name.strip())
    if match and dataset_label(match["name"]) != match["name"]:
        return f"{dataset_label(match['name'])} ({match['where']})"
    return dataset_label(name)


def pair_label(first: str, second: str) -> str:
    """Two sets compared: "A vs B", or "A: x vs y" when both are rows of the same data."""
    a, b = _WHERE.match(first.strip()), _WHERE.match(second.strip())
    if a and b and a["name"] == b["name"]:
        return f"{dataset_label(a['name'])}: {a['where']} vs {b['where']}"
    return f"{name_label(first)} vs {name_label(second)}"
