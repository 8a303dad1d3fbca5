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
# Resuming: after each match the script records, beside its games file
# (GAMES-NODES-OPPONENT.played), the match's settings with a checksum of
# every file it read (a book directory by its manifest) and the table's
# row. With RESUME=1 a match whose games file and record exist, with the
# same settings and files, is not played again: its recorded row is used.
# So a set of matches too long for one sitting can be stopped (between
# matches) and run again. The record does not know the search: reuse
# games only while the search gives what it gave when they were played
# (with node limits a match is reproducible to the byte; tests/book.rs's
# `shipped_books_hold_what_the_search_gives_today` guards the search).
#
# MATCH_ARGS: more options for every match (tests/cli.rs passes
# "--opening-plies 2": the openings' depth-10 searches then take
# milliseconds instead of two seconds a match).
#
# (RULE, MATCH_ARGS and the paths are split at spaces: paths with spaces
# need a link.)
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
RESUME=${RESUME:-0}
case $RESUME in
  0 | 1) ;;
  *) echo "$0: RESUME is '$RESUME': 0 or 1" >&2; exit 2 ;;
esac
# What a file or a directory holds, as `cksum` sees it: a book or build
# directory by its manifest, which names its files and their checksums.
# A directory without one gets a mark of this run, so that its record is
# never reused.
content() {
  if [ -f "$1/manifest" ]; then
    cksum < "$1/manifest"
  elif [ -d "$1" ]; then
    echo "no manifest: run $$ at $(date +%s)"
  else
    cksum < "$1"
  fi
}
# The record's settings: the match's arguments, each that names a file or
# a directory followed by what it holds, so that one list of arguments
# both runs the match and decides whether an earlier run can stand for it.
settings_of() {
  for word in "$@"; do
    if [ -e "$word" ]; then
      printf ' %s (%s)' "$word" "$(content "$word")"
    else
      printf ' %s' "$word"
    fi
  done | sed 's/^ //'
}
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
    games=$GAMES-$nodes-$opponent.games
    record=$GAMES-$nodes-$opponent.played
    args="--openings $OPENINGS --nodes $nodes $RULE${MATCH_ARGS:+ $MATCH_ARGS} --book-a $BOOK --tablebase-a $TABLE $b_args"
    # shellcheck disable=SC2086
    settings=$(settings_of $args)
    if [ "$RESUME" = 1 ] && [ -f "$games" ] && [ -f "$record" ] &&
      [ "$(sed -n 1p "$record")" = "settings: $settings" ]; then
      echo "$0: $games was played before with these settings and files (RESUME=1)" >&2
      sed -n 2p "$record" | sed 's/^row: //' | tee -a "$OUT"
      continue
    fi
    start=$(date +%s)
    # Captured whole first, so that a failing match (or games file) stops
    # the script: sh has no pipefail.
    # shellcheck disable=SC2086
    out=$("$MATCH" $args --games "$games")
    line=$(echo "$out" | grep '^A scores')
    minutes=$(( ($(date +%s) - start + 30) / 60 ))
    row="| $nodes | $BOOK, $TABLE | $b_name | $(match_row "$line") | $minutes |"
    # The record is written whole and renamed into place after the games
    # file, so a record never speaks for games that were not written.
    printf 'settings: %s\nrow: %s\n' "$settings" "$row" > "$record.tmp"
    mv "$record.tmp" "$record"
    echo "$row" | tee -a "$OUT"
  done
done
echo "written: $OUT"
