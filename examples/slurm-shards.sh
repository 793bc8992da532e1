#!/usr/bin/env bash
# servegate sharded sweep on Slurm: four load nodes drive one server together,
# each running shard I of 4 of the same sweep on the same schedule, then the
# batch script merges the shards into one ordinary result. Adapt the lines
# marked ADAPT and submit with: sbatch examples/slurm-shards.sh
# docs/run.md ("Launching shards") explains the flags.
#
#   srun, one task per node → $OUT/shard-I.json and shard-I.records.jsonl.gz
#                             (I = SLURM_PROCID, 0…3)
#   then, in this script    → $OUT/result.json and $OUT/report.md
#
# Submit from a directory on a filesystem every node shares, holding
# servegate.yml and a package.json that pins servegate (npm ci done), with Node
# on every node (a module, or srun's --container-image=ghcr.io/example/servegate:latest
# with Pyxis: YOUR OWN image with Node, servegate and bash). servegate starts no
# remote process itself: srun is the launcher here.
#
# N shards = N nodes = N tasks, one per node: two shards on one node would share
# its CPUs and network, the very limit sharding is for. ADAPT: N here, in
# --shard …/4 below, nowhere else.
#SBATCH --job-name=servegate-shards
#SBATCH --nodes=4
#SBATCH --ntasks=4
#SBATCH --ntasks-per-node=1
# CPUs for each shard's load client. ADAPT
#SBATCH --cpus-per-task=16
# No other job's processes on the load nodes: they would slow the load client.
#SBATCH --exclusive
# The whole sweep: two minutes of lead, then every run of the sweep × slot,
# then the merge. ADAPT
#SBATCH --time=03:00:00
#SBATCH --output=servegate-shards-%j.out

set -euo pipefail

CONFIG=servegate.yml
SWEEP=full                                   # ADAPT: a closed-loop sweep of servegate.yml
BASE_URL=http://vllm.inference.svc:8000      # ADAPT: the server under test, as every node reaches it
# Seconds each run of the sweep is given (run k starts at start-at + k × slot on
# every shard): longer than the sweep's longest run, its warmup included; a run
# that overruns makes the next one late. ADAPT
SLOT=150
# An NTP server every node reaches (UDP 123): each shard measures its clock
# offset against it, so the merge can prove the shards were aligned. Without it
# shards on different nodes are marked invalid (shards_unaligned). ADAPT
TIME_SERVER=ntp.example.internal
# One folder per job, on the shared filesystem: the merge's glob below sees this
# sweep's shards and no earlier one's.
OUT="${SLURM_SUBMIT_DIR:-$PWD}/servegate-${SLURM_JOB_ID:?submit this script with sbatch}"
mkdir -p "$OUT"
export OUT

# Once, here, so every shard gets the same time: two minutes ahead leaves srun
# time to start every task and each shard time to probe the server. GNU date.
START_AT="$(date -u -d '+2 min' +%Y-%m-%dT%H:%M:%SZ)"
echo "servegate: $SLURM_NNODES shards start the sweep at $START_AT; results in $OUT"

# One task per node, as allocated above. --shard names SLURM_PROCID: servegate
# reads each task's own value. Only --out needs it expanded per task, so the
# single-quoted bash -c expands $OUT and $SLURM_PROCID in the task, and takes the
# shared flags as "$@". srun does not inherit --cpus-per-task (Slurm 22.05 on).
# --kill-on-bad-exit: one failed shard stops the others, and set -e stops this
# script before the merge (a shard started again would be out of the schedule).
# shellcheck disable=SC2016 # single quotes on purpose: expanded in each task
srun --cpus-per-task="$SLURM_CPUS_PER_TASK" --kill-on-bad-exit=1 \
  bash -c 'exec npx servegate run "$@" --out "$OUT/shard-$SLURM_PROCID.json"' servegate-shard \
  --config "$CONFIG" --sweep "$SWEEP" --base-url "$BASE_URL" \
  --shard SLURM_PROCID/4 --start-at "$START_AT" --slot "$SLOT" --time-server "$TIME_SERVER"

# Every shard succeeded. Each shard-I.json has its shard-I.records.jsonl.gz
# beside it; the merge reads both and writes one ordinary result, which
# servegate report, compare and baseline update take unchanged.
npx servegate merge "$OUT"/shard-*.json --out "$OUT/result.json"
npx servegate report "$OUT/result.json" --markdown "$OUT/report.md"
