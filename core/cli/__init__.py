"""Command line: ``python -m core <command> ...``. Each command lives in its own module with a
``register(subparsers)`` function that adds its parser (built from the shared option groups in
``core.cli.common``) and sets ``func`` (args -> exit code)."""

from __future__ import annotations

import argparse
import importlib
import io
import logging
import sys
import traceback
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from typing import NoReturn

from core import __version__
from core.cli.common import distributed_command, plan_outputs, resolve_models_from_args
from core.engine.distributed import RankFailedError
from core.errors import LeakLensError
from core.files.outputs import os_error_cause

# One line per command module; adding a command touches this list and a new file.
COMMAND_MODULES = [
    "core.cli.inspect_cmd",
    "core.cli.membership_cmd",
    "core.cli.mcq_cmd",
    "core.cli.loss_delta_cmd",
    "core.cli.overlap_cmd",
    "core.cli.report_cmd",
    "core.cli.dataset_inference_cmd",
    "core.cli.benchmark_order_cmd",
    "core.cli.audit_cmd",
]


@contextmanager
def _silenced(quiet: bool) -> Iterator[None]:
    """Ranks other than 0 of a distributed run print nothing (tables, bars, notes): rank 0 speaks for all."""
    if not quiet:
        yield
        return
    sink = _Discard()
    with redirect_stdout(sink), redirect_stderr(sink):
        yield


TRUNCATIONS_SHOWN = 3
"""How many passages a truncation summary names before it says how many more."""


@contextmanager
def _truncations_in_one_line() -> Iterator[None]:
    """A passage longer than the model's context is cut, with a warning per passage; on a model (or server) with
    a small context that is one line per passage. They are gathered and said once, at the end, in one line."""
    from core.engine.scoring import TruncationWarning

    caught: list[str] = []
    show = warnings.showwarning

    def gather(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
        if issubclass(category, TruncationWarning):
            caught.append(str(message))
        else:
            show(message, category, filename, lineno, file, line)

    warnings.showwarning = gather
    try:
        yield
    finally:
        warnings.showwarning = show
        if len(caught) == 1:
            print(f"warning: {caught[0]}", file=sys.stderr)
        elif caught:
            named = " ".join(caught[:TRUNCATIONS_SHOWN])
            more = len(caught) - TRUNCATIONS_SHOWN
            rest = f" (and {more} more passages cut the same way)" if more > 0 else ""
            print(
                f"warning: {len(caught)} passages were longer than the model's context and were cut: {named}{rest}",
                file=sys.stderr,
            )


class _Discard(io.TextIOBase):
    """A text stream that drops what it is given (a silenced rank's output)."""

    def write(self, text: str) -> int:
        return len(text)


class _Parser(argparse.ArgumentParser):
    """argparse with the one error format of every command: a single ``error:`` line saying what to do."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m core",
        description="LeakLens: has this model seen this text before? Every dashboard task, headless.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details to stderr")
    parser.add_argument("--version", action="version", version=f"LeakLens {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(message)s")
    rank = 0
    try:
        args.output_plan = plan_outputs(args)  # before any work: no output may overwrite an input
        args.models = resolve_models_from_args(args)
        with distributed_command(args) as ranks:
            rank = ranks.rank if ranks is not None else 0
            with _silenced(rank != 0), _truncations_in_one_line():
                return int(args.func(args) or 0)
    except LeakLensError as exc:
        if rank == 0:
            print(f"error: {exc}", file=sys.stderr)
        elif not isinstance(exc, RankFailedError):  # another rank's failure is reported by that rank
            print(f"error (rank {rank}): {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # an environment fault the code did not foresee: still one line, never a traceback
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {where}{os_error_cause(exc)}.", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a library's own failure: one line naming it; -v keeps the traceback
        if args.verbose:
            traceback.print_exc(file=sys.stderr)
        if rank == 0:
            cause = str(exc).strip().splitlines()[0] if str(exc).strip() else "no message"
            hint = "" if args.verbose else " (run with -v for the traceback)"
            print(f"error: {type(exc).__name__} from a library: {cause}{hint}", file=sys.stderr)
        return 2
