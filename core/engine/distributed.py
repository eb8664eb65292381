"""Scoring across processes and machines with ``torch.distributed`` (``torchrun ... -m core mia``).

Only the one run loop (``core.store.runloop``) shards work; this module is its plumbing: whether this
process is one rank of several, which device a rank scores on, and the few collective calls the loop
makes. Rank 0 alone reads and writes the results store and the output files, so the other ranks need no
shared filesystem and the same command works on one machine or on several (``torchrun --nnodes``).
A plain ``python -m core`` never creates a process group, and everything here is then a no-op.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

import torch
import torch.distributed as dist

from core.errors import LeakLensError

T = TypeVar("T")

GROUP_TIMEOUT = timedelta(hours=3)
"""How long a rank waits for the others at one step: rank 0 may wait for another process computing the
same run (``_claim_or_wait``) or load a large model while the others wait for its plan."""


class RankFailedError(LeakLensError):
    """Another rank failed; that rank reports its own error, this one stops with it."""


@dataclass(frozen=True)
class Ranks:
    """This process's place in the process group."""

    rank: int
    world_size: int
    local_rank: int
    """Index on its own machine: picks ``cuda:LOCAL_RANK``."""
    backend: str

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def launched_world_size() -> int:
    """Processes torchrun started for this job (``WORLD_SIZE``); 1 for a plain launch."""
    raw = os.environ.get("WORLD_SIZE", "1").strip() or "1"
    try:
        return max(int(raw), 1)
    except ValueError as exc:
        raise LeakLensError(f"WORLD_SIZE must be a whole number (torchrun sets it), got {raw!r}.") from exc


def current() -> Ranks | None:
    """The process group of several ranks this process belongs to, or None (one process: no sharding)."""
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() < 2:
        return None
    local = int(os.environ.get("LOCAL_RANK", "0") or 0)
    return Ranks(dist.get_rank(), dist.get_world_size(), local, str(dist.get_backend()))


def is_main_process() -> bool:
    """True unless this process is a rank other than 0: only the main process prints and writes."""
    ranks = current()
    return ranks is None or ranks.is_main


def backend_for(device: str) -> str:
    """``nccl`` when ranks score on CUDA GPUs, ``gloo`` on CPU."""
    on_gpu = device.startswith("cuda") and torch.cuda.is_available()
    return "nccl" if on_gpu and dist.is_nccl_available() else "gloo"


@contextmanager
def process_group(device: str) -> Iterator[Ranks | None]:
    """Join torchrun's process group for the duration of a command; a plain launch yields None.

    A group the caller already initialised is used and left alone.
    """
    if launched_world_size() < 2:
        yield None
        return
    if not dist.is_available():
        raise LeakLensError("This torch build has no torch.distributed; run LeakLens as one process.")
    if dist.is_initialized():
        yield current()
        return
    backend = backend_for(device)
    if backend == "nccl":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0") or 0))
    dist.init_process_group(backend, timeout=GROUP_TIMEOUT)
    try:
        yield current()
    finally:
        dist.destroy_process_group()


def rank_device(device: str) -> str:
    """The device this rank scores on: ``cuda`` means ``cuda:LOCAL_RANK`` when several ranks share a machine."""
    ranks = current()
    if ranks is None or not device.startswith("cuda"):
        return device
    if device != "cuda":
        raise LeakLensError(
            f"With {ranks.world_size} processes every rank scores on its own GPU (cuda:LOCAL_RANK); "
            f"pass --device cuda (or auto) instead of --device {device}, or limit the GPUs with CUDA_VISIBLE_DEVICES."
        )
    return f"cuda:{ranks.local_rank}"


def all_gather(value: Any) -> list[Any]:
    """Every rank's ``value`` (picklable), in rank order, on every rank."""
    ranks = current()
    if ranks is None:
        return [value]
    gathered: list[Any] = [None] * ranks.world_size
    dist.all_gather_object(gathered, value)
    return gathered


def broadcast(value: Any) -> Any:
    """Rank 0's ``value`` on every rank (what the others pass is ignored)."""
    if current() is None:
        return value
    box = [value]
    dist.broadcast_object_list(box, src=0)
    return box[0]


@dataclass(frozen=True)
class Failure:
    """An exception on one rank, in a form every rank can unpickle."""

    rank: int
    message: str


def run_on_main(compute: Callable[[], T]) -> T:
    """``compute()`` on rank 0 only, its result (or its failure) on every rank.

    Rank 0 re-raises its own exception; the others raise ``RankFailedError``, so no rank waits forever
    for a result that will never come.
    """
    ranks = current()
    if ranks is None:
        return compute()
    value: Any = None
    error: BaseException | None = None
    if ranks.is_main:
        try:
            value = compute()
        except Exception as exc:  # noqa: BLE001 - sent to the other ranks, then re-raised unchanged
            error = exc
            value = Failure(0, describe_error(exc))
    value = broadcast(value)
    if error is not None:
        raise error
    if isinstance(value, Failure):
        raise RankFailedError(f"Rank {value.rank} failed: {value.message}")
    return value


def gather_from_all(compute: Callable[[], T]) -> list[T]:
    """``compute()`` on every rank, every rank's result on every rank; a failure anywhere stops all.

    The failing rank re-raises its own exception; the others raise ``RankFailedError`` naming it.
    """
    ranks = current()
    if ranks is None:
        return [compute()]
    error: BaseException | None = None
    try:
        value: Any = compute()
    except Exception as exc:  # noqa: BLE001 - sent to the other ranks, then re-raised unchanged
        error = exc
        value = Failure(ranks.rank, describe_error(exc))
    gathered = all_gather(value)
    if error is not None:
        raise error
    failed = next((v for v in gathered if isinstance(v, Failure)), None)
    if failed is not None:
        raise RankFailedError(f"Rank {failed.rank} failed: {failed.message}")
    return gathered


def describe_error(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, LeakLensError) else f"{type(exc).__name__}: {exc}"
