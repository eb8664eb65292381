"""Count the project files the model choice travels through during one Inspect click.

The Inspect page is run headless (``streamlit.testing``) with the tiny random model; the Gettysburg example is
filled in and **Analyse** pressed. Every call into a project function is traced, and a call counts when one of
its arguments carries the model choice: the spec string itself, the command line's parsed arguments naming it, or
the resolved model handle (``--handle-types``). A result that names the model it came from (its ``model``
attribute) is what the choice produced, not the choice; ``--results-too`` counts those as well. The count is
the set of project files (``core/``, ``ui/``, ``pages/``) such calls enter, and how many calls they are.

    .venv/bin/python scripts/trace_model_choice.py [--handle-types ModelHandle ...]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
SPEC = "tiny-random"
PROJECT_DIRS = tuple(str(REPO / part) + os.sep for part in ("core", "ui", "pages"))


def _carries(value: object, handle_types: frozenset[str], results_too: bool) -> bool:
    if isinstance(value, str):
        return value == SPEC or value.startswith("served:")
    if type(value).__name__ in handle_types:
        return True
    if isinstance(value, argparse.Namespace):
        return getattr(value, "model", None) == SPEC
    # A result names the model that made it: with --results-too such objects count as carrying the choice.
    return results_too and hasattr(value, "__dict__") and getattr(value, "model", None) == SPEC


def trace_inspect_click(handle_types: frozenset[str], results_too: bool = False) -> Counter[str]:
    from streamlit.testing.v1 import AppTest

    entered: Counter[str] = Counter()

    def tracer(frame, event, arg):  # noqa: ANN001, ANN202 (sys.settrace's signature)
        if event != "call":
            return None
        path = frame.f_code.co_filename
        if not path.startswith(PROJECT_DIRS):
            return None
        code = frame.f_code
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        if any(_carries(frame.f_locals.get(name), handle_types, results_too) for name in names):
            entered[os.path.relpath(path, REPO)] += 1
        return None

    os.environ["LEAKLENS_DEFAULT_MODEL"] = SPEC
    app = AppTest.from_file(str(REPO / "pages" / "1_Inspect_a_passage.py"), default_timeout=600)
    app.run()
    example = next(b for b in app.button if b.label.startswith("Example: Gettysburg"))
    example.click().run()
    threading.settrace(tracer)
    sys.settrace(tracer)
    try:
        app.button(key="inspect_analyse").click().run()
    finally:
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]
    if app.exception:
        raise SystemExit(f"the page failed: {app.exception}")
    return entered


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--handle-types", nargs="*", default=[], help="class names of a resolved model handle")
    parser.add_argument(
        "--results-too", action="store_true", help="also count results that name their model (the old count)"
    )
    args = parser.parse_args(argv)
    entered = trace_inspect_click(frozenset(args.handle_types), args.results_too)
    print(json.dumps({"files": len(entered), "calls": sum(entered.values()), "per_file": dict(entered)}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
