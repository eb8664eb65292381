"""The one dataset picker of every page: a ready example, an uploaded file, a local path or a hub dataset id.

Pages differ only in their ready examples and in how they load the choice, so the widget returns a
small ``DatasetChoice`` and leaves loading to ``core``, whose loaders share one shape (``load_choice``).
Each page lists its shipped demo data (``demo:NAME``) among the ready examples, so a fresh clone has
something that runs offline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import streamlit as st

from core.data.demo import demo_datasets, is_demo_source
from core.data.tables import display_name, is_local_source

READY, UPLOAD, PATH, HUB = "Ready example", "Upload a file", "Local path", "Hub dataset id"
UPLOAD_TYPES = ["csv", "tsv", "jsonl", "json", "parquet"]

T = TypeVar("T")


@dataclass(frozen=True)
class ReadyExample:
    """A dataset a page offers by name."""

    label: str
    source: str
    """``demo:NAME``, a local path, a hub id, or a name the page's loader knows (e.g. ``humaneval``)."""
    split: str | None = None
    config: str | None = None
    description: str = ""


@dataclass(frozen=True)
class DatasetChoice:
    """What the user picked, ready for a ``core`` loader."""

    source: str
    """``demo:NAME``, a path, a hub id or a loader's own name; for an upload, the uploaded file's name."""
    split: str | None = None
    config: str | None = None
    data: bytes | None = None
    """The uploaded file's bytes; None unless the user uploaded a file."""

    @property
    def is_upload(self) -> bool:
        return self.data is not None

    @property
    def is_hub(self) -> bool:
        """True for a hub dataset id: fetched only when a run starts, never on every rerun."""
        return not self.is_upload and not is_demo_source(self.source) and not is_local_source(self.source)

    @property
    def brief(self) -> str:
        """How a result names the data it was computed on: a file by its name (never its full path), an upload
        as such, a hub id as it is."""
        if self.is_upload:
            return f"upload {self.source}"
        extras = [f"{name} {value}" for name, value in (("split", self.split), ("config", self.config)) if value]
        return display_name(self.source) + (f" ({', '.join(extras)})" if extras else "")

    @property
    def sources(self) -> list[str]:
        """The comma-separated sources typed into a picker that takes several (``several=True``)."""
        return [s.strip() for s in self.source.split(",") if s.strip()]


def load_choice(loader: Callable[..., T], choice: DatasetChoice, **options: Any) -> T:
    """``loader(choice.source, data=choice.data, split=choice.split, config=choice.config, **options)``.

    Every ``core`` loader of a picked dataset has this one shape (``load_labelled_dataset``, ``load_problem_set``,
    ``load_mcq``, ``load_text_set``): a demo, a file, a hub id or an upload (``data``, with ``source`` its file
    name), then the loader's own columns and limit in ``options``.
    """
    return loader(choice.source, data=choice.data, split=choice.split, config=choice.config, **options)


def demo_examples(task: str) -> list[ReadyExample]:
    """The shipped demo datasets of one task (``membership``, ``mcq``, ``overlap-train``, ``overlap-test``)."""
    return [ReadyExample(d.title, d.source, description=d.description) for d in demo_datasets(task)]


def known_examples(known: Mapping[str, tuple[str, str | None, str | None, str]]) -> list[ReadyExample]:
    """Ready examples from a ``{label: (source, split, config, description)}`` table (e.g. ``KNOWN_DATASETS``)."""
    return [
        ReadyExample(label, source, split, config, description)
        for label, (source, split, config, description) in known.items()
    ]


def file_examples(files: Mapping[str, Path]) -> list[ReadyExample]:
    """Ready examples for local sample files, keeping only those present in this checkout."""
    return [ReadyExample(label, str(path)) for label, path in files.items() if path.exists()]


def unique_examples(*groups: Iterable[ReadyExample]) -> list[ReadyExample]:
    """The groups in order, each source once (a demo may already be in a page's own table)."""
    seen: set[str] = set()
    found = []
    for example in (e for group in groups for e in group):
        if example.source not in seen:
            seen.add(example.source)
            found.append(example)
    return found


def default_example(examples: Sequence[ReadyExample], preferred: str | None = None) -> int:
    """Index of the example chosen first: the page's ``preferred`` source when listed, else a local sample file
    when one is present, else the shipped demo.

    A page whose README tour step names its example passes it as ``preferred``, so the page and the README's
    command ask the same question in any checkout. Otherwise a real benchmark beside the checkout stays the
    default where a page had one; a fresh clone without it starts on the demo, which runs offline. Otherwise
    the first example.
    """
    if preferred is not None:
        index = next((i for i, e in enumerate(examples) if e.source == preferred), None)
        if index is not None:
            return index
    for wanted in (
        lambda e: not is_demo_source(e.source) and Path(e.source).is_file(),
        lambda e: is_demo_source(e.source),
    ):
        index = next((i for i, e in enumerate(examples) if wanted(e)), None)
        if index is not None:
            return index
    return 0


def dataset_picker(
    label: str,
    examples: Sequence[ReadyExample],
    *,
    key: str,
    several: bool = False,
    path_placeholder: str = "/data/my_dataset.jsonl",
    hub_placeholder: str = "owner/name",
    split_placeholder: str = "",
    preferred: str | None = None,
) -> DatasetChoice | None:
    """Draw the picker; the choice, or None while nothing usable is chosen (no upload, empty path).

    Widget keys are ``{key}_source`` (the kind), ``{key}_example``, ``{key}_upload``, ``{key}_path``,
    ``{key}_hub_id``, ``{key}_hub_split`` and ``{key}_hub_config``. With ``several`` the path and hub
    fields take comma-separated lists (``DatasetChoice.sources``). ``preferred`` is the ready example chosen
    first (``default_example``).
    """
    kinds = ([READY] if examples else []) + [UPLOAD, PATH, HUB]
    kind = st.radio(label, kinds, horizontal=True, key=f"{key}_source")
    plural = " (comma-separated)" if several else ""
    if kind == READY:
        labels = [e.label for e in examples]
        picked = st.selectbox(
            f"{label}: ready example", labels, index=default_example(examples, preferred), key=f"{key}_example"
        )
        example = examples[labels.index(picked)]
        if example.description:
            st.caption(example.description)
        return DatasetChoice(example.source, example.split, example.config)
    if kind == UPLOAD:
        upload = st.file_uploader(
            f"{label}: CSV, TSV, JSONL, JSON or Parquet file", type=UPLOAD_TYPES, key=f"{key}_upload"
        )
        return None if upload is None else DatasetChoice(upload.name, data=upload.getvalue())
    if kind == PATH:
        path = st.text_input(f"{label}: file path{plural}", placeholder=path_placeholder, key=f"{key}_path")
        return DatasetChoice(path.strip()) if path.strip() else None
    cols = st.columns(3)
    hub_id = cols[0].text_input(f"{label}: hub dataset id{plural}", placeholder=hub_placeholder, key=f"{key}_hub_id")
    split = cols[1].text_input("Split", placeholder=split_placeholder, key=f"{key}_hub_split")
    config = cols[2].text_input("Config (optional)", key=f"{key}_hub_config")
    if not hub_id.strip():
        return None
    return DatasetChoice(hub_id.strip(), split.strip() or None, config.strip() or None)
