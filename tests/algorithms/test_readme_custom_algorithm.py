"""The docs' custom-algorithm example (docs/comparing.md) runs as written and trains the policy."""

from __future__ import annotations

import re
from pathlib import Path

import torch

from algorithms import Algorithm

README = Path(__file__).resolve().parents[2] / "docs" / "comparing.md"


def readme_example() -> str:
    """The guide's Python block that defines ``ImitateTheBest``, dedented."""
    blocks = re.findall(r"^( *)```python\n(.*?)^\1```", README.read_text(), re.M | re.S)
    for indent, body in blocks:
        if "class ImitateTheBest" in body:
            return "\n".join(line[len(indent) :] for line in body.splitlines())
    raise AssertionError("docs/comparing.md has no ImitateTheBest example")


def test_readme_custom_algorithm_fits(shared_buffer, tiny_policy, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the example writes to runs/mine
    monkeypatch.setattr(Algorithm, "_registry", dict(Algorithm._registry))  # left as found
    before = [p.detach().clone() for p in tiny_policy.model.parameters()]
    namespace = {"policy": tiny_policy, "buffer": shared_buffer}
    exec(compile(readme_example(), str(README), "exec"), namespace)

    cls = namespace["ImitateTheBest"]
    assert issubclass(cls, Algorithm) and Algorithm.named("imitate-best") is cls
    assert (tmp_path / "runs" / "mine").is_dir()
    changed = any(not torch.equal(a, b) for a, b in zip(before, tiny_policy.model.parameters()))
    assert changed, "fitting the guide's algorithm did not update the policy"
