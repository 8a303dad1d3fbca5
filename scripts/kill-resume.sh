#!/usr/bin/env bash
# Torture test for resumable tablebase builds: kill -9 a real build at random
# moments, many times, resume it each time, and check that the final files
# are byte-identical to an uninterrupted build of the same parameters.
#
#   scripts/kill-resume.sh [MAX_SEEDS] [KILLS] [MAX_DELAY_SECONDS]
#
# Defaults: 10 seeds, 25 kills, delays up to 3 s. Checkpoints are taken
# every 0.2 s so kills land inside layers as well as between them.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-10}
kills=${2:-25}
max_delay=${3:-3}
cargo build --release --quiet --bin endgames
bin=target/release/endgames
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "uninterrupted build of ${seeds} seeds..."
"$bin" build --dir "$work/straight" --max-seeds "$seeds" --quiet > /dev/null

done_kills=0
resumes=0
while [ "$done_kills" -lt "$kills" ]; do
  "$bin" build --dir "$work/killed" --max-seeds "$seeds" --checkpoint-seconds 0.2 \
    > /dev/null 2> "$work/log" &
  pid=$!
  delay=$(awk -v r="$RANDOM" -v m="$max_delay" 'BEGIN { printf "%.3f", 0.05 + r / 32768 * m }')
  sleep "$delay"
  if kill -9 "$pid" 2> /dev/null; then
    wait "$pid" 2> /dev/null || true
    done_kills=$((done_kills + 1))
    grep -q "resuming from checkpoint" "$work/log" && resumes=$((resumes + 1))
    echo "kill $done_kills after ${delay}s"
  else
    wait "$pid" || { cat "$work/log"; exit 1; }
    echo "the build finished before kill $((done_kills + 1)); starting over"
    rm -rf "$work/killed"
  fi
done
"$bin" build --dir "$work/killed" --max-seeds "$seeds" --quiet > /dev/null

status=0
for f in tablebase.owtb tablebase.owtb.zst endgames-2.0.bin; do
  if cmp -s "$work/straight/$f" "$work/killed/$f"; then
    echo "identical: $f"
  else
    echo "DIFFERENT: $f"; status=1
  fi
done
echo "$done_kills kills, $resumes runs resumed inside a layer"
exit $status
