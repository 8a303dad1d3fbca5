# Sourced by the match scripts: `match_row LINE` turns the result line of
# `match` ("A scores S ± E (...) over G games: W wins, D draws, L losses;
# book moves per game: A x, B y") into the Markdown cells
# "S ± E | W / D / L | x / y", and fails with a clear message on any other
# line.
match_row() {
  case $1 in
    "A scores "*" over "*" games: "*" wins, "*" draws, "*" losses; book moves per game: A "*", B "*) ;;
    *) echo "$0: cannot read the match's result: $1" >&2; return 1 ;;
  esac
  echo "$1" | sed -E 's/^A scores ([0-9.]+) ± ([0-9.na\/]+) .* over ([0-9]+) games: ([0-9]+) wins, ([0-9]+) draws, ([0-9]+) losses; book moves per game: A ([0-9.]+), B ([0-9.]+)$/\1 ± \2 | \4 \/ \5 \/ \6 | \7 \/ \8/'
}
