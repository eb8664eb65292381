"""The one CLI vocabulary: shared option groups every command takes, and the helpers behind them.

Every command builds its parser from these parents, so ``--model``, ``--device``, ``--dtype``,
``--revision``, ``--trust-remote-code``, ``--dataset``, ``--split``, ``--config``, ``--limit``, the
``--*-col`` column flags, ``--out``, ``--json`` and ``--store`` / ``--no-store`` mean the same
everywhere. Old spellings stay as hidden aliases so existing scripts keep working.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.config import PROJECT_ROOT, cache_root
from core.engine import distributed
from core.engine.models import DEFAULT_MODEL, DEVICE_MAPS
from core.engine.served import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT_S
from core.engine.setup import DTYPE_CHOICES, ScoringSetup, resolve_setup
from core.errors import LeakLensError, OutputError
from core.files.outputs import OutputPlan, check_writable, resolved, write_atomic

if TYPE_CHECKING:
    from core.engine.handle import ModelHandle

MODEL_HELP = "bundled name (smollm2-135m), local checkpoint folder or hub id"


def model_options(*, repeatable: bool = False) -> argparse.ArgumentParser:
    """``--model --device --dtype --revision --trust-remote-code``."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("model")
    if repeatable:
        group.add_argument(
            "--model", action="append", help=f"{MODEL_HELP}; repeat for several (default {DEFAULT_MODEL})"
        )
    else:
        # None until parsed: --model given beside --endpoint is refused; without either it becomes the default.
        group.add_argument("--model", help=f"{MODEL_HELP} (default {DEFAULT_MODEL})")
        parent.set_defaults(model_default=DEFAULT_MODEL)
    group.add_argument(
        "--device", default="auto", help="auto (default: cuda when present, else cpu), cpu, cuda, cuda:N"
    )
    group.add_argument(
        "--dtype",
        default="auto",
        choices=DTYPE_CHOICES,
        help="auto (default: bfloat16 on cuda, float32 on cpu), float32, bfloat16, float16",
    )
    group.add_argument(
        "--device-map",
        choices=DEVICE_MAPS,
        help="auto: spread a model too large for one GPU across the visible GPUs (needs accelerate)",
    )
    group.add_argument("--revision", help="hub branch, tag or commit of the model (hub ids only)")
    group.add_argument("--trust-remote-code", action="store_true", help="allow custom model code from the hub")
    group.add_argument(
        "--start-token",
        help="token to score passages after (default: the documented rule; "
        "docs/methods.md); applies to the tested model, never to reference or base models",
    )
    served_model_options(parent)
    return parent


def served_model_options(parent: argparse.ArgumentParser) -> None:
    """``--endpoint --served-model --api-key-env --concurrency --timeout --tokenizer`` (docs/served.md)."""
    group = parent.add_argument_group("served model (instead of --model)")
    group.add_argument(
        "--endpoint", help="OpenAI-compatible base URL of a served model, e.g. http://host:8000/v1 (vLLM)"
    )
    group.add_argument("--served-model", help="model name on the server (default: the only one it lists)")
    group.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="environment variable holding the API key (never given on the command line)",
    )
    group.add_argument(
        "--concurrency",
        type=int,
        default=DEFAULT_CONCURRENCY,
        help=f"requests in flight (default {DEFAULT_CONCURRENCY})",
    )
    group.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help=f"seconds each request may take, retries and waits included (default {DEFAULT_TIMEOUT_S:g})",
    )
    group.add_argument("--tokenizer", help="local tokenizer of the served model, for servers without /tokenize")


def resolve_models_from_args(args: argparse.Namespace) -> list[ModelHandle]:
    """The command's tested model(s), read once before any work: with ``--endpoint`` the server is connected
    here; otherwise each ``--model`` (none given: the default model) under ``--device``, ``--dtype``,
    ``--revision`` and ``--start-token``. Commands take them from ``tested_model`` / ``tested_handles``."""
    if not hasattr(args, "device"):  # a command that runs no model
        return []
    from core.engine.bfloat16 import bfloat16_warning
    from core.engine.handle import resolve_model, served_handle

    setup = setup_from_args(args)
    if not getattr(args, "endpoint", None):
        slow = bfloat16_warning(setup.device, setup.dtype)
        if slow:  # said here, where the models are read once, so once a command
            print(f"warning: {slow}", file=sys.stderr)
        specs = args.model if isinstance(args.model, list) else [args.model or DEFAULT_MODEL]
        return [
            resolve_model(
                spec,
                setup=setup,
                start_token=args.start_token,
                trust_remote_code=args.trust_remote_code,
                device_map=getattr(args, "device_map", None),
            )
            for spec in specs or [DEFAULT_MODEL]
        ]
    if args.model is not None:  # None unless given, for one --model or several (delta)
        raise LeakLensError("Give the tested model either with --model or with --endpoint, not both.")
    from core.engine.served import Endpoint, connect

    served = connect(
        Endpoint(
            url=args.endpoint,
            model=args.served_model,
            api_key_env=args.api_key_env,
            concurrency=args.concurrency,
            timeout_s=args.timeout,
            tokenizer=args.tokenizer,
            start_token=args.start_token,
        )
    )
    print(
        f"served model: {served.describe()} (the weights behind an API cannot be verified: runs are keyed by the "
        "endpoint, the served name, the server version and the model id it reports)",
        file=sys.stderr,
    )
    return [served_handle(served, setup=setup)]


