#!/usr/bin/env bash
# What keeping layers spread (the default of `endgames build` under
# mpirun) saves rank 0 and costs in time: builds every layer up to SEEDS
# (default 16) in one process, then with `mpirun -np 2` gathered to rank 0
# for the cycle phases (`--gather-layers`), then with -np 2 and -np 4 kept
# spread; checks that
# the files are the same and prints a Markdown table per layer from
# FIRST_LAYER_SHOWN: the layer's seconds and rank 0's peak anonymous
# memory during the cycle phases, in MB and in bytes a position
# (`stats.json`).
# Usage: scripts/mpi-spread-measure.sh [SEEDS] [FIRST_LAYER_SHOWN]. Needs
# Open MPI (see scripts/mpi-check.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-16}
shown=${2:-$((seeds - 4))}
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh

"$plain" build --dir "$work/alone" --max-seeds "$seeds" --quiet >/dev/null
mpirun --oversubscribe --bind-to none -np 2 "$mpi" build --dir "$work/gathered2" --max-seeds "$seeds" \
  --gather-layers --quiet >/dev/null
for ranks in 2 4; do
  mpirun --oversubscribe --bind-to none -np "$ranks" "$mpi" build --dir "$work/kept$ranks" --max-seeds "$seeds" \
    --quiet >/dev/null
done
for run in gathered2 kept2 kept4; do
  for file in tablebase.owtb endgames-2.0.bin; do
    cmp -s "$work/alone/$file" "$work/$run/$file" || { echo "$file differs in $run" >&2; exit 1; }
  done
done

python3 - "$work" "$seeds" "$shown" <<'PY'
import json, sys
work, seeds, shown = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs = ["alone", "gathered2", "kept2", "kept4"]
stats = {r: json.load(open(f"{work}/{r}/stats.json"))["layers"] for r in runs}
print("| layer | positions | " + " | ".join(f"{r}: s, rank 0 MB (B/pos)" for r in runs) + " |")
print("|---|---|" + "---|" * len(runs))
for n in range(shown, seeds + 1):
    cells = []
    for r in runs:
        layer = stats[r][n]
        peak = layer['peak_bytes_per_position'] * layer['positions'] / 1e6
        cells.append(f"{layer['seconds']['total']:.2f}, {peak:.0f} ({layer['peak_bytes_per_position']:.1f})")
    print(f"| {n} | {stats['alone'][n]['positions']:,} | " + " | ".join(cells) + " |")
PY
