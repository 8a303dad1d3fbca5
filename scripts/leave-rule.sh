#!/bin/sh
# Which rule for leaving the opening book plays best (issue 12, D4): our
# engine with BOOK and the endgame table against the same engine with the
# table only (so only the opening book differs), at NODES per move, once
# per rule of RULES (separated by ';'), on the same openings. Writes a
# Markdown table to OUT (and prints it), and each rule's games to
# GAMES-N.games (N counting the rules from 1). Then compares every other
# rule with the first game by game (`match --compare`: the rule's score
# minus the first's, with the standard error of the per-game differences
# clustered by opening), which tells whether two rules differ by more than
# chance; that second table is appended to OUT.
#
# MATCH is the path of a `match` binary to use instead of building one;
# MATCH_ARGS, more options for every match (split at spaces).
#
#   scripts/leave-rule.sh
#   RULES="--min-depth 0; --min-depth 6" NODES=100000 scripts/leave-rule.sh
set -eu
. "$(dirname "$0")/match-row.sh"
BOOK=${BOOK:-data/book}
TABLE=${TABLE:-data/endgames-12.owtb.zst}
NODES=${NODES:-100000}
OPENINGS=${OPENINGS:-200}
RULES=${RULES:-"--margin 0; --margin 0 --min-depth 4; --margin 0 --min-depth 8; --margin 0 --min-count 64; --margin 10"}
OUT=${OUT:-target/leave-rule.md}
GAMES=${GAMES:-target/games/leave-rule}

# The rules, one per line, blanks trimmed and empty ones dropped.
rules=$(echo "$RULES" | tr ';' '\n' | sed -E 's/^[[:space:]]+|[[:space:]]+$//g' | grep -v '^$' || true)
if [ -z "$rules" ]; then
  echo "$0: RULES holds no rule" >&2
  exit 2
fi
if [ -z "${MATCH:-}" ]; then
  cargo build --release --quiet --bin match
  MATCH=./target/release/match
fi
mkdir -p "$(dirname "$OUT")" "$(dirname "$GAMES")"
n=0
{
  echo "| rule | A's score ± s.e. | W / D / L | book moves per game A / B | minutes |"
  echo "|---|---|---|---|---:|"
} > "$OUT"
echo "$rules" | while read -r rule; do
  n=$((n + 1))
  start=$(date +%s)
  # Captured whole first, so that a failing match (or games file) stops
  # the script: sh has no pipefail.
  # shellcheck disable=SC2086
  out=$("$MATCH" --openings "$OPENINGS" --nodes "$NODES" $rule ${MATCH_ARGS:-} \
    --book-a "$BOOK" --tablebase-a "$TABLE" --tablebase-b "$TABLE" --games "$GAMES-$n.games")
  line=$(echo "$out" | grep '^A scores')
  minutes=$(( ($(date +%s) - start + 30) / 60 ))
  row=$(match_row "$line")
  echo "| \`$rule\` | $row | $minutes |" | tee -a "$OUT"
done
if [ "$(echo "$rules" | wc -l)" -gt 1 ]; then
  {
    echo
    echo "| rule | minus \`$(echo "$rules" | head -n 1)\` ± s.e. (paired by game) | identical games |"
    echo "|---|---|---:|"
  } >> "$OUT"
fi
n=1
echo "$rules" | tail -n +2 | while read -r rule; do
  n=$((n + 1))
  line=$("$MATCH" --compare "$GAMES-$n.games" "$GAMES-1.games")
  case $line in
    *" minus "*" (paired by game, "*" over "*" games, "*" of them identical") ;;
    *) echo "$0: cannot read the comparison: $line" >&2; exit 1 ;;
  esac
  cells=$(echo "$line" | sed -E 's/^.*: ([-+0-9.]+) ± ([0-9.na\/]+) \(paired.* over ([0-9]+) games, ([0-9]+) of them identical$/\1 ± \2 | \4 of \3/')
  echo "| \`$rule\` | $cells |" | tee -a "$OUT"
done
echo "written: $OUT"
