#!/usr/bin/env bash
# `make test` as on a machine with Rust alone: runs it with a PATH from
# which Open MPI's tools (mpirun, mpicc, mpiexec, ...) are taken out, and
# checks that it passes and that the distributed build's check said it was
# skipped. Run from the repository's top (a fresh clone measures it as a
# new user meets it).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$bin" "$log"' EXIT
# Every command on the PATH but MPI's, as links in one directory.
IFS=: read -r -a dirs <<< "$PATH"
for dir in "${dirs[@]}"; do
  [ -d "$dir" ] || continue
  for tool in "$dir"/*; do
    name=$(basename "$tool")
    case "$name" in
      mpirun | mpiexec | mpicc | mpicxx | mpic++ | mpif77 | mpif90 | mpifort | orterun | ompi_info | ompi-*) continue ;;
    esac
    [ -x "$tool" ] && [ ! -e "$bin/$name" ] && ln -s "$tool" "$bin/$name"
  done
done
if PATH="$bin" env -u MPI_CHECK make test 2>&1 | tee "$log"; then
  if grep -q "^mpi-check: SKIPPED: " "$log"; then
    echo "rust-only-check: make test passed without Open MPI, the MPI check skipped in one line"
    exit 0
  fi
  echo "rust-only-check: make test passed, but the MPI check did not say it was skipped" >&2
  exit 1
fi
echo "rust-only-check: make test failed without Open MPI" >&2
exit 1
