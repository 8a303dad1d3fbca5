#!/usr/bin/env bash
# The distributed build over MPI gives the one-process build's files, to
# the byte: builds every layer up to MPI_CHECK_SEEDS (default 8) once in
# one process and once with `mpirun -np K` for K = 1, 2 and 4 (the ranks
# share this machine's cores), and compares the finished files. Part of
# `make test`; needs Open MPI and libclang (Debian: openmpi-bin
# libopenmpi-dev libclang-dev) and pkill (procps), which .ci/run installs
# (skipped, saying so, where they are missing, unless MPI_CHECK=required).
set -euo pipefail
cd "$(dirname "$0")/.."
# Layer 8 is the last by default: layers 7 and 8 hold components of more
# than 8,192 positions, whose threshold games the ranks play together, and
# the kills below land in them with checkpoints in parts; every MPI
# operation the build uses (the rounds' exchanges, the games' messages,
# agreements, checkpoints in parts, the gather of small parts to rank 0)
# runs. The split of a part too large for Pearce's algorithm across ranks
# starts at layer 9: the integration tests check it on threads
# (tests/distributed_build.rs), over the same exchange the rounds use
# here. (To 9: about 20 s of running instead of 13 on 2 cores.)
seeds=${MPI_CHECK_SEEDS:-8}
# The threshold search stops at layer 6 (MPI_CHECK_SEARCH), one short of
# the default: layer 7's search is most of a ≤ 9 build's time, paid by
# each of the check's ten builds (and under mpirun by ranks that spin on
# 2 shared cores while rank 0 searches). Layers 2 to 6 are still searched
# (gathered to rank 0), 7 and 8 still hold the giant components the ranks
# play together, and every build has the same parameters as the
# one-process build it is compared with.
search="--search-max-seeds ${MPI_CHECK_SEARCH:-6}"
cargo=${CARGO:-cargo}

