#!/usr/bin/env bash
# Guided PPO (scripts/guided_shutdown.py) as run for docs/papers/deepshutdown.md: two runs side by
# side from the shipped agent, each stopped after SECONDS of training (SIGINT: the checkpoints
# written stay whole), then every checkpoint, the starting agent and T5 played on the validation
# days carved out of the training days (never trained on), and the agent chosen by the rule
# of dagger_rounds.py: the least waste among those that wait at most 1.5 x T5's.
#
#   scripts/guided_runs.sh OUT TRAIN_DAYS VALIDATION_DAYS [SECONDS] [ACTORS] [DEVICE] [EVERY] [MORE]
#
# Run A: BC weight 1 toward OR* (stretch < 0.25), learning rate 5e-5; run B: BC weight 0.3,
# learning rate 1e-4 (more of the reward).  EVERY: steps between checkpoints.  MORE: other
# candidates for evaluate's --policies (LABEL=MODEL.zip,...), chosen among with the checkpoints.
set -u
out=$1 train=$2 val=$3 secs=${4:-300} actors=${5:-7} device=${6:-cpu} every=${7:-80640} more=${8:-}
base=models/deepshutdown-taurus.zip
mkdir -p "$out"
common=(--steps 100000000 --actors "$actors" --subprocess --device "$device" --checkpoint-every "$every"
        -w "$train" --exclude-days results/shutdown/dagger_budget/rounds_B.json
        --teacher 'OR*' --teacher-options '{"max_stretch": 0.25}')
timeout -s INT "$secs" python3 scripts/guided_shutdown.py "$base" -o "$out/a" --bc-weight 1 --seed 100 \
    "${common[@]}" > "$out/a.log" 2>&1 &
timeout -s INT "$secs" python3 scripts/guided_shutdown.py "$base" -o "$out/b" --bc-weight 0.3 --learning-rate 1e-4 \
    --seed 200 "${common[@]}" > "$out/b.log" 2>&1 &
wait
policies="start=$base,T5${more:+,$more}"
for run in a b; do
    for f in "$out/$run"/step_*.zip; do
        [ -e "$f" ] && policies="$policies,$run-$(basename "$f" .zip)=$f"
    done
done
python3 -m batsched_py.cli evaluate --env shutdown --policies "$policies" -p platforms/taurus_deepshutdown.xml \
    -w "$val" -o "$out/val" -j 0 --time-unit min --no-figures > "$out/val.log" 2>&1
python3 scripts/choose_checkpoint.py "$out/val/summary.csv" --budget waiting_time:1.5:T5 \
    > "$out/chosen.json"
