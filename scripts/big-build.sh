#!/usr/bin/env bash
# A big build as the README measures it: every layer up to MAX_SEEDS from
# the shipped ≤ 12 table (or, with FROM=nothing, from nothing, with the
# searches that make ≤ 12 exact), killed with -9 once inside layer
# KILL_LAYER (just after its first checkpoint), resumed, then verified.
# Prints the build's rows and times; samples the resident memory every 5 s
# into DIR.rss (time, VmRSS kB, RssAnon kB, RssFile kB, layer files
# present: the layer being built is that count). The binary it runs is
# copied to DIR.endgames first.
#
#   [FROM=nothing] scripts/big-build.sh DIR [MAX_SEEDS] [KILL_LAYER]
#
# KILL_LAYER `none`: no kill (to resume a build that was killed already).
# BIN=path: run that binary (a build of another commit) instead of
# building this tree's.
#
# Defaults: 24 seeds (about 45 minutes from the shipped table on 2 vCPUs,
# 31 more from nothing; 9.6 GB of anonymous memory at layer 24), a kill
# inside layer 22. Rerunning on the same DIR resumes it; a DIR built to
# fewer seeds with the same options is extended.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/big-build.sh DIR [MAX_SEEDS] [KILL_LAYER]}
seeds=${2:-24}
kill_layer=${3:-22}
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet --bin endgames
  BIN=target/release/endgames
fi
# The run keeps its own copy of the binary, so rebuilding the tree while it
# runs cannot change the code that resumes it after the kill.
mkdir -p "$dir"
bin=$dir.endgames
cp "$BIN" "$bin.tmp" && mv "$bin.tmp" "$bin"
if [ "${FROM:-shipped}" = nothing ]; then
  # The shipped table's own searches (make endgames) below 13 seeds.
  start_options=(--search-max-seeds 20 --search-nodes 300000000)
else
  start_options=(--from data/endgames-12.owtb.zst --search-min-seeds 13 --search-max-seeds 20 --search-nodes 30000000)
fi
build() {
  "$bin" build --dir "$dir" --max-seeds "$seeds" "${start_options[@]}" --checkpoint-seconds 300 &
  pid=$!
  ( while kill -0 "$pid" 2>/dev/null; do
      echo "$(date +%s) $(awk '/^(VmRSS|RssAnon|RssFile):/ {printf "%s ", $2}' "/proc/$pid/status" 2>/dev/null)$(ls "$dir" | grep -c '^layer-.*bin$')"
      sleep 5
    done >> "$dir.rss" ) &
}
start=$(date +%s)
build
while kill -0 "$pid" 2>/dev/null; do
  if grep -q "^checkpoint $kill_layer " "$dir/manifest" 2>/dev/null; then
    sleep 5
    kill -9 "$pid" && echo "killed with -9 inside layer $kill_layer after $(( $(date +%s) - start )) s"
    break
  fi
  sleep 1
done
wait "$pid" || true
build
wait "$pid"
echo "built in $(( $(date +%s) - start )) s of wall time (kill and resume included)"
"$bin" verify --tablebase "$dir"
