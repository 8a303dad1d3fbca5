#!/bin/bash
# Two builds of the `search` binary timed against each other on the book's
# leaf workload: four opening positions searched to NODES nodes each (10
# million, the 10-million-node book's leaf budget) with the shipped ≤ 12
# table and the default 16 MiB transposition table, one thread. The two
# binaries alternate for ROUNDS rounds (which goes first alternates too),
# so that the machine's load falls on both alike. Prints each round's wall
# time (process start and table loading included) and the ratio of the
# mean times, and fails unless both print the same results: everything
# `search` prints but the time (best move, score, principal variation,
# depth, node count, table and repetition counters).
#
#   scripts/search-ab.sh OLD_SEARCH NEW_SEARCH [ROUNDS] [NODES]
#
# Build each binary with `cargo build --release --bin search` and copy it
# aside (target/release/search is overwritten by the next build).
set -euo pipefail
shopt -s inherit_errexit
export LC_ALL=C
[ $# -ge 2 ] || { echo "usage: $0 OLD_SEARCH NEW_SEARCH [ROUNDS] [NODES]" >&2; exit 2; }
OLD=$(realpath -- "$1") NEW=$(realpath -- "$2") ROUNDS=${3:-5} NODES=${4:-10000000}
for binary in "$OLD" "$NEW"; do
    [ -x "$binary" ] || { echo "$binary: not an executable" >&2; exit 2; }
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a positive whole number, not '$ROUNDS'" >&2; exit 2; }
[[ $NODES =~ ^[1-9][0-9]*$ ]] || { echo "NODES must be a positive whole number, not '$NODES'" >&2; exit 2; }
cd "$(dirname "$0")/.."
TABLE=data/endgames-12.owtb.zst
START=4-4-4-4-4-4-4-4-4-4-4-4-0-0-S
GAMES=("$START moves FfBdBfEd" "$START moves FfBd" "$START moves EeDdCc" "$START moves FfBdBfEdCcDa")
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# run BINARY OUTPUT: searches every game, appends what it prints without
# the time to OUTPUT, prints the wall time in seconds.
run() {
    local start end game
    start=$(date +%s.%N)
    for game in "${GAMES[@]}"; do
        "$1" --nodes "$NODES" -b "$TABLE" "$game" >"$OUT/one.txt"
        grep -q "^best move:" "$OUT/one.txt" || { echo "$1 printed no best move" >&2; exit 1; }
        sed -E 's/ in [0-9.]+ s \([0-9.]+ M nodes\/s\)//' "$OUT/one.txt" >>"$2"
    done
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
}

old_total=0 new_total=0
for round in $(seq 1 "$ROUNDS"); do
    if ((round % 2 == 1)); then
        old=$(run "$OLD" "$OUT/old-$round.txt")
        new=$(run "$NEW" "$OUT/new-$round.txt")
    else
        new=$(run "$NEW" "$OUT/new-$round.txt")
        old=$(run "$OLD" "$OUT/old-$round.txt")
    fi
    if ! cmp -s "$OUT/old-$round.txt" "$OUT/new-$round.txt"; then
        echo "round $round: the two binaries give different results:" >&2
        diff "$OUT/old-$round.txt" "$OUT/new-$round.txt" >&2 || true
        exit 1
    fi
    echo "round $round: old $old s, new $new s"
    old_total=$(awk -v t="$old_total" -v x="$old" 'BEGIN { print t + x }')
    new_total=$(awk -v t="$new_total" -v x="$new" 'BEGIN { print t + x }')
done
awk -v o="$old_total" -v n="$new_total" -v r="$ROUNDS" 'BEGIN {
    printf "mean: old %.3f s, new %.3f s; new is %.3fx as fast; same results\n", o / r, n / r, o / n
}'
