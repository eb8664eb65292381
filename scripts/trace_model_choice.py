"""Count the project files the model choice travels through during one Inspect click.

The Inspect page is run headless (``streamlit.testing``) with the tiny random model; the Gettysburg example is
filled in and **Analyse** pressed. Every call into a project function (``core/``, ``ui/``, ``pages/``) is
traced, and a call counts when one of its arguments carries the model choice. What carries it depends on the
rule (``--rule``):

- ``names`` (the default): the spec text wherever it goes
  (labels, cells and stored keys too), the parsed command line, the resolved handle (``--handle-types``).
- ``holders``: as ``names``, plus any object that holds the spec as its ``spec`` (a loaded or served model).
- ``choice``: what a room can get the model from. The parsed command line and the handle always; the spec text
  everywhere in a code base without a handle type, where any room may read it as a model (and some did); in
  one with a handle, only when it is handed to a resolver (a function named in ``RESOLVERS``), because
  ``tests/test_model_resolution.py`` holds every other room to reading it as a name.

``--whole`` traces the page from its first run (the sidebar resolving the choice) instead of the click alone.
``--results-too`` also counts results that name the model they came from (their ``model`` attribute).
``--functions`` also lists the functions entered, as ``file::function`` with how often.

    .venv/bin/python scripts/trace_model_choice.py --handle-types ModelHandle [--rule choice] [--whole]

To count an older commit, check it out beside this one and point ``LEAKLENS_TRACE_REPO`` at it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import threading
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
REPO = Path(os.environ.get("LEAKLENS_TRACE_REPO") or HERE)
sys.path.insert(0, str(REPO))
SPEC = "tiny-random"
PROJECT_DIRS = tuple(str(REPO / part) + os.sep for part in ("core", "ui", "pages"))
RULES = ("names", "holders", "choice")


def _resolvers_checked_by_the_tests() -> frozenset[str]:
    """The resolvers ``tests/test_model_resolution.py`` names (read from this checkout, whichever one is traced)."""
    spec = importlib.util.spec_from_file_location("model_resolution", HERE / "tests" / "test_model_resolution.py")
    if spec is None or spec.loader is None:
        raise SystemExit("tests/test_model_resolution.py is missing from this checkout")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return frozenset(module.RESOLVERS)


RESOLVERS = _resolvers_checked_by_the_tests() | {"is_served_spec", "served_model"}
"""Functions that read a model's text to get a model or a fact about it (the test's list, with the names two of
them had before the handle: ``is_served_spec``, ``served_model``)."""


def _text(value: object) -> bool:
    return isinstance(value, str) and (value == SPEC or value.startswith("served:"))


def _carries(value: object, rule: str, function: str, handle_types: frozenset[str], results_too: bool) -> bool:
    if _text(value):
        return rule != "choice" or not handle_types or function in RESOLVERS
    if type(value).__name__ in handle_types:
        return True
    if isinstance(value, argparse.Namespace):
        return getattr(value, "model", None) == SPEC
    if rule == "holders" and not isinstance(value, type) and getattr(value, "spec", None) == SPEC:
        return True
    # A result names the model that made it: with --results-too such objects count as carrying the choice.
    return results_too and hasattr(value, "__dict__") and getattr(value, "model", None) == SPEC


def trace_inspect_click(
    handle_types: frozenset[str], rule: str = "names", *, whole: bool = False, results_too: bool = False
) -> Counter[str]:
    from streamlit.testing.v1 import AppTest

    entered: Counter[str] = Counter()  # how often each function was entered with the choice: "file::function"

    def tracer(frame, event, arg):  # noqa: ANN001, ANN202 (sys.settrace's signature)
        if event != "call":
            return None
        path = frame.f_code.co_filename
        if not path.startswith(PROJECT_DIRS):
            return None
        code = frame.f_code
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        values = [frame.f_locals.get(name) for name in names]
        if any(_carries(v, rule, code.co_name, handle_types, results_too) for v in values):
            entered[f"{os.path.relpath(path, REPO)}::{code.co_name}"] += 1
        return None

    def trace(on: bool) -> None:
        threading.settrace(tracer if on else None)  # type: ignore[arg-type]
        sys.settrace(tracer if on else None)

    os.environ["LEAKLENS_DEFAULT_MODEL"] = SPEC
    app = AppTest.from_file(str(REPO / "pages" / "1_Inspect_a_passage.py"), default_timeout=600)
    trace(whole)
    try:
        app.run()
        example = next(b for b in app.button if b.label.startswith("Example: Gettysburg"))
        example.click().run()
        trace(True)
        app.button(key="inspect_analyse").click().run()
    finally:
        trace(False)
    if app.exception:
        raise SystemExit(f"the page failed: {app.exception}")
    return entered


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--handle-types", nargs="*", default=[], help="class names of a resolved model handle")
    parser.add_argument("--rule", choices=RULES, default="names", help="what carries the choice (see above)")
    parser.add_argument("--whole", action="store_true", help="trace from the page's first run, not the click alone")
    parser.add_argument("--functions", action="store_true", help="also list the functions entered, per file")
    parser.add_argument("--results-too", action="store_true", help="also count results that name their model")
    args = parser.parse_args(argv)
    functions = trace_inspect_click(
        frozenset(args.handle_types), args.rule, whole=args.whole, results_too=args.results_too
    )
    per_file: Counter[str] = Counter()
    for function, calls in functions.items():
        per_file[function.split("::")[0]] += calls
    summary = {"rule": args.rule, "whole": args.whole, "files": len(per_file), "calls": per_file.total()}
    report = {**summary, "per_file": dict(sorted(per_file.items()))}
    if args.functions:
        report["per_function"] = dict(sorted(functions.items()))
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
