#!/bin/sh
# Our search against the engine's 2014 search on the same benchmark, in one
# session, runs alternated so the machine's load falls on both alike.
#
#   scripts/engine-bench.sh ENGINE_SRC [RUNS]
#
# ENGINE_SRC: the engine's first commit (joansalasoler/oware 330964d, 2014)
# checked out; its res/benchmark.suite is tests/reference/bench-games.txt.
# Its own benchmark class is run unchanged: `Benchmark -depth 13` (32 MB
# table, cleared per game; the depth rounds up to 14 and its horizon is 15
# plies). Ours: `bench` (depth 13, 16 MiB, cleared per position). Prints
# each run's nodes, seconds and nodes per second.
set -eu
SRC=${1:?usage: engine-bench.sh ENGINE_SRC [RUNS]}
RUNS=${2:-3}
WORK=${WORK:-target/engine-2014}
mkdir -p "$WORK/classes"
# The engine needs only the JDK; its training tools need Berkeley DB.
find "$SRC/src" -name '*.java' | grep -v -e BGraph -e BNode -e Trainer -e Solver -e DStack > "$WORK/sources"
javac -nowarn -d "$WORK/classes" @"$WORK/sources"
cargo build --release --quiet --bin bench
i=1
while [ "$i" -le "$RUNS" ]; do
  echo "== run $i, load $(cut -d' ' -f1 /proc/loadavg)"
  java -cp "$WORK/classes" com.joansala.tools.Benchmark -depth 13 "$SRC/res/benchmark.suite" \
    | sed -n '/^Results/,$p'
  ./target/release/bench | tail -2
  i=$((i + 1))
done