# Without Open MPI (or libclang, which the `mpi` crate's bindings need)
# the check is skipped, with a line that says so and what to install, so
# that `make test` passes on a machine with Rust alone; MPI_CHECK=required
# (.ci/run) makes a missing tool an error instead.
missing=""
for tool in mpirun mpicc pkill; do
  command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if ! ls /usr/lib/llvm-*/lib/libclang*.so* /usr/lib/*/libclang*.so* >/dev/null 2>&1 && [ -z "${LIBCLANG_PATH:-}" ]; then
  missing="$missing libclang"
fi
if [ -n "$missing" ]; then
  message="the distributed build's check needs${missing} (Debian: apt-get install openmpi-bin libopenmpi-dev libclang-dev procps)"
  if [ "${MPI_CHECK:-}" = required ]; then
    echo "mpi-check: error: $message" >&2
    exit 1
  fi
  echo "mpi-check: SKIPPED: $message" >&2
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Both binaries from the one target directory that `make test` compiles
# into: `endgames` (built by the tests) and `endgames-mpi` (mpi/, the same
# source with the `mpi` feature, over the library as already compiled).
plain="$work/endgames"
with_mpi="$work/endgames-mpi"
$cargo build --quiet --profile ci --bin endgames
cp target/ci/endgames "$plain"
$cargo build --quiet --profile ci -p oware-mpi --bin endgames-mpi
cp target/ci/endgames-mpi "$with_mpi"
# Open MPI refuses root unless told, and by default more ranks than cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$plain" build --dir "$work/alone" --max-seeds "$seeds" $search --quiet >/dev/null
status=0
for ranks in 1 2 4; do
  dir="$work/np$ranks"
  mpirun --oversubscribe --bind-to none -np "$ranks" "$with_mpi" build --dir "$dir" --max-seeds "$seeds" $search --quiet >/dev/null
  # Once more with every message cut into pieces of 1,000 bytes (a real
  # build cuts them at 1 GiB / ranks), and the layers gathered to rank 0
  # for their cycle phases: the same files again.
  if [ "$ranks" = 4 ]; then
    OWARE_MPI_PIECE_BYTES=1000 mpirun --oversubscribe --bind-to none -np 4 "$with_mpi" build --dir "$work/pieces" \
      --max-seeds "$seeds" $search --gather-layers --quiet >/dev/null
    cmp -s "$work/alone/tablebase.owtb" "$work/pieces/tablebase.owtb" \
      || { echo "mpi-check: messages in pieces give other files" >&2; status=1; }
  fi
  for file in tablebase.owtb tablebase.owtb.zst endgames-2.0.bin; do
    if ! cmp -s "$work/alone/$file" "$dir/$file"; then
      echo "mpi-check: $file differs with $ranks ranks" >&2
      status=1
    fi
  done
  [ "$status" = 0 ] && echo "mpi-check: -np $ranks: the files of the one-process build, layers 0 to $seeds"
done

# Finished layers in a manifest (0 when there is none yet: grep -c prints
# 0 and fails when nothing matches, and prints nothing without a file).
layers_in() { local count; count=$(grep -c '^layer ' "$1/manifest" 2>/dev/null || true); echo "${count:-0}"; }
# The checkpoint the manifest in "$1" names, as "layer sequence", if any.
named() { awk '$1 == "checkpoint" { print $2, $3 }' "$1/manifest" 2>/dev/null; }
# Whether checkpoint "$2" (layer), "$3" (sequence) in "$1" has a part of
# rank "$4".
has_part() { [ -n "$2" ] && [ -e "$1/$(printf 'checkpoint-%02d-%06d-r%04d.zst' "$2" "$3" "$4")" ]; }
# Kills every rank of the job `$2` building in `$1` at once, as a crash
# would (mpirun, told to stop, lets its ranks run on for a while).
crash() {
  pkill -KILL -f -- "^$with_mpi build --dir $1 " 2>/dev/null || true
  kill -TERM "$2" 2>/dev/null || true
  wait "$2" 2>/dev/null || true
}
# Starts a job of "$2" ranks building in "$1" with checkpoints every 0.05
# s (and the options after), and kills it once the manifest names a
# checkpoint of one of its last two layers with a part of rank "$3"; says
# "layer sequence" of that checkpoint, or nothing if the job ended first.
kill_with_parts() {
  local dir=$1 ranks=$2 rank=$3 job
  shift 3
  mpirun --oversubscribe --bind-to none -np "$ranks" "$with_mpi" build --dir "$dir" --max-seeds "$seeds" $search --quiet \
    --checkpoint-seconds 0.05 "$@" >/dev/null 2>&1 &
  job=$!
  # Watched until the job ends, or for at most 10 minutes of wall time:
  # a bound in polls (1,500 of them) once ended the watch on a loaded
  # machine (3 ranks that spin while they wait, on 2 shared cores) with
  # no checkpoint of the last layers, most likely before they began.
  local deadline=$(($(date +%s) + 600))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    # shellcheck disable=SC2046
    set -- $(named "$dir")
    if [ -n "${1:-}" ] && [ "$1" -ge $((seeds - 1)) ] && has_part "$dir" "$1" "$2" "$rank"; then
      break
    fi
    kill -0 "$job" 2>/dev/null || break
    sleep 0.02
  done
  crash "$dir" "$job"
  # shellcheck disable=SC2046
  set -- $(named "$dir")
  if [ -n "${1:-}" ] && has_part "$dir" "$1" "$2" "$rank"; then echo "$1 $2"; fi
}

# Layers kept spread (by default, those without a search: here 7 and up), on 3
# ranks, the job killed (every rank at once, as a crash would) once it
# has a checkpoint of one of its last two layers, in which each rank
# wrote its part, then resumed on 3 ranks, each from its own part, and
# (a copy) on 2 ranks, each from the parts that cover its range: the same
# files.
kept="$work/kept"
# shellcheck disable=SC2046
set -- $(kill_with_parts "$kept" 3 2)
finished=$(layers_in "$kept")
cp -r "$kept" "$work/kept-on-2"
for ranks in 3 2; do
  dir=$kept
  [ "$ranks" = 2 ] && dir="$work/kept-on-2"
  mpirun --oversubscribe --bind-to none -np "$ranks" "$with_mpi" build --dir "$dir" --max-seeds "$seeds" $search \
    2>"$work/kept-$ranks.log" >/dev/null
  from="its part"
  [ "$ranks" = 2 ] && from="the parts of 3 ranks that cover its range"
  resumed=$(grep -c "each of $ranks ranks from $from" "$work/kept-$ranks.log" || true)
  if [ -z "${1:-}" ]; then
    echo "mpi-check: the job with layers kept spread was not killed with a checkpoint ($finished layers finished)" >&2
    status=1
  elif cmp -s "$work/alone/tablebase.owtb" "$dir/tablebase.owtb" && [ "$resumed" = 1 ]; then
    echo "mpi-check: -np 3 with layers kept spread, killed inside layer $1 with a checkpoint in 3 parts, resumed on $ranks ranks each from $from: the files of the one-process build"
  else
    echo "mpi-check: layers kept spread, resumed on $ranks ranks, give other files (or did not resume from $from: $resumed)" >&2
    status=1
  fi
done

# A job whose layers are gathered to rank 0 (`--gather-layers`), killed
# inside one of its last two layers once rank 0 has a checkpoint of it
# taken inside the threshold games the ranks play together (such a
# checkpoint is in parts, one written by each rank), resumed with another
# number of ranks (and the layers after it kept spread): the same files.
killed="$work/killed"
# shellcheck disable=SC2046
set -- $(kill_with_parts "$killed" 2 1 --gather-layers)
finished=$(layers_in "$killed")
if [ -z "${1:-}" ]; then
  echo "mpi-check: the job was not killed inside a layer with a checkpoint in parts ($finished layers finished)" >&2
  status=1
fi
inside=${1:-none}
mpirun --oversubscribe --bind-to none -np 4 "$with_mpi" build --dir "$killed" --max-seeds "$seeds" $search --quiet >/dev/null
if cmp -s "$work/alone/tablebase.owtb" "$killed/tablebase.owtb"; then
  echo "mpi-check: killed inside layer $inside with a checkpoint in parts ($finished layers finished), resumed with 4 ranks: the same files"
else
  echo "mpi-check: a killed and resumed job gives other files" >&2
  status=1
fi
exit $status