def tested_handles(args: argparse.Namespace) -> list[ModelHandle]:
    """Every tested model of the command (several for ``delta``), as resolved by ``resolve_models_from_args``."""
    return list(args.models)


def tested_model(args: argparse.Namespace) -> ModelHandle:
    """The command's one tested model."""
    return tested_handles(args)[0]


def dataset_options(
    *,
    required: bool = True,
    repeatable: bool = False,
    limit: bool = True,
    sample: bool = True,
    config: bool = True,
    help_text: str | None = None,
) -> argparse.ArgumentParser:
    """``--dataset --split --config --limit`` (and ``--sample --seed`` where a sample makes sense)."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("data")
    what = help_text or (
        "demo:NAME (shipped with LeakLens), a CSV / TSV / JSONL / JSON / Parquet file, or a hub dataset id"
    )
    if repeatable:
        group.add_argument("--dataset", action="append", required=required, default=None, help=what + " (repeatable)")
    else:
        group.add_argument("--dataset", required=required, help=what)
    group.add_argument("--split", help="split of a hub dataset")
    if config:
        group.add_argument("--config", help="configuration of a hub dataset")
    if limit:
        limit_help = "use the first N rows" + (" (with --sample: a seeded sample of N rows instead)" if sample else "")
        group.add_argument("--limit", type=int, help=limit_help)
    if limit and sample:
        group.add_argument(
            "--sample",
            action="store_true",
            help="with --limit: a seeded sample (keeping the class balance of labelled data)",
        )
        group.add_argument("--seed", type=int, default=0, help="seed of the --sample draw (default 0)")
    return parent


def output_options() -> argparse.ArgumentParser:
    """``--out FILE`` (the JSON result, provenance included) and ``--json`` (the same JSON on stdout)."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("output")
    group.add_argument("--out", help="write the JSON result (with its provenance) to this file")
    group.add_argument("--json", action="store_true", help="print the JSON result instead of tables")
    return parent


def store_options() -> argparse.ArgumentParser:
    """``--store PATH`` / ``--no-store``."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("results store")
    group.add_argument("--store", help="results store file (default: $LEAKLENS_STORE or <cache>/results.sqlite)")
    group.add_argument("--no-store", action="store_true", help="neither read nor keep stored results")
    return parent


def add_column(
    parser: argparse.ArgumentParser,
    name: str,
    help_text: str,
    *,
    aliases: tuple[str, ...] = (),
    default: str | None = None,
) -> None:
    """``--NAME-col`` plus hidden old spellings that set the same value."""
    dest = f"{name.replace('-', '_')}_col"
    parser.add_argument(f"--{name}-col", dest=dest, default=default, help=help_text)
    for alias in aliases:
        parser.add_argument(alias, dest=dest, help=argparse.SUPPRESS)


def setup_from_args(args: argparse.Namespace) -> ScoringSetup:
    return resolve_setup(args.device, args.dtype, args.revision)


def require_positive(value: int | None, flag: str, minimum: int = 1) -> None:
    """Refuse a count option below ``minimum`` before anything is loaded (None = not given)."""
    if value is not None and value < minimum:
        raise LeakLensError(f"{flag} must be at least {minimum}, got {value}.")


def limit_options(args: argparse.Namespace) -> dict[str, Any]:
    """What ``--limit`` / ``--sample`` / ``--seed`` mean, as loader keyword arguments."""
    limit = getattr(args, "limit", None)
    require_positive(limit, "--limit")
    if getattr(args, "sample", False) and limit is None:
        raise LeakLensError("--sample needs --limit N (the sample size).")
    return {"limit": limit}


@contextmanager
def open_store(args: argparse.Namespace) -> Iterator[Any]:
    """The results store the command reads and writes; with ``--no-store`` a throwaway one.

    Ranks other than 0 of a distributed run get a throwaway one too: rank 0 alone writes the real store,
    and the run loop copies each finished run into the others' (``core.store.runloop``).
    """
    from core.store.results import ResultStore

    if getattr(args, "no_store", False) or not distributed.is_main_process():
        with tempfile.TemporaryDirectory(prefix="leaklens-nostore-") as tmp:
            yield ResultStore(Path(tmp) / "results.sqlite")
        return
    yield ResultStore(args.store) if getattr(args, "store", None) else ResultStore()


def recorded_options(args: argparse.Namespace) -> dict[str, Any]:
    """The command's options as given, for provenance (functions and output flags left out)."""
    from core.engine.served import public_url

    skip = {"func", "json", "out", "verbose", "distributed", "output_plan", "model_default", "models"}
    options = {k: v for k, v in vars(args).items() if k not in skip and not callable(v)}
    handles = getattr(args, "models", None)
    if handles:  # the model as resolved: the default one when none was named, a served one's name
        options["model"] = handles[0].spec if getattr(args, "model_default", None) else [h.spec for h in handles]
    if options.get("endpoint"):
        options["endpoint"] = public_url(str(options["endpoint"]))  # never a user name or password
    ranks = distributed.current()
    if ranks is not None:
        options["processes"] = {"world_size": ranks.world_size, "backend": ranks.backend}
    return options


