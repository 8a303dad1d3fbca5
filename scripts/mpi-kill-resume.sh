#!/usr/bin/env bash
# Kills MPI builds at random moments and resumes them with other numbers
# of ranks: builds layers 0 to 11 once in one process, and up to SEEDS
# (default 15) once in one process as the reference; then RUNS times
# (default 6) starts `mpirun -np 3` from layer 12 with checkpoints every
# 0.3 s (layers kept spread, the default), kills every rank at once after
# a random 1 to 12 s, resumes with 2, 3, 4 and 1 ranks in turn, and
# compares the files with the reference. Prints one line per run (where
# it was killed, how it resumed); exits non-zero if any run's files
# differ. Not part of `make test` (it takes minutes); `make test` has
# fixed kills (scripts/mpi-check.sh). Usage: scripts/mpi-kill-resume.sh
# [SEEDS] [RUNS]. Needs Open MPI (see scripts/mpi-check.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-15}
runs=${2:-6}
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh

"$plain" build --dir "$work/base" --max-seeds 11 --quiet >/dev/null
cp -r "$work/base" "$work/alone"
"$plain" build --dir "$work/alone" --max-seeds "$seeds" --quiet >/dev/null
status=0
for i in $(seq 1 "$runs"); do
  dir="$work/run$i"
  cp -r "$work/base" "$dir"
  mpirun --oversubscribe --bind-to none -np 3 "$mpi" build --dir "$dir" --max-seeds "$seeds" --quiet \
    --checkpoint-seconds 0.3 >/dev/null 2>&1 &
  job=$!
  after=$(python3 -c "import random; print(round(random.uniform(1, 12), 2))")
  sleep "$after"
  pkill -KILL -f -- "^$mpi build --dir $dir " 2>/dev/null || true
  kill -TERM "$job" 2>/dev/null || true
  wait "$job" 2>/dev/null || true
  checkpoint=$(awk '$1 == "checkpoint" { print "checkpoint " $3 " of layer " $2 }' "$dir/manifest")
  layers=$(grep -c '^layer ' "$dir/manifest" || true)
  ranks=$((i % 4 + 1))
  if [ "$ranks" = 1 ]; then
    "$plain" build --dir "$dir" --max-seeds "$seeds" 2>"$dir.log" >/dev/null
  else
    mpirun --oversubscribe --bind-to none -np "$ranks" "$mpi" build --dir "$dir" --max-seeds "$seeds" \
      2>"$dir.log" >/dev/null
  fi
  how=$(grep -o "resuming from checkpoint .*" "$dir.log" | head -1 || true)
  verdict="the same files"
  cmp -s "$work/alone/tablebase.owtb" "$dir/tablebase.owtb" || { verdict="OTHER FILES"; status=1; }
  echo "run $i: killed after $after s ($layers layers finished, ${checkpoint:-no checkpoint}), resumed on $ranks: $verdict (${how:-from the start of the layer})"
done
exit $status
