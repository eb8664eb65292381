"""Model resolution: bundled names, local directories, hub ids, and the errors users see."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from core.engine.bundled import tiny_random_model
from core.engine.models import load_model, wrap_model
from core.errors import ModelLoadError


def test_tiny_random_uses_the_smollm2_vocabulary_and_start_token(tiny_lm):
    assert tiny_lm.tokenizer.convert_ids_to_tokens(tiny_lm.start_token_id) == "<|endoftext|>"
    assert tiny_lm.device.type in ("cpu", "cuda")
    assert tiny_lm.max_context > 0
    assert "tiny-random" in tiny_lm.describe()


def test_bundled_smollm2_starts_passages_with_endoftext_not_chat_bos(smollm2):
    tok = smollm2.tokenizer
    assert tok.convert_ids_to_tokens(smollm2.start_token_id) == "<|endoftext|>"
    assert tok.bos_token == "<|im_start|>"  # the chat template's token, deliberately not used
    assert smollm2.max_context == 8192
    assert 130e6 < smollm2.n_parameters < 140e6
    if smollm2.device.type == "cpu":
        assert smollm2.dtype == torch.float32


def test_local_directory_checkpoint_loads(tiny_lm, tmp_path):
    tiny_lm.model.save_pretrained(tmp_path)
    tiny_lm.tokenizer.save_pretrained(tmp_path)
    loaded = load_model(str(tmp_path))
    ids = torch.tensor([[tiny_lm.start_token_id, 42, 43]])
    with torch.inference_mode():
        a = tiny_lm.model(input_ids=ids).logits
        b = loaded.model(input_ids=ids).logits
    torch.testing.assert_close(a, b)


def test_wrap_model_accepts_an_in_memory_model(tiny_lm):
    model = tiny_random_model(tiny_lm.tokenizer, seed=3)
    wrapped = wrap_model(model, tiny_lm.tokenizer, spec="fine-tuned", start_token_id=tiny_lm.start_token_id)
    assert wrapped.spec == "fine-tuned"
    assert wrapped.start_token_id == tiny_lm.start_token_id


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "No model given"),
        ("./no/such/dir", "does not exist"),
        ("a/b/c", "neither a bundled model"),
        ("has space", "neither a bundled model"),
    ],
)
def test_bad_specs_get_clear_errors(spec, message):
    with pytest.raises(ModelLoadError, match=message):
        load_model(spec)


def test_directory_without_config_says_what_is_missing(tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"")
    with pytest.raises(ModelLoadError, match="no config.json"):
        load_model(str(tmp_path))


def test_unknown_hub_id_offline_says_what_was_tried():
    # conftest switches the hub off, as CI has no network.
    with pytest.raises(ModelLoadError) as info:
        load_model("leaklens-test/no-such-model")
    message = str(info.value)
    assert "Tried: bundled names" in message
    assert "local directory" in message
    assert "offline" in message


def _remote_code_checkpoint(folder: Path) -> Path:
    """A checkpoint whose config maps the model to its own (here missing) Python module."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(
        json.dumps(
            {
                "model_type": "leaklens_custom",
                "architectures": ["CustomForCausalLM"],
                "auto_map": {
                    "AutoConfig": "modeling_custom.CustomConfig",
                    "AutoModelForCausalLM": "modeling_custom.CustomForCausalLM",
                },
            }
        )
    )
    return folder


def test_remote_code_model_is_refused_naming_the_flag_not_the_hub(tmp_path):
    """Offline (as in conftest) a local remote-code checkpoint is refused for its code, never blamed on the hub."""
    with pytest.raises(ModelLoadError) as info:
        load_model(str(_remote_code_checkpoint(tmp_path / "custom")))
    message = str(info.value)
    assert "--trust-remote-code" in message
    assert "modeling_custom.py" in message
    assert "hub" not in message.lower()
    assert "offline" not in message.lower()
    assert "\n" not in message


def test_remote_code_model_with_the_flag_reports_the_full_cause(tmp_path):
    with pytest.raises(ModelLoadError) as info:
        load_model(str(_remote_code_checkpoint(tmp_path / "custom")), trust_remote_code=True)
    message = str(info.value)
    assert "\n" not in message
    assert "offline" not in message.lower()
    cause = message.split("(Cause: ", 1)[1]
    assert cause.endswith(")")
    assert len(cause) < 420 or cause.endswith(" …)")  # never cut mid-word


def test_unknown_hub_id_offline_fails_in_one_line_without_touching_the_network():
    import time

    started = time.monotonic()
    with pytest.raises(ModelLoadError) as info:
        load_model("leaklens-test/no-such-model")
    assert time.monotonic() - started < 5
    message = str(info.value)
    assert "HF_HUB_OFFLINE=1" in message
    assert "not in the local Hugging Face cache" in message
    assert "\n" not in message
