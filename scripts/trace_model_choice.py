"""Count the project files the model choice travels through during one Inspect click.

The Inspect page is run headless (``streamlit.testing``) with the tiny random model; the Gettysburg example is
filled in and **Analyse** pressed. Every call into a project function is traced, and a call counts when one of
its arguments carries the model choice: the spec string itself, an object with that ``model`` attribute (the
CLI's parsed arguments), or the resolved model handle (``--handle-types``). The count is the set of project files
(``core/``, ``ui/``, ``pages/``) such calls enter, and how many calls they are.

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


def _carries(value: object, handle_types: frozenset[str]) -> bool:
    if isinstance(value, str):
        return value == SPEC or value.startswith("served:")
    if type(value).__name__ in handle_types:
        return True
    return getattr(value, "model", None) == SPEC if hasattr(value, "__dict__") else False


def trace_inspect_click(handle_types: frozenset[str]) -> Counter[str]:
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
        if any(_carries(frame.f_locals.get(name), handle_types) for name in names):
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
    args = parser.parse_args(argv)
    entered = trace_inspect_click(frozenset(args.handle_types))
    print(json.dumps({"files": len(entered), "calls": sum(entered.values()), "per_file": dict(entered)}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
