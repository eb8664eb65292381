"""Runs a person can watch and stop: a Cancel button while a run goes, a plain note after a cancel, and a
scroll to the verdict once a run ends.

How Cancel works: any widget interaction during a script run makes Streamlit stop that run at its next
Streamlit call (the progress update after each stored batch) by raising its ``ScriptControlException``. The
one resumable run loop (``core.store.runloop.run_resumable``) marks the run interrupted and keeps every
stored batch; running again resumes it. ``watched_run`` leaves a marker in the session while the work goes;
a script run that finds the marker still there knows the last run was stopped and says so, with the counts
read from the results store.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import streamlit as st

from core.store.results import RUNNING, ResultStore, RunInfo

SETTLE_TIMEOUT_S = 120.0
"""How long a cancel note waits for the stopped work to finish its batch (a long batch on a big model)."""

SCROLL_TO_FINDING_JS = """<script>
(function go(tries) {
  const banner = document.querySelector('.leaklens-finding');
  // The result area's top: the result's own title stays in view above its verdict.
  const el = banner && (banner.closest('.st-key-result_area') || banner);
  if (el) { el.style.scrollMarginTop = '4rem'; el.scrollIntoView({behavior: 'auto', block: 'start'}); }
  else if (tries > 0) { setTimeout(() => go(tries - 1), 200); }
})(25);
</script>"""


@dataclass(frozen=True)
class Watch:
    """A run under way: which store kinds it writes (an audit writes several), what it counts, when it started."""

    kind: str | tuple[str, ...]
    unit: str
    """What the run counts, plural ("texts", "questions")."""
    started: float
    total: int | None = None
    """Items the whole run covers, when the page knows (a loss-delta run spans several stored runs)."""


def _running_key(key: str) -> str:
    return f"{key}_running"


def _cancelled_key(key: str) -> str:
    return f"{key}_cancelled"


@contextmanager
def watched_run(key: str, kind: str | tuple[str, ...], unit: str, total: int | None = None) -> Iterator[None]:
    """Show a Cancel button and mark the session as running ``kind`` work until the block ends.

    An error ends the watch (the page shows the error); a stop by Streamlit (Cancel, or any other click)
    leaves the marker, so the next script run shows ``cancelled_notice``.
    """
    st.session_state.pop(_cancelled_key(key), None)
    st.session_state[_running_key(key)] = Watch(kind, unit, time.time(), total)
    slot = st.empty()
    slot.button(
        "Cancel",
        key=f"{key}_cancel",
        icon=":material/stop_circle:",
        help="Stops after the batch being scored. What is scored stays stored; running again continues "
        "where it stopped.",
    )
    try:
        yield
    except Exception:
        st.session_state.pop(_running_key(key), None)
        slot.empty()
        raise
    st.session_state.pop(_running_key(key), None)
    slot.empty()


def cancel_message(watch: Watch, runs: list[RunInfo]) -> str:
    """The sentence shown after a cancel, from the runs the stopped work touched."""
    if not runs:
        return f"Cancelled before any {watch.unit} were stored; run again to start."
    done = sum(run.n_done for run in runs)
    total = watch.total or sum(run.n_total if run.n_total is not None else run.n_done for run in runs)
    stored = " What was scored is stored (the Results page lists the run)." if any(not r.finished for r in runs) else ""
    return f"Cancelled after {done} of {total} {watch.unit}; run again to continue where it stopped.{stored}"


def touched_runs(store: ResultStore, watch: Watch) -> list[RunInfo]:
    """Runs of the watched kind created or written since the watch started, oldest first."""
    return sorted(
        (
            run
            for run in store.list_runs()
            if run.kind in ((watch.kind,) if isinstance(watch.kind, str) else watch.kind)
            and run.updated_at >= watch.started - 1.0
        ),
        key=lambda run: run.created_at,
    )


def settled_runs(store: ResultStore, watch: Watch, timeout_s: float = SETTLE_TIMEOUT_S) -> list[RunInfo]:
    """The touched runs once the stopped work has let go of them.

    Streamlit starts the script run a click asks for before the stopped one has reached its next
    Streamlit call, so the stopped work may still be storing its last batch: counted too early, the note
    would say fewer items than are stored and a resumed run would measure fewer than "the rest".
    """
    deadline = time.monotonic() + timeout_s
    runs = touched_runs(store, watch)
    while any(run.status == RUNNING for run in runs) and time.monotonic() < deadline:
        time.sleep(0.1)
        runs = touched_runs(store, watch)
    return runs


def cancelled_notice(key: str) -> bool:
    """If the last run under ``key`` was stopped, say so (counts from the store) until the next run starts."""
    watch = st.session_state.pop(_running_key(key), None)
    if isinstance(watch, Watch):
        with st.spinner("Stopping after the batch being scored…"):
            runs = settled_runs(ResultStore(), watch)
        st.session_state[_cancelled_key(key)] = cancel_message(watch, runs)
    message = st.session_state.get(_cancelled_key(key))
    if not message:
        return False
    with st.container(key=f"cancelled_{key}"):
        st.warning(message, icon=":material/stop_circle:")
    return True


def scroll_to_finding() -> None:
    """Bring the first verdict banner (``.leaklens-finding``) into view with the result's title above it; call
    after drawing a fresh result."""
    st.html(SCROLL_TO_FINDING_JS, unsafe_allow_javascript=True)
