"""Every bad input to ``python -m core`` ends the same way: exit code 2, exactly one ``error:`` line on stderr
that names the input (and what to do about it), and no traceback.

Each case runs the real command's ``main``, offline like the rest of the suite: in this interpreter, or in its
own when the case changes the environment a library reads at import time (the hub's address).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from core.cli import main
from core.config import PROJECT_ROOT

REPO = PROJECT_ROOT
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


@dataclass(frozen=True)
class Case:
    name: str
    argv: list[str | bytes]
    """Arguments after ``python -m core``; ``{tmp}`` is the folder of the case files; bytes pass as raw bytes."""
    names: tuple[str, ...]
    """Substrings the ``error:`` line must hold: the input named, and what to do."""
    stdin: bytes = b""
    env: dict[str, str | None] = field(default_factory=dict)
    """Overrides of the offline environment; None removes a variable."""
    absent: tuple[str, ...] = ()
    """Substrings stderr must not hold (a wrong diagnosis, retries)."""


CASES = [
    Case("inspect: blank --text", ["inspect", "--text", "   "], ("--text is empty", "give a passage")),
    Case(
        "inspect: missing --file",
        ["inspect", "--file", "{tmp}/missing.txt"],
        ("missing.txt", "No such file", "Pass an existing text file"),
    ),
    Case(
        "inspect: Latin-1 --file",
        ["inspect", "--file", "{tmp}/latin1.txt"],
        ("latin1.txt is not UTF-8 text", "byte 3 is invalid): 0xe9", "Save it as UTF-8"),
    ),
    Case(
        "inspect: Latin-1 on stdin",
        ["inspect", "--file", "-"],
        ("stdin (--file -)", "byte 3 is invalid): 0xe9"),
        stdin=b"caf\xe9 au lait",
    ),
    Case(
        "inspect: non-UTF-8 --text",
        ["inspect", "--text", b"caf\xe9 au lait"],
        ("--text is not UTF-8 text (byte 3 is invalid): 0xe9.", "use --file"),
        absent=("TypeError",),
    ),
    Case(
        "inspect: --max-tokens 0",
        ["inspect", "--text", "hello", "--max-tokens", "0"],
        ("--max-tokens must be at least 1, got 0",),
        absent=("prefix", "Row 0"),
    ),
    Case(
        "inspect: --max-tokens not a number",
        ["inspect", "--text", "hello", "--max-tokens", "ten"],
        ("--max-tokens", "invalid int value: 'ten'", "--help"),
    ),
    Case(
        "inspect: unknown method",
        ["inspect", "--text", "hello", "--methods", "bogus"],
        ("Unknown method 'bogus'", "min_k:k=10"),
    ),
    Case(
        "inspect: missing model folder",
        ["inspect", "--text", "hello", "--model", "./no/such/dir"],
        ("'./no/such/dir' does not exist",),
    ),
    Case(
        "inspect: remote-code model without the flag",
        ["inspect", "--text", "hello", "--model", "{tmp}/custom"],
        ("custom' runs its own Python code", "--trust-remote-code"),
        absent=("hub", "offline", "Tru\n"),
    ),
    Case(
        "inspect: hub id not cached, offline",
        ["inspect", "--text", "hello", "--model", "nobody/no-such-model"],
        ("'nobody/no-such-model'", "HF_HUB_OFFLINE=1", "local checkpoint folder"),
    ),
    Case(
        "inspect: hub id, hub unreachable",
        ["inspect", "--text", "hello", "--model", "nobody/no-such-model"],
        ("'nobody/no-such-model'", "cannot be reached (127.0.0.1:9", "Connect to the network"),
        env={"HF_HUB_OFFLINE": None, "TRANSFORMERS_OFFLINE": None, "HF_ENDPOINT": "http://127.0.0.1:9"},
        absent=("Retrying", "thrown while requesting"),
    ),
    Case("mia: missing dataset", ["mia", "--dataset", "{tmp}/missing.csv"], ("File not found", "missing.csv")),
    Case(
        "mia: unsupported file type",
        ["mia", "--dataset", "{tmp}/data.xyz"],
        ("data.xyz: unsupported file type '.xyz'", "Use CSV"),
    ),
    Case("mia: Latin-1 CSV", ["mia", "--dataset", "{tmp}/latin1.csv"], ("latin1.csv is not UTF-8 text", "byte")),
    Case(
        "mia: unknown text column",
        ["mia", "--dataset", "{tmp}/labels.csv", "--text-col", "body"],
        ("no column(s) 'body'", "Columns found: 'text', 'label'"),
    ),
    Case(
        "mia: label not 0/1",
        ["mia", "--dataset", "{tmp}/bad_label.csv"],
        ("Column 'label'", "must hold 0 (non-member) or 1 (member)", "line 3: '2'"),
    ),
    Case("mia: one class only", ["mia", "--dataset", "{tmp}/members.csv"], ("only members (1)", "needs both")),
    Case(
        "mia: no text at all", ["mia", "--dataset", "{tmp}/no_text.jsonl"], ("has no row with text in column 'text'",)
    ),
    Case("mia: --limit 1", ["mia", "--dataset", "{tmp}/labels.csv", "--limit", "1"], ("--limit must be at least 2",)),
    Case(
        "mia: --max-tokens 0",
        ["mia", "--dataset", "{tmp}/labels.csv", "--max-tokens", "0"],
        ("--max-tokens must be at least 1",),
    ),
    Case(
        "mcq: every answer outside the options",
        ["mcq", "--dataset", "{tmp}/bad_answers.jsonl"],
        ("bad_answers.jsonl holds no usable multiple-choice question", "answer 'E' is not one of the options"),
    ),
    Case(
        "mcq: one option column",
        ["mcq", "--dataset", "demo:mcq", "--option-cols", "A"],
        ("option columns (--option-cols), got 1: 'A'",),
    ),
    Case("mcq: --limit 0", ["mcq", "--dataset", "demo:mcq", "--limit", "0"], ("--limit must be at least 1",)),
    Case(
        "order-test: more shards than examples allow",
        ["order-test", "--dataset", "demo:mcq", "--shards", "50"],
        ("24 examples cannot fill 50 shards", "use --shards 12 or fewer"),
    ),
    Case(
        "order-test: a template naming a missing column",
        ["order-test", "--dataset", "demo:mcq", "--text-template", "{subject}: {question}"],
        ("no column(s) 'subject'", "'question'"),
    ),
    Case(
        "order-test: malformed template",
        ["order-test", "--dataset", "demo:mcq", "--text-template", "{question"],
        ("text template", "malformed"),
    ),
    Case("order-test: --shards 1", ["order-test", "--dataset", "demo:mcq", "--shards", "1"], ("--shards must be",)),
    Case(
        "order-test: --out onto the dataset",
        ["order-test", "--dataset", "{tmp}/members.csv", "--out", "{tmp}/members.csv"],
        ("members.csv",),
    ),
]


def _write_inputs(folder: Path) -> None:
    (folder / "latin1.txt").write_bytes(b"caf\xe9 au lait")
    (folder / "latin1.csv").write_bytes(b"text,label\ncaf\xe9,1\nthe,0\n")
    (folder / "data.xyz").write_text("text,label\n")
    (folder / "labels.csv").write_text("text,label\nhello there,1\ngeneral kenobi,0\nanother one,1\n")
    (folder / "bad_label.csv").write_text("text,label\nhello there,1\ngeneral kenobi,2\n")
    (folder / "members.csv").write_text("text,label\nhello there,1\ngeneral kenobi,1\n")
    (folder / "no_text.jsonl").write_text('{"text": "  ", "label": 1}\n{"text": "", "label": 0}\n')
    question = {"question": "Q?", "A": "a", "B": "b", "C": "c", "D": "d"}
    (folder / "bad_answers.jsonl").write_text(
        "".join(json.dumps({**question, "answer": answer}) + "\n" for answer in ("E", "Z", 7))
    )
    custom = folder / "custom"
    custom.mkdir()
    (custom / "config.json").write_text(
        json.dumps(
            {
                "model_type": "leaklens_custom",
                "auto_map": {"AutoModelForCausalLM": "modeling_custom.CustomForCausalLM"},
            }
        )
    )


def _argv(case: Case, folder: Path) -> list[str | bytes]:
    return [a.replace("{tmp}", str(folder)) if isinstance(a, str) else a for a in case.argv]


def _run_in_interpreter(case: Case, folder: Path, store: Path) -> tuple[subprocess.CompletedProcess, float]:
    """A case that changes the environment a library reads when it is imported runs in its own interpreter."""
    env = {**os.environ, **OFFLINE, "LEAKLENS_STORE": str(store), "OMP_WAIT_POLICY": "PASSIVE"}
    for name, value in case.env.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "core", *_argv(case, folder)],
        cwd=REPO,
        env=env,
        input=case.stdin,
        capture_output=True,
        timeout=120,
    )
    return done, time.monotonic() - started


def _run_here(case: Case, folder: Path, store: Path) -> tuple[subprocess.CompletedProcess, float]:
    """The command's own ``main`` in this process, with its own stdin, stdout and stderr, as ``python -m core``
    runs it: arguments that are not UTF-8 arrive as the interpreter decodes them (surrogate escapes)."""
    argv = [os.fsdecode(a) if isinstance(a, bytes) else a for a in _argv(case, folder)]
    streams = {name: io.BytesIO(case.stdin if name == "stdin" else b"") for name in ("stdin", "stdout", "stderr")}
    wrapped = {name: io.TextIOWrapper(raw, encoding="utf-8", write_through=True) for name, raw in streams.items()}
    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    saved_store = os.environ.get("LEAKLENS_STORE")
    os.environ["LEAKLENS_STORE"] = str(store)
    started = time.monotonic()
    sys.stdin, sys.stdout, sys.stderr = wrapped["stdin"], wrapped["stdout"], wrapped["stderr"]
    try:
        with contextlib.chdir(REPO):
            code = main(argv)
    except SystemExit as exit_:  # argparse's own errors
        code = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        if saved_store is None:
            os.environ.pop("LEAKLENS_STORE", None)
        else:
            os.environ["LEAKLENS_STORE"] = saved_store
    seconds = time.monotonic() - started
    done = subprocess.CompletedProcess(argv, code, streams["stdout"].getvalue(), streams["stderr"].getvalue())
    return done, seconds


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, tuple[subprocess.CompletedProcess, float]]:
    """Every case; those that need an environment of their own run in their own interpreter, the others in
    this one (an interpreter start costs seconds of CPU: importing torch and transformers)."""
    folder = tmp_path_factory.mktemp("bad-inputs")
    _write_inputs(folder)
    store = folder / "results.sqlite"
    return {case.name: (_run_in_interpreter if case.env else _run_here)(case, folder, store) for case in CASES}


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_gets_one_clear_error_line(case: Case, outcomes):
    done, seconds = outcomes[case.name]
    stderr = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2, stderr
    assert "Traceback" not in stderr
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, stderr
    for expected in case.names:
        assert expected in errors[0]
    for wrong in case.absent:
        assert wrong not in stderr
    assert seconds < 30  # fails fast: nothing is retried, no model is loaded for a bad input
