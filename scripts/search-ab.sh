#!/bin/bash
# Two builds of the `search` binary timed against each other on the book's
# leaf workload: four opening positions searched to NODES nodes each (10
# million, the 10-million-node book's leaf budget) with the shipped ≤ 12
# table and the default 16 MiB transposition table, one thread. The two
# binaries alternate for ROUNDS rounds, so that the machine's load falls on
# both alike; the script prints each round's wall time and the mean ratio,
# and checks that both give the same results (everything but the speed).
#
#   scripts/search-ab.sh OLD_SEARCH NEW_SEARCH [ROUNDS] [NODES]
#
# Build each binary with `cargo build --release --bin search` and copy it
# aside (target/release/search is overwritten by the next build).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OLD_SEARCH NEW_SEARCH [ROUNDS] [NODES]" >&2; exit 2; }
OLD=$1 NEW=$2 ROUNDS=${3:-5} NODES=${4:-10000000}
cd "$(dirname "$0")/.."
TABLE=data/endgames-12.owtb.zst
START=4-4-4-4-4-4-4-4-4-4-4-4-0-0-S
GAMES=("$START moves FfBdBfEd" "$START moves FfBd" "$START moves EeDdCc" "$START moves FfBdBfEdCcDa")
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
run() { # binary label round
    local start end
    start=$(date +%s.%N)
    for game in "${GAMES[@]}"; do
        "$1" --nodes "$NODES" -b "$TABLE" "$game" | grep -v "nodes/s" >> "$OUT/$2-$3.txt"
    done
    end=$(date +%s.%N)
    echo "$end - $start" | bc
}
old_total=0 new_total=0
for round in $(seq 1 "$ROUNDS"); do
    old=$(run "$OLD" old "$round")
    new=$(run "$NEW" new "$round")
    cmp -s "$OUT/old-$round.txt" "$OUT/new-$round.txt" || { echo "round $round: the two binaries disagree" >&2; exit 1; }
    printf 'round %d: old %.3f s, new %.3f s\n' "$round" "$old" "$new"
    old_total=$(echo "$old_total + $old" | bc) new_total=$(echo "$new_total + $new" | bc)
done
printf 'mean: old %.3f s, new %.3f s; new is %.3fx as fast; same results\n' \
    "$(echo "$old_total / $ROUNDS" | bc -l)" "$(echo "$new_total / $ROUNDS" | bc -l)" \
    "$(echo "$old_total / $new_total" | bc -l)"
