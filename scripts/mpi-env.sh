# Sourced by the MPI measurement scripts (from the repository's top): builds
# the one-process and the MPI binaries, `$plain` and `$mpi`, makes a scratch
# directory `$work` removed on exit, and sets Open MPI up for several ranks
# on one machine. Needs Open MPI (see scripts/mpi-check.sh).
cargo build --quiet --release --bin endgames
cargo build --quiet --release -p oware-mpi --bin endgames-mpi
plain=target/release/endgames
mpi=target/release/endgames-mpi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Open MPI refuses root unless told.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Ranks waiting in a collective poll at full speed unless told to yield:
# with more than one rank on a machine, the waiting ranks would take the
# cores the working rank's threads need (MPI_YIELD=0 measures that).
export OMPI_MCA_mpi_yield_when_idle=${MPI_YIELD:-1}
