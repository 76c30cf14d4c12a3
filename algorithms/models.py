"""Model pieces the algorithms share: weight files, a scalar value head, text encoding."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from algorithms.logprobs import truncate_middle
from sweetrl_gym.lm import CausalLM, Tokenizer

__all__ = [
    "ValueHeadModel",
    "clone_model",
    "enable_activation_checkpointing",
    "encode_texts",
    "frozen_copy",
    "load_weights",
    "save_causal_lm",
]


def clone_model(model: nn.Module) -> nn.Module:
    """Return an independent copy of ``model`` (same device and dtype), in eval mode."""
    clone = copy.deepcopy(model)
    clone.eval()
    return clone


def frozen_copy(model: nn.Module) -> nn.Module:
    """Return :func:`clone_model` of ``model`` with no trainable parameter (a frozen reference)."""
    clone = clone_model(model)
    clone.requires_grad_(False)
    return clone


def save_causal_lm(model: CausalLM, state_dict: dict[str, Any], directory: Path) -> None:
    """Write a ``transformers`` model's weights and config with ``save_pretrained``.

    Args:
        model: The unwrapped model (gives the config and the tied-weight layout).
        state_dict: Its full state dict (``accelerator.get_state_dict``: gathered under
            FSDP/DeepSpeed).
        directory: Destination folder.

    """
    model.save_pretrained(str(directory), state_dict=state_dict, safe_serialization=True)


def load_weights(model: nn.Module, directory: Path) -> None:
    """Load weights written by :func:`save_causal_lm` (one file or shards) into ``model``."""
    from accelerate.utils import load_checkpoint_in_model

    load_checkpoint_in_model(model, str(directory), strict=True)


def encode_texts(
    tokenizer: Tokenizer, texts: Sequence[str], *, max_length: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Tokenize texts right-padded; a too-long text loses its middle.

    Value heads read the last token, so the end (the latest turn) must survive; the
    start (system prompt, task, a critic's reference hint) is kept too. The cut is
    :func:`algorithms.logprobs.truncate_middle`'s, as for every other row.

    Returns:
        ``(input_ids, attention_mask)``, each ``(batch, length)``.

    Raises:
        ValueError: If there are no texts or one tokenizes to nothing.

    """
    if not texts:
        raise ValueError("no texts to encode")
    rows = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    rows = [truncate_middle(row, max_length) for row in rows]
    for index, row in enumerate(rows):
        if not row:
            raise ValueError(f"text {index} is empty after tokenization")
    width = max(len(row) for row in rows)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    input_ids = torch.full((len(rows), width), pad, dtype=torch.long)
    attention_mask = torch.zeros((len(rows), width), dtype=torch.long)
    for index, row in enumerate(rows):
        input_ids[index, : len(row)] = torch.tensor(row, dtype=torch.long)
        attention_mask[index, : len(row)] = 1
    return input_ids, attention_mask


def enable_activation_checkpointing(model: nn.Module) -> None:
    """Recompute each layer's activations in the backward pass instead of keeping them.

    transformers 5 calls this activation checkpointing (the old name, gradient
    checkpointing, warns and goes in v6); earlier versions know only the old name.
    Non-reentrant, so that inputs need not require gradients (frozen embeddings, LoRA).
    """
    kwargs = {"use_reentrant": False}
    if hasattr(model, "activation_checkpointing_enable"):
        model.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
    elif hasattr(model, "gradient_checkpointing_enable"):
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)


_HEAD_INIT_SCALE = 0.01
"""The value heads' initial weights as a share of the usual ``hidden**-0.5`` scale."""


class ValueHeadModel(nn.Module):
    """Scalar heads on a causal LM's last hidden state at the last real token.

    Used by ArCHer (Q1, Q2 and V heads) and by SWEET-RL's value-head ablation. The LM
    head is not run (an 8B model's 128k-word projection would dominate memory); an
    untied LM head is frozen so that distributed training sees no unused parameters.

    Args:
        lm: A ``transformers`` causal LM (its ``base_model`` gives the hidden states).
        num_heads: Number of scalar outputs.

    """

    def __init__(self, lm: CausalLM, num_heads: int = 1):
        super().__init__()
        if num_heads < 1:
            raise ValueError(f"num_heads must be at least 1, got {num_heads}")
        self.lm = lm
        output = lm.get_output_embeddings()
        if output is not None and output.weight is not lm.get_input_embeddings().weight:
            output.requires_grad_(False)
        hidden = lm.config.get_text_config().hidden_size
        self.heads = nn.Linear(hidden, num_heads)
        param = next(lm.parameters())
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)  # the same head for the same backbone, whatever the caller did
            # Values start near 0 (rewards lie in [0, 1]), the heads apart: at std
            # hidden**-0.5 an LM's last hidden states (norm ~50 on SmolLM2) gave values of
            # +-2, which TD targets then chased for longer than a CPU run trains.
            nn.init.normal_(self.heads.weight, std=_HEAD_INIT_SCALE * hidden**-0.5)
            nn.init.zeros_(self.heads.bias)
        self.heads.to(device=param.device, dtype=torch.float32)

    def activation_checkpointing_enable(self, **_: Any) -> None:
        """Turn on activation checkpointing in the backbone."""
        enable_activation_checkpointing(self.lm)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        positions: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Return values in float32 at each row's last real token, or at ``positions``.

        Args:
            input_ids: ``(batch, length)`` right-padded.
            attention_mask: ``(batch, length)``; or, for branched rows, the
                ``(batch, 1, length, length)`` mask of :func:`algorithms.logprobs.branch_mask`
                (then ``positions`` and ``position_ids`` are required).
            positions: ``(n, 2)`` ``(row, position)`` pairs to read (e.g. the end of each
                turn's state in a whole dialogue: causal attention makes it the value of
                that prefix alone); ``None``: each row's last real token.
            position_ids: ``(batch, length)`` each token's position (branched rows);
                ``None``: the backbone's own (``0, 1, ...`` on right-padded rows).

        Returns:
            ``(n, num_heads)`` (``n`` = batch without ``positions``).

        """
        if attention_mask.dim() != 2 and (positions is None or position_ids is None):
            raise ValueError("a 4-D attention mask needs positions and position_ids")
        hidden = self.lm.base_model(
            input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids
        ).last_hidden_state
        if positions is None:
            rows = torch.arange(hidden.shape[0], device=hidden.device)
            columns = attention_mask.sum(dim=1) - 1
        else:
            positions = positions.to(hidden.device)
            rows, columns = positions[:, 0], positions[:, 1]
        return self.heads(hidden[rows, columns].float())

    def save(self, state_dict: dict[str, Any], directory: Path) -> None:
        """Write the backbone (``save_pretrained``) and the heads (safetensors)."""
        from safetensors.torch import save_file

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        lm_state = {k[len("lm.") :]: v for k, v in state_dict.items() if k.startswith("lm.")}
        head_state = {
            k[len("heads.") :]: v.contiguous()
            for k, v in state_dict.items()
            if k.startswith("heads.")
        }
        save_causal_lm(self.lm, lm_state, directory / "lm")
        save_file(head_state, str(directory / "heads.safetensors"))

    def load(self, directory: Path) -> None:
        """Load weights written by :meth:`save`."""
        from safetensors.torch import load_file

        directory = Path(directory)
        load_weights(self.lm, directory / "lm")
        state = load_file(str(directory / "heads.safetensors"))
        self.heads.load_state_dict({k: v.to(self.heads.weight.device) for k, v in state.items()})
