"""Per-shard statistics equal a slow, obviously correct path: every order scored alone as one full sequence.

The slow path shares nothing between orders (no common start, no batching, no padding) and reads long
sequences in windows exactly as the published reference code does (inputs are the tokens but the last,
windows of ``context_len`` inputs ``stride`` apart, a later window counting only its last ``stride``
targets); our windows count the tokens a pass runs on, so our context is the reference's ``context_len + 1``.
"""

from __future__ import annotations

import math

import pytest
import torch

from core.benchmark_order.examples import render_examples
from core.benchmark_order.scoring import order_sequence, score_shard
from core.benchmark_order.settings import OrderSettings
from core.benchmark_order.shards import shard_orders
from core.data.tables import load_rows
from core.engine.model_source import encode


@torch.inference_mode()
def slow_logprob(model, tokens: list[int], context_len: int, stride: int) -> float:
    """log p(tokens after the first), in windows as the reference implementation reads them."""
    inputs, targets = tokens[:-1], tokens[1:]
    t = len(inputs)
    k = math.ceil(max(0, t - context_len) / stride)
    total = 0.0
    for j in range(k + 1):
        start, end = stride * j, min(stride * j + context_len, t)
        rel = max(0, context_len - stride) if j > 0 else 0
        logits = model(input_ids=torch.tensor([inputs[start:end]])).logits[0].double()
        logps = torch.log_softmax(logits, dim=-1).gather(1, torch.tensor(targets[start:end])[:, None])[:, 0]
        total += float(logps[rel:].sum())
    return total


def _examples(tiny_lm, n: int) -> list[list[int]]:
    texts = render_examples(load_rows("demo:mcq")).texts[:n]
    return [encode(tiny_lm, text) for text in texts]


@pytest.mark.parametrize(
    ("size", "permutations", "context", "stride"),
    [
        (4, 250, None, None),  # every order, one window each
        (6, 12, None, None),  # 12 drawn orders
        (4, 250, 48, 20),  # sequences longer than the context: windows
    ],
)
def test_shard_statistics_equal_the_slow_path(tiny_lm, size, permutations, context, stride):
    examples = _examples(tiny_lm, size + 2)
    settings = OrderSettings(shards=2, permutations=permutations, seed=5, context=context, stride=stride)
    shard = score_shard(tiny_lm, examples, 1, (2, 2 + size), settings)
    members = examples[2 : 2 + size]
    drawn = shard_orders(size, permutations, 5, 1)
    used_context, used_stride = settings.window(tiny_lm.max_context)
    orders = [tuple(range(size)), *drawn.shuffled]
    slow = [
        slow_logprob(tiny_lm.model, order_sequence(tiny_lm.start_token_id, members, o), used_context - 1, used_stride)
        for o in orders
    ]
    if context is not None:
        assert len(order_sequence(tiny_lm.start_token_id, members, orders[0])) > 2 * context  # several windows
    assert shard.canonical == pytest.approx(slow[0], abs=1e-4)
    assert list(shard.shuffled) == pytest.approx(slow[1:], abs=1e-4)
    slow_difference = slow[0] - sum(slow[1:]) / len(slow[1:])
    assert shard.difference == pytest.approx(slow_difference, abs=1e-4)
    at_least = sum(v >= slow[0] for v in slow[1:])
    assert shard.p_value == pytest.approx((1 + at_least) / len(slow))
    assert shard.n_tokens == sum(len(m) for m in members)
