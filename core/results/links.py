"""Which stored run a shared link opens: ``?present=1&run=RUN_ID`` names one, a plain ``?present=1`` opens the
page's most recent finished run. Decided here from the store's runs alone, so a link opens in a fresh browser
with no model loaded; the page only draws what this returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit, urlunsplit

from core.results.kinds import kind_label
from core.results.overview import runs_named, story_runs
from core.store.results import RunInfo

RUN_PARAM = "run"
PRESENT_PARAM = "present"


@dataclass(frozen=True)
class LinkedRun:
    """The run a link opens and why it is shown, or (``run`` None) one plain line saying why none is."""

    run: RunInfo | None
    why_shown: str = ""
    message: str = ""


def presentation_url(page_url: str, run_id: str) -> str:
    """The page's address with ``?present=1&run=RUN_ID`` (any other query or fragment left out)."""
    parts = urlsplit(page_url)
    query = urlencode({PRESENT_PARAM: "1", RUN_PARAM: run_id})
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def linked_run(runs: Sequence[RunInfo], kinds: Sequence[str], wanted: str | None, *, how_to_make: str) -> LinkedRun:
    """The run a link to a page of ``kinds`` opens.

    ``wanted`` (the link's run id, or a unique prefix of it) must be a finished run of one of ``kinds``; without
    it, the newest finished run of ``kinds`` is opened. ``how_to_make`` ends the line shown when there is none.
    """
    wanted = (wanted or "").strip()
    if not wanted and not kinds:  # a page whose results are not stored runs (Inspect, Overlap search)
        return LinkedRun(None, message=f"Nothing to present yet. {how_to_make}")
    if not wanted:
        newest = [run for run in story_runs(runs) if run.kind in kinds]
        if not newest:
            return LinkedRun(None, message=f"Nothing to present yet: no run of this test is stored. {how_to_make}")
        return LinkedRun(newest[0], why_shown="the most recent run of this test")
    matches = runs_named(runs, wanted)
    if len(matches) != 1:
        found = "is not stored here" if not matches else f"matches {len(matches)} stored runs"
        return LinkedRun(
            None,
            message=f"The linked run {wanted} {found}: the Results page lists every stored run. {how_to_make}".strip(),
        )
    run = matches[0]
    if run.kind not in kinds:
        return LinkedRun(
            None,
            message=f"The linked run {wanted} is a {kind_label(run.kind).lower()} run: open it on the Results page.",
        )
    if not run.finished:
        return LinkedRun(
            None,
            message=f"The linked run {wanted} is not finished ({run.status}); run it again to complete it, then "
            "share its link.",
        )
    return LinkedRun(run, why_shown="opened from a shared link")
