#!/bin/sh
# The standard matches of the README: our engine with our books (opening
# book + endgame table) against the same engine without books, and against
# the same engine with the engine's own books (its 2014 opening book and
# its 2021 endgame file), at each node limit of NODES; OPENINGS distinct
# balanced openings, each played with both colours. Writes a Markdown
# table to OUT (and prints it), and each match's games to GAMES (a prefix:
# GAMES-NODES-none.games and GAMES-NODES-engine.games), which
# `match --compare` compares game by game with another book's. Node limits
# make every number reproducible.
#
#   scripts/matches.sh                       # the standard table
#   BOOK=data/book-1m NODES="100000" OPENINGS=50 scripts/matches.sh
#   BOOK=data/book-10m GAMES=target/games/book-10m NODES=1000000 scripts/matches.sh
#   cargo run --release --bin match -- --compare target/games/book-10m-1000000-none.games \
#       target/games/book-1000000-none.games
#
# MATCH is the path of a `match` binary to use instead of building one
# (target/release/match); tests/cli.rs runs the script so.
#
# (RULE and the paths are split at spaces: paths with spaces need a link.)
set -eu
. "$(dirname "$0")/match-row.sh"
BOOK=${BOOK:-data/book}
TABLE=${TABLE:-data/endgames-12.owtb.zst}
NODES=${NODES:-"100000 1000000"}
OPENINGS=${OPENINGS:-200}
RULE=${RULE:-"--margin 0 --min-count 0"}
ENGINE_BOOK=${ENGINE_BOOK:-tests/reference/aalina-2014-book.bin.zst}
ENGINE_TABLE=${ENGINE_TABLE:-tests/reference/aalina-2021-leaves.bin.zst}
OUT=${OUT:-target/matches.md}
GAMES=${GAMES:-target/games/$(basename "$BOOK")}

if [ -z "${MATCH:-}" ]; then
  cargo build --release --quiet --bin match
  MATCH=./target/release/match
fi
mkdir -p "$(dirname "$OUT")" "$(dirname "$GAMES")"
{
  echo "| nodes/move | A: our engine with | B: our engine with | A's score ± s.e. | W / D / L | book moves A / B | minutes |"
  echo "|---:|---|---|---|---|---|---:|"
} > "$OUT"
for nodes in $NODES; do
  for opponent in none engine; do
    if [ "$opponent" = none ]; then
      b_args=""
      b_name="no books"
    else
      b_args="--book-b $ENGINE_BOOK --tablebase-b $ENGINE_TABLE"
      b_name="the engine's 2014 book, 2021 endgames"
    fi
    start=$(date +%s)
    # Captured whole first, so that a failing match (or games file) stops
    # the script: sh has no pipefail.
    # shellcheck disable=SC2086
    out=$("$MATCH" --openings "$OPENINGS" --nodes "$nodes" $RULE \
      --book-a "$BOOK" --tablebase-a "$TABLE" $b_args --games "$GAMES-$nodes-$opponent.games")
    line=$(echo "$out" | grep '^A scores')
    minutes=$(( ($(date +%s) - start + 30) / 60 ))
    row=$(match_row "$line")
    echo "| $nodes | $BOOK, $TABLE | $b_name | $row | $minutes |" | tee -a "$OUT"
  done
done
echo "written: $OUT"
