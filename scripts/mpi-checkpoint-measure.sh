#!/usr/bin/env bash
# What the checkpoints of a layer kept spread cost and what they save, for
# layer SEEDS (default 18) with 2 ranks: builds the layers below it once
# in one process, then layer SEEDS with `mpirun -np 2`
#   1. with no checkpoint inside the layer,
#   2. with a checkpoint at every opportunity (`--checkpoint-seconds 0`:
#      after the components are numbered, then before every threshold of
#      the games),
#   3. as 2, killed once a checkpoint inside the games is named, then
#      resumed on 2 ranks (each from its part) and, from a copy, by one
#      process (the parts joined);
# checks that every run's files are the same and prints the layer's
# seconds, the sizes of the killed run's parts, and the resumes' seconds.
# Usage: scripts/mpi-checkpoint-measure.sh [SEEDS]. Needs Open MPI (see
# scripts/mpi-check.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-18}
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh

"$plain" build --dir "$work/base" --max-seeds $((seeds - 1)) --quiet >/dev/null
for run in none every killed; do
  mkdir -p "$work/$run"
  cp "$work/base"/* "$work/$run/"
done
layer_seconds() {
  python3 -c "import json,sys; print(f\"{json.load(open(sys.argv[1]))['layers'][int(sys.argv[2])]['seconds']['total']:.1f}\")" \
    "$1/stats.json" "$seeds"
}
# Seconds since "$1" (a `date +%s.%N`).
since() { python3 -c "import sys; print(float(sys.argv[1]) - float(sys.argv[2]))" "$(date +%s.%N)" "$1"; }
mpirun --oversubscribe --bind-to none -np 2 "$mpi" build --dir "$work/none" --max-seeds "$seeds" --quiet \
  --checkpoint-seconds 1000000 >/dev/null
mpirun --oversubscribe --bind-to none -np 2 "$mpi" build --dir "$work/every" --max-seeds "$seeds" --quiet \
  --checkpoint-seconds 0 2>"$work/every.log" >/dev/null

# The killed run: once the manifest names a checkpoint of the layer other
# than its first (so one inside the games), every rank is killed at once.
mpirun --oversubscribe --bind-to none -np 2 "$mpi" build --dir "$work/killed" --max-seeds "$seeds" --quiet \
  --checkpoint-seconds 0 >/dev/null 2>&1 &
job=$!
while kill -0 "$job" 2>/dev/null; do
  sequence=$(awk -v n="$seeds" '$1 == "checkpoint" && $2 == n { print $3 }' "$work/killed/manifest")
  [ -n "$sequence" ] && [ "$sequence" -ge 3 ] && break
  sleep 0.05
done
pkill -KILL -f -- "^$mpi build --dir $work/killed " 2>/dev/null || true
kill -TERM "$job" 2>/dev/null || true
wait "$job" 2>/dev/null || true
named=$(awk '$1 == "checkpoint" { print $2, $3 }' "$work/killed/manifest")
echo "killed with checkpoint (layer, sequence): ${named:-none}"
ls -l "$work/killed" | awk '/checkpoint-/ { printf "  %s: %.1f MB\n", $9, $5 / 1e6 }'
cp -r "$work/killed" "$work/joined"
start=$(date +%s.%N)
mpirun --oversubscribe --bind-to none -np 2 "$mpi" build --dir "$work/killed" --max-seeds "$seeds" \
  2>"$work/resumed.log" >/dev/null
resumed=$(since "$start")
grep -o "resuming from checkpoint .*" "$work/resumed.log" | head -1
start=$(date +%s.%N)
"$plain" build --dir "$work/joined" --max-seeds "$seeds" 2>"$work/joined.log" >/dev/null
joined=$(since "$start")
grep -o "resuming from checkpoint .*" "$work/joined.log" | head -1
for run in every killed joined; do
  cmp -s "$work/none/tablebase.owtb" "$work/$run/tablebase.owtb" || { echo "$run: other files" >&2; exit 1; }
done
echo "| layer $seeds, 2 ranks | seconds |"
echo "|---|---|"
echo "| no checkpoint inside the layer | $(layer_seconds "$work/none") |"
echo "| a checkpoint at every opportunity | $(layer_seconds "$work/every") |"
printf '| killed, resumed on 2 ranks from their parts (whole command) | %.1f |\n' "$resumed"
printf '| killed, resumed by one process from the parts joined (whole command) | %.1f |\n' "$joined"
