#!/usr/bin/env bash
# What spreading a build over MPI ranks costs on this machine: builds every
# layer up to SEEDS (default 16) in one process, then with `mpirun -np 2`
# and `-np 4` (all ranks on this machine) with every layer gathered to
# rank 0 for its cycle phases (`--gather-layers`; what layers kept spread
# cost is scripts/mpi-spread-measure.sh's), checks that the files are the
# same, and prints a Markdown table: per layer and rank count, the
# retrograde rounds and the component search's exchanges, the messages and
# bytes each exchanged (all ranks), the seconds of both phases spread over
# the ranks and of the gathering to rank 0, and the layer's whole time;
# then a second table for the cycle phases: the exchanges, messages and
# bytes of the large components' threshold games across the ranks, and
# the seconds of the bounds and of the cycle phases. Usage:
# scripts/mpi-measure.sh [SEEDS] [FIRST_LAYER_SHOWN]. Needs Open MPI (see
# scripts/mpi-check.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-16}
shown=${2:-$((seeds - 4))}
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh

"$plain" build --dir "$work/np1" --max-seeds "$seeds" --quiet >/dev/null
for ranks in 2 4; do
  mpirun --oversubscribe --bind-to none -np "$ranks" "$mpi" build --dir "$work/np$ranks" \
    --max-seeds "$seeds" --gather-layers 2>"$work/log$ranks" >/dev/null
  for file in tablebase.owtb endgames-2.0.bin; do
    cmp -s "$work/np1/$file" "$work/np$ranks/$file" || { echo "$file differs with $ranks ranks" >&2; exit 1; }
  done
done

python3 - "$work" "$seeds" "$shown" <<'PY'
import json, re, sys
work, seeds, shown = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
line = re.compile(r"layer (\d+) across (\d+) ranks: retrograde ([\d.]+) s, (\d+) rounds, (\d+) messages, (\d+) bytes; "
                  r"components ([\d.]+) s, (\d+) exchanges, (\d+) messages, (\d+) bytes; "
                  r"gathered to rank 0 in ([\d.]+) s \((\d+) bytes\)")
stats = {k: json.load(open(f"{work}/np{k}/stats.json"))["layers"] for k in (1, 2, 4)}
games = re.compile(r"layer (\d+) across (\d+) ranks: threshold games (\d+) exchanges, (\d+) messages, (\d+) bytes")
spread, played = {}, {}
for k in (2, 4):
    for text in open(f"{work}/log{k}"):
        m = line.search(text)
        if m:
            spread[(int(m[1]), k)] = m
        m = games.search(text)
        if m:
            played[(int(m[1]), k)] = m
print("| layer | positions | ranks | retrograde: rounds, messages, bytes | components: exchanges, messages, bytes "
      "| bytes a position | retrograde s | components s | gather s | layer s |")
print("|---|---|---|---|---|---|---|---|---|---|")
for n in range(shown, seeds + 1):
    one = stats[1][n]
    print(f"| {n} | {one['positions']:,} | 1 | {one['retrograde_rounds']}, 0, 0 | 0, 0, 0 | 0 | "
          f"{one['seconds']['retrograde']:.2f} | {one['seconds']['scc']:.2f} | – | {one['seconds']['total']:.2f} |")
    for k in (2, 4):
        m = spread[(n, k)]
        sent = int(m[6]) + int(m[10])
        print(f"| {n} | {one['positions']:,} | {k} | {m[4]}, {int(m[5]):,}, {int(m[6]):,} | "
              f"{m[8]}, {int(m[9]):,}, {int(m[10]):,} | {sent / one['positions']:.2f} | {float(m[3]):.2f} | "
              f"{float(m[7]):.2f} | {float(m[11]):.2f} | {stats[k][n]['seconds']['total']:.2f} |")
print()
print("| layer | ranks | threshold games: exchanges, messages, bytes | bytes a position | bounds s | cycle phases s | layer s |")
print("|---|---|---|---|---|---|---|")
for n in range(shown, seeds + 1):
    size = stats[1][n]['positions']
    for k in (1, 2, 4):
        s = stats[k][n]['seconds']
        cycles = s['total'] - s['retrograde'] - s['scc']
        if k == 1:
            traffic, per = "0, 0, 0", 0
        else:
            m = played[(n, k)]
            traffic, per = f"{int(m[3]):,}, {int(m[4]):,}, {int(m[5]):,}", int(m[5]) / size
        print(f"| {n} | {k} | {traffic} | {per:.2f} | {s['bounds']:.2f} | {cycles:.2f} | {s['total']:.2f} |")
PY
