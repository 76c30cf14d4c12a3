"""Type aliases for local models and tokenizers, for annotations only.

Signatures that take or return a Hugging Face causal LM or tokenizer use these names
instead of ``Any``. The aliases are string forward references and ``transformers`` and
``torch`` are imported only while type checking, so importing this module costs nothing
at runtime (config files and the command line stay free of torch).

Example:
    >>> from sweetrl_gym.lm.types import CausalLM, Tokenizer
    >>> def load(name: str) -> tuple[CausalLM, Tokenizer]: ...

"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    import torch
    import transformers

__all__ = ["CausalLM", "Tokenizer"]

CausalLM: TypeAlias = "transformers.PreTrainedModel | torch.nn.Module"
"""A causal language model that generates and is trained.

Usually a ``transformers`` ``PreTrainedModel`` (``AutoModelForCausalLM``); a
``torch.nn.Module`` covers the same model wrapped for training (DDP, FSDP, a ``peft``
``PeftModel``).
"""

Tokenizer: TypeAlias = "transformers.PreTrainedTokenizerBase"
"""A ``transformers`` tokenizer (slow or fast), e.g. from ``AutoTokenizer``."""
