"""Resolve a model spec to a ready tokenizer + causal LM.

A spec is one of:
- a bundled name (``smollm2-135m``, ``gemma-3-270m``, ``tiny-random``) that works offline,
- a local directory holding a Hugging Face checkpoint,
- any Hugging Face hub id (downloaded by ``transformers`` into its own cache).

Bundled GGUF models are dequantised once and cached as safetensors under ``<cache>/models/<name>``:
dequantising is the slow part of a first load (docs/benchmarks.md, Dashboard response), and later loads
read the cached weights.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

import torch
from transformers import AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from core.engine.bundled import (
    BUNDLED_MODELS,
    DEFAULT_BUNDLED,
    TINY_RANDOM,
    BundledModel,
    bundled_tokenizer,
    discard_cached_folder,
    ensure_bundled_converted,
    tiny_random_model,
)
from core.engine.capabilities import ALL_CAPABILITIES
from core.engine.hub import from_local_or_hub, from_pretrained, shorten
from core.engine.memory import keep_freed_memory
from core.engine.model_kind import LocalKind, model_kind
from core.engine.setup import DTYPES
from core.engine.start_token import START_TOKEN_RULE, choose_start_token, token_id_of
from core.errors import ModelLoadError

_T = TypeVar("_T")

log = logging.getLogger(__name__)

DEFAULT_MODEL = DEFAULT_BUNDLED


@dataclass(frozen=True, eq=False)
class LoadedModel:
    """A tokenizer and model ready for scoring, with what the engine needs to know about them."""

    spec: str
    """What the user asked for (bundled name, directory or hub id)."""
    tokenizer: PreTrainedTokenizerBase
    model: PreTrainedModel
    device: torch.device
    dtype: torch.dtype
    start_token_id: int
    """Prepended to every passage, so the first real token is scored too."""
    max_context: int
    """Most tokens (start token included) the model accepts in one sequence."""

    @property
    def name(self) -> str:
        return self.spec

    @property
    def n_parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())

    @property
    def pad_token_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        return int(pad) if pad is not None else self.start_token_id

    @property
    def start_token(self) -> str:
        return str(self.tokenizer.convert_ids_to_tokens(self.start_token_id))

    def describe(self) -> str:
        dtype = str(self.dtype).removeprefix("torch.")
        return (
            f"{self.spec} · {self.n_parameters / 1e6:.0f}M params · {self.device.type} · {dtype} · "
            f"start token {self.start_token}"
        )

    # -- the model-source interface, shared with ServedModel (core.engine.model_source) ---------------------
    @property
    def capabilities(self) -> frozenset[str]:
        """Everything: the full next-token distribution, target log-probs, alternatives, generation."""
        return ALL_CAPABILITIES

    @property
    def source_label(self) -> str:
        return f"the model {self.spec} loaded here"

    @property
    def device_label(self) -> str:
        """Where the passes run: ``cpu``, ``cuda``, ..."""
        return self.device.type

    def status_line(self) -> str:
        """One plain line on where and how the model runs (the Home page's model status)."""
        return (
            f"Loaded on **{self.device.type.upper()}** in {str(self.dtype).removeprefix('torch.')} · "
            f"{self.n_parameters / 1e6:.1f} M parameters · context {self.max_context:,} tokens"
        )

    def encode(self, text: str) -> list[int]:
        """The ids of ``text`` without special tokens."""
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def tokenize(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """(ids, character offsets) of ``text`` without special tokens."""
        tok = self.tokenizer
        if getattr(tok, "is_fast", False):
            enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
            return list(enc["input_ids"]), [(int(s), int(e)) for s, e in enc["offset_mapping"]]
        # Slow tokenizers have no offsets: recover them by decoding growing prefixes.
        ids = list(tok(text, add_special_tokens=False)["input_ids"])
        offsets, previous = [], 0
        for i in range(len(ids)):
            end = min(len(text), len(tok.decode(ids[: i + 1])))
            offsets.append((previous, max(previous, end)))
            previous = max(previous, end)
        return ids, offsets

    def detokenize(self, ids: Sequence[int]) -> str:
        """The text of ``ids``, spaces exactly as the tokens spell them (no clean-up)."""
        # One flat list of ids decodes to one string (transformers types the result str | list[str]).
        return cast(str, self.tokenizer.decode(list(ids), clean_up_tokenization_spaces=False))

    # -- the one place a caller's work splits by source (the other is ServedModel.visit) --------------------------
    def visit(self, here: Callable[[LoadedModel], _T], server: Callable[[Any], _T]) -> _T:
        """``here(self)``: a pass with its in-process implementation (``server`` is for a model behind a server).
        Each source picks its own way of computing a pass, so callers never ask which source they hold."""
        return here(self)


_Fact = TypeVar("_Fact")
_Source = TypeVar("_Source")
_FACTS: weakref.WeakKeyDictionary[Any, dict[str, object]] = weakref.WeakKeyDictionary()
_FACTS_LOCK = threading.Lock()


def model_fact(lm: _Source, name: str, measure: Callable[[_Source], _Fact]) -> _Fact:
    """``measure(lm)``, run once per model source (loaded here or served): facts found by running the model
    (which cache it keeps, whether it honours a packing mask, its scores on the built-in examples) cost a pass
    or more, and callers ask again and again. Kept by the source object itself, never by its name: new weights
    under an old name are another source."""
    with _FACTS_LOCK:
        facts = _FACTS.setdefault(lm, {})
        if name in facts:
            return facts[name]  # type: ignore[return-value]
    value = measure(lm)
    with _FACTS_LOCK:
        facts[name] = value
    return value


def default_device() -> tuple[torch.device, torch.dtype]:
    """CUDA in bf16 when present, otherwise CPU in fp32."""
    if torch.cuda.is_available():
        return torch.device("cuda"), torch.bfloat16
    return torch.device("cpu"), torch.float32


def load_model(
    spec: str = DEFAULT_MODEL,
    *,
    device: str | torch.device | None = None,
    dtype: torch.dtype | str | None = None,
    revision: str | None = None,
    trust_remote_code: bool = False,
    start_token: str | None = None,
    device_map: str | None = None,
    kind: LocalKind | None = None,
) -> LoadedModel:
    """Resolve ``spec`` and load it for inference. Raises ``ModelLoadError`` with what was tried.

    ``revision`` (a branch, tag or commit) applies to hub ids only. ``dtype`` may be a name
    (``float32``, ``bfloat16``, ``float16``). ``start_token`` overrides the start-token rule
    (``core.engine.start_token``). ``device_map="auto"`` spreads a model too large for one GPU across the
    visible GPUs (and CPU memory) through ``accelerate``; inputs then go to the model's first device.
    ``kind``: what the spec names, when a handle has read it already (``core.engine.model_kind``).
    """
    spec = (spec or "").strip()
    if not spec:
        raise ModelLoadError("No model given. Use a bundled name (smollm2-135m), a local directory or a hub id.")
    if isinstance(dtype, str):
        if dtype not in DTYPES:
            raise ModelLoadError(f"Unknown dtype '{dtype}'; use one of {', '.join(DTYPES)}.")
        dtype = DTYPES[dtype]
    revision = (revision or "").strip() or None
    kind = kind or model_kind(spec)
    if revision and (kind != "hub" or Path(spec).expanduser().exists()):
        raise ModelLoadError(f"A revision applies to hub models only; '{spec}' is bundled or a local folder.")
    default_dev, default_dtype = default_device()
    dev = torch.device(device) if device is not None else default_dev
    dt = dtype or (default_dtype if dev.type == default_dev.type else torch.float32)

    keep_freed_memory()  # batches of tensors come and go: reuse their memory (core.engine.memory)
    placement = _placement(device_map, dev)
    if spec == TINY_RANDOM:
        tokenizer, model = _tiny_random()
    elif kind == "bundled":
        tokenizer, model = load_bundled(BUNDLED_MODELS[spec], dt, trust_remote_code, spec, placement)
    else:
        tokenizer, model = from_local_or_hub(spec, dt, trust_remote_code, revision, placement)
    start = token_id_of(tokenizer, choose_start_token(tokenizer, spec, start_token), spec)

    if placement is None:
        model = model.to(device=dev, dtype=dt).eval()
    else:
        model = _dispatched(model, dt, placement).eval()
        dev = first_device(model)
    return LoadedModel(
        spec=spec,
        tokenizer=tokenizer,
        model=model,
        device=dev,
        dtype=dt,
        start_token_id=start,
        max_context=_max_context(model, tokenizer),
    )


def wrap_model(
    model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, *, spec: str, start_token_id: int | None = None
) -> LoadedModel:
    """Wrap an already-built model (e.g. one fine-tuned in memory) so the engine can score with it."""
    param = next(model.parameters())
    start = start_token_id if start_token_id is not None else _rule_start_id(tokenizer, spec)
    return LoadedModel(
        spec=spec,
        tokenizer=tokenizer,
        model=model.eval(),
        device=param.device,
        dtype=param.dtype,
        start_token_id=start,
        max_context=_max_context(model, tokenizer),
    )


DEVICE_MAPS = ("auto",)


def _placement(device_map: str | None, device: torch.device) -> str | dict[str, str] | None:
    """The ``device_map`` handed to transformers / accelerate, or None to load onto ``device`` whole.

    ``auto`` spreads over the visible GPUs; with ``device`` cpu on a machine that has GPUs it keeps every
    layer on the CPU (what ``--device cpu`` asked for). It needs ``accelerate``.
    """
    if device_map is None:
        return None
    if device_map not in DEVICE_MAPS:
        raise ModelLoadError(f"Unknown device map '{device_map}'; use auto (or leave it out).")
    if importlib.util.find_spec("accelerate") is None:
        raise ModelLoadError("--device-map auto needs the accelerate package: pip install accelerate.")
    return {"": "cpu"} if device.type == "cpu" and torch.cuda.is_available() else "auto"


def _dispatched(model: PreTrainedModel, dtype: torch.dtype, placement: str | dict[str, str]) -> PreTrainedModel:
    """A model built in memory (not by ``from_pretrained``) placed by accelerate like a loaded one."""
    if getattr(model, "hf_device_map", None):
        return model
    from accelerate import dispatch_model, infer_auto_device_map

    model = model.to(dtype=dtype)  # type: ignore[call-arg]  # transformers' @wraps(Module.to) reads as unbound
    device_map = (
        placement
        if isinstance(placement, dict)
        else infer_auto_device_map(
            model, no_split_module_classes=list(getattr(model, "_no_split_modules", None) or []), dtype=dtype
        )
    )
    model = dispatch_model(model, device_map=device_map)
    model.hf_device_map = device_map  # type: ignore[assignment]  # torch types unknown Module attrs Tensor|Module
    return model


def first_device(model: PreTrainedModel) -> torch.device:
    """Where a model spread over several devices takes its inputs: the device of its input embeddings."""
    # Typed nn.Module by transformers; the input embeddings are an nn.Embedding (or a subclass) in every model.
    device = cast(torch.nn.Embedding, model.get_input_embeddings()).weight.device
    return torch.device("cpu") if device.type == "meta" else device


def load_bundled(bundled: BundledModel, dtype: torch.dtype, trust_remote_code: bool, spec: str, placement):
    """The bundled model from its cached checkpoint; a cached copy whose files no longer load (a file replaced
    or cut short) is our own derived data, so it is discarded and rebuilt from the package once."""
    directory = ensure_bundled_converted(bundled)
    try:
        return from_pretrained(str(directory), dtype, trust_remote_code, spec, device_map=placement)
    except Exception as exc:  # any damaged file: a tokenizer's KeyError, a weights file's SafetensorError
        log.warning(
            "The cached copy of %s in %s could not be loaded (%s); rebuilding it from the package.",
            bundled.name,
            directory,
            shorten(" ".join(str(exc).split()), 200),
        )
    discard_cached_folder(directory)
    directory = ensure_bundled_converted(bundled)
    return from_pretrained(str(directory), dtype, trust_remote_code, spec, device_map=placement)


def _tiny_random():
    tokenizer = bundled_tokenizer()
    return tokenizer, tiny_random_model(tokenizer)


def _rule_start_id(tokenizer: PreTrainedTokenizerBase, spec: str) -> int:
    return token_id_of(tokenizer, choose_start_token(tokenizer, spec), spec)


def planned_start_token(
    spec: str, *, override: str | None = None, revision: str | None = None, kind: LocalKind | None = None
) -> str:
    """The start token ``load_model`` will use, known before loading the weights (for run keys).

    Bundled models use their declared token (the rule's answer, tested); a local folder's or a cached hub
    model's tokenizer is read offline and the rule applied. When no tokenizer can be read without a
    download, the answer is ``auto (rule N)``: the rule is fixed and the weights' identity, also in the
    run key, fixes the tokenizer.
    """
    if override:
        return override
    spec = spec.strip()
    kind = kind or model_kind(spec)
    if kind == "bundled":
        return BUNDLED_MODELS["smollm2-135m" if spec == TINY_RANDOM else spec].start_token
    try:
        extra = {"revision": revision} if revision else {}
        tokenizer = AutoTokenizer.from_pretrained(
            str(Path(spec).expanduser()) if kind == "local" else spec, local_files_only=True, **extra
        )
        return choose_start_token(tokenizer, spec)
    except (OSError, ValueError, KeyError, ModelLoadError):
        return f"auto (rule {START_TOKEN_RULE})"


def _max_context(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> int:
    config = model.config
    for attr in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        value = getattr(config, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(limit, int) and 0 < limit < 1_000_000:
        return limit
    return 2048
