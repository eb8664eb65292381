"""What a dataset inference calls its two sets and itself: on screen, in the verdict and in every download."""

from __future__ import annotations

from core.data.demo import dataset_label, is_demo_source
from core.dataset_inference.run import DatasetInference

DEMO_SETS: dict[tuple[str, str], str] = {
    ("demo:famous-vs-fresh", "label=1"): "the famous passages (demo)",
    ("demo:famous-vs-fresh", "label=0"): "the freshly written passages (demo)",
}
"""What the shipped demo's two halves are called on screen and in the verdict: (source, row filter) -> name."""


def set_label(source: str, where: str, name: str, *, upload: bool = False) -> str:
    """What the verdict calls a set: the demo's halves by what they are, another demo by its title (with the row
    filter), else ``name``, the loader's name (file name or hub id, with the row filter). ``where`` is the row
    filter as typed (``label = 1``); an upload is named by its loader whatever its file is called."""
    wanted = "".join(where.split())
    known = DEMO_SETS.get((source, wanted))
    if known:
        return known
    if not upload and is_demo_source(source):
        return dataset_label(source) + (f" ({wanted})" if wanted else "")
    return name


def data_label(inference: DatasetInference) -> str:
    """The two sets compared: "SUSPECT vs VALIDATION"."""
    return f"{inference.suspect} vs {inference.validation}"


def heading(inference: DatasetInference) -> str:
    """The result's title, "SUSPECT vs VALIDATION · MODEL", with a leading "the " capitalised (never a file
    name's case: only the demo's own names start with "the ")."""
    title = f"{data_label(inference)} · {inference.model}"
    return "The" + title[3:] if title.startswith("the ") else title