def command_provenance(
    args: argparse.Namespace,
    command: str,
    *,
    models: Mapping[str, ModelHandle] | None = None,
    uses_model: bool = True,
) -> dict[str, Any]:
    """Provenance for this invocation: versions, setup, the identity of each model role, the options."""
    from core.store.provenance import build_provenance

    setup = setup_from_args(args) if uses_model else None
    identities = {role: handle.recorded_identity for role, handle in (models or {}).items()}
    return build_provenance(
        command=command,
        options=recorded_options(args),
        models=identities,
        setup=setup.to_dict() if setup else None,
    )


def write_output(path: str | Path, text: str) -> Path:
    """Write a command's output file atomically (creating its folder); a clear error instead of a traceback.

    In a distributed run only rank 0 writes: the others hold the same result and would race on the file.
    """
    if not distributed.is_main_process():
        return Path(path)
    return write_atomic(path, text)


_SOURCE_FLAGS = (
    ("dataset", "dataset"),
    ("file", "passage file"),
    ("suspect", "suspect set"),
    ("validation", "validation set"),
    ("test", "test set"),
    ("reference", "reference set"),
    ("dataset_mixer_config", "dataset-mixer config"),
)
_MODEL_FLAGS = (
    ("model", "model folder"),
    ("reference_model", "reference model folder"),
    ("base_model", "base model folder"),
    ("tokenizer", "tokenizer folder"),
)
_OUTPUT_FLAGS = (("out", "--out file"), ("export_shuffled", "--export-shuffled file"))
_STORE_SIDE_FILES = ("", "-wal", "-shm", "-journal")
"""SQLite keeps a store's pending writes beside it under these suffixes."""


def plan_outputs(args: argparse.Namespace) -> OutputPlan:
    """Every input the command's flags name, and every output flag claimed against them, before any work.

    Raises ``OutputError`` when an output would overwrite an input (the dataset, the store, a training
    source, an index or model folder) or another output, or cannot be written where it points."""
    from core.data.demo import demo_path, is_demo_source
    from core.data.tables import is_local_source

    plan = OutputPlan()
    # Read by every command whatever its flags: the shipped assets (fresh passages, reference sets, shipped
    # scores) and the cache (converted models, tokenizers, indexes).
    plan.add_input("LeakLens assets folder", PROJECT_ROOT / "assets", folder=True)
    plan.add_input("LeakLens cache folder", cache_root(), folder=True)
    for role, path, folder in implicit_inputs():
        plan.add_input(role, path, folder=folder)
    for flag, role in _SOURCE_FLAGS:
        for source in _values(getattr(args, flag, None)):
            if source == "-":
                continue
            if is_demo_source(source):
                plan.add_input(f"shipped {role}", _demo_file(demo_path, source))
            elif is_local_source(source):
                plan.add_input(role, source)
    for flag, role in _MODEL_FLAGS:
        for spec in _values(getattr(args, flag, None)):
            if Path(spec).expanduser().is_dir():
                plan.add_input(role, spec, folder=True)
    if _uses_store(args):
        store = Path(args.store).expanduser() if getattr(args, "store", None) else _default_store()
        if store.is_dir():
            raise OutputError(
                f"The results store {store} is a folder; give a file path such as {store / 'results.sqlite'}."
            )
        if args.command != "report":  # the others write runs into it
            check_writable(resolved(store), "results store")
        for suffix in _STORE_SIDE_FILES:
            plan.add_input("results store", f"{store}{suffix}")
    if getattr(args, "backend", None) == "embedded":
        root = _index_root(args)
        if root.exists() and not root.is_dir():
            raise OutputError(f"The index folder {root} (--index-dir) is a file, not a folder.")
        plan.add_input("index folder", root, folder=True)
    for flag, role in _OUTPUT_FLAGS:
        target = getattr(args, flag, None)
        if target is not None:  # an empty value is refused in words, never taken as "no file"
            plan.claim(target, role)
    if getattr(args, "output_dir", None):
        plan.claim_folder(args.output_dir, "--output-dir folder")
    return plan


