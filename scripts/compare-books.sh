#!/bin/sh
# Two opening books compared game by game: each plays the standard matches
# of scripts/matches.sh (against no books and against the engine's books,
# at each node limit of NODES, from the same openings), then `match
# --compare` gives, per match, the first book's score minus the second's
# with the standard error of the per-game differences clustered by
# opening. Both books meet the same lopsided openings, so their share of
# each score cancels: this answers "which book" (the budget of its
# leaves, its size) far more precisely than the two scores side by side.
# Writes each book's table (WORK/matches-NAME.md), their games
# (WORK/games/NAME-NODES-OPPONENT.games) and the comparison to OUT
# (WORK/compare-books.md); WORK is target unless set.
#
#   FIRST=data/book-10m SECOND=data/book NODES="300000 1000000" scripts/compare-books.sh
#
# With RESUME=1 (scripts/matches.sh) a match already played with the same
# settings and files is not played again, so a comparison can be stopped
# between matches and run again, and a book's games can be played first
# and kept (data/book-compare holds the shipped book's).
#
# OPENINGS, TABLE, RULE, MATCH_ARGS, ENGINE_BOOK, ENGINE_TABLE and RESUME pass
# through to scripts/matches.sh, and so does MATCH (the path of a `match` binary to use
# instead of building one). The books' directory or file names must differ.
set -eu
FIRST=${FIRST:?"FIRST: the first book (a directory or an engine file)"}
SECOND=${SECOND:?"SECOND: the second book"}
NODES=${NODES:-"100000 1000000"}
first_name=$(basename "$FIRST")
second_name=$(basename "$SECOND")
if [ "$first_name" = "$second_name" ]; then
  echo "$0: the books' names are both '$first_name': their games files would be one" >&2
  exit 1
fi
WORK=${WORK:-target}
OUT=${OUT:-$WORK/compare-books.md}
if [ -z "${MATCH:-}" ]; then
  cargo build --release --quiet --bin match
  MATCH=./target/release/match
fi
export NODES MATCH
here=$(dirname "$0")
BOOK=$FIRST GAMES=$WORK/games/$first_name OUT=$WORK/matches-$first_name.md "$here/matches.sh"
BOOK=$SECOND GAMES=$WORK/games/$second_name OUT=$WORK/matches-$second_name.md "$here/matches.sh"
mkdir -p "$(dirname "$OUT")"
{
  echo "| nodes/move | B: our engine with | $first_name minus $second_name ± s.e. | games | identical games |"
  echo "|---:|---|---|---:|---:|"
} > "$OUT"
for nodes in $NODES; do
  for opponent in none engine; do
    if [ "$opponent" = none ]; then b_name="no books"; else b_name="the engine's 2014 book, 2021 endgames"; fi
    line=$("$MATCH" --compare "$WORK/games/$first_name-$nodes-$opponent.games" \
      "$WORK/games/$second_name-$nodes-$opponent.games")
    case $line in
      *" minus "*" (paired by game, "*" over "*" games, "*" of them identical") ;;
      *) echo "$0: cannot read the comparison: $line" >&2; exit 1 ;;
    esac
    cells=$(echo "$line" | sed -E 's/^.*: ([-+0-9.]+) ± ([0-9.na\/]+) \(paired.* over ([0-9]+) games, ([0-9]+) of them identical$/\1 ± \2 | \3 | \4/')
    echo "| $nodes | $b_name | $cells |" | tee -a "$OUT"
  done
done
echo "written: $OUT"