def implicit_inputs() -> list[tuple[str, Path, bool]]:
    """What commands read without a flag naming it, besides the assets and LeakLens's cache: the Hugging Face
    caches models and datasets load from, and a fresh-passage set named by its environment variable."""
    from huggingface_hub import constants as hub

    from core.passage.calibration import FRESH_PASSAGES_ENV

    found = [
        ("Hugging Face cache", Path(hub.HF_HOME), True),
        ("Hugging Face hub cache", Path(hub.HF_HUB_CACHE), True),
    ]
    if os.environ.get("HF_DATASETS_CACHE"):  # otherwise it is HF_HOME/datasets, inside HF_HOME above
        found.append(("Hugging Face datasets cache", Path(os.environ["HF_DATASETS_CACHE"]), True))
    if os.environ.get(FRESH_PASSAGES_ENV):
        found.append((f"fresh passages (${FRESH_PASSAGES_ENV})", Path(os.environ[FRESH_PASSAGES_ENV]), False))
    return [(role, path.expanduser(), folder) for role, path, folder in found]


def _values(value: Any) -> list[str]:
    """A flag's value(s) as a list of non-blank strings (repeatable flags give lists)."""
    items = value if isinstance(value, list) else [value]
    return [str(v).strip() for v in items if isinstance(v, str | os.PathLike) and str(v).strip()]


def _demo_file(demo_path, source: str) -> Path | None:
    try:
        return demo_path(source)
    except LeakLensError:
        return None  # an unknown demo name is reported by the loader, in its own words


def _uses_store(args: argparse.Namespace) -> bool:
    return hasattr(args, "no_store") and not args.no_store


def _default_store() -> Path:
    from core.store.results import default_store_path

    return default_store_path()


def _index_root(args: argparse.Namespace) -> Path:
    from core.overlap.backends.embedded import default_index_root

    return Path(args.index_dir).expanduser() if getattr(args, "index_dir", None) else default_index_root()


def emit_json(args: argparse.Namespace, document: Mapping[str, Any]) -> None:
    """Write ``--out`` and/or print ``--json``: the same document both ways."""
    text = json.dumps(_finite(document), indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n"
    if getattr(args, "out", None):
        write_output(args.out, text)
    if getattr(args, "json", False):
        sys.stdout.write(text)


@contextmanager
def distributed_command(args: argparse.Namespace) -> Iterator[distributed.Ranks | None]:
    """Run the command as one rank of torchrun's process group when torchrun launched it (else plainly).

    Only commands that score through the one run loop (``mia``, ``delta``, ``mcq``: they set
    ``distributed=True``) can share their work; the others would only repeat it on every rank.
    """
    world = distributed.launched_world_size()
    if world < 2:
        yield None
        return
    if not getattr(args, "distributed", False):
        raise LeakLensError(
            f"'{args.command}' runs as one process: start it with python -m core, not torchrun "
            f"(only mia, delta and mcq share their work across {world} processes)."
        )
    device = setup_from_args(args).device
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", "1") or 1)
    if getattr(args, "device_map", None) and device.startswith("cuda") and local_world > 1:
        raise LeakLensError(
            f"--device-map auto spreads one model over every visible GPU, so {local_world} processes on one "
            "machine would share them: start one process per machine (--nproc-per-node 1), or drop --device-map."
        )
    with distributed.process_group(device) as ranks:
        yield ranks


def print_finding(finding: Any) -> None:
    """The verdict first, in plain words; the tables follow."""
    print(f"finding ({finding.level}): {finding.headline}")
    if finding.numbers:
        print(f"  {finding.numbers}")
    for line in finding.evidence:
        print(f"  - {line}")
    for line in finding.caveats:
        print(f"  note: {line}")
    print()


def _finite(value: Any) -> Any:
    """NaN and infinities become null: JSON has no spelling for them."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value
