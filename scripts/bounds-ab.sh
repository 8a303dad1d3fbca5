#!/usr/bin/env bash
# Two builds of the `endgames` binary timed against each other on real
# layers: each builds layer N (for N = FIRST..LAST) on top of the same
# finished layers 0..N-1 of SOURCE, a build directory made by
# scripts/big-build.sh (which must hold layer LAST-1). The two binaries
# alternate for ROUNDS rounds per layer (which goes first alternates too),
# so that the machine's load falls on both alike. Prints, per run, the
# seconds of each phase the layer's own figures give (stats.json) and its
# anonymous peaks (the layer's, then each phase's, in bytes a position),
# then
# the ratio of the mean bounds seconds; fails unless both binaries write
# the same layer (the same entries, byte for byte in the records both
# write) and the same figures (every count the layer reports: all but its
# seconds and memory).
#
#   scripts/bounds-ab.sh OLD_ENDGAMES NEW_ENDGAMES SOURCE FIRST LAST [ROUNDS]
#
# Each run works in a scratch directory beside SOURCE (same file system):
# the finished layers are hard links to SOURCE's (read only, never
# rewritten: a build replaces files by rename), the manifest a copy cut
# to layer N-1, so that the binary extends it by one layer. SOURCE is not
# touched. BUILD_OPTIONS are the options SOURCE was built with (default:
# scripts/big-build.sh's, from the shipped table).
#
# Build each binary with `cargo build --release --bin endgames` and copy
# it aside (target/release/endgames is overwritten by the next build).
set -euo pipefail
shopt -s inherit_errexit
export LC_ALL=C
[ $# -ge 5 ] || { echo "usage: $0 OLD_ENDGAMES NEW_ENDGAMES SOURCE FIRST LAST [ROUNDS]" >&2; exit 2; }
OLD=$(realpath -- "$1") NEW=$(realpath -- "$2") SOURCE=$(realpath -- "$3") FIRST=$4 LAST=$5 ROUNDS=${6:-1}
for binary in "$OLD" "$NEW"; do
  [ -x "$binary" ] || { echo "$binary: not an executable" >&2; exit 2; }
done
for number in "$FIRST" "$LAST" "$ROUNDS"; do
  [[ $number =~ ^[0-9]+$ ]] || { echo "FIRST, LAST and ROUNDS must be whole numbers, not '$number'" >&2; exit 2; }
done
[ "$FIRST" -ge 1 ] && [ "$FIRST" -le "$LAST" ] && [ "$ROUNDS" -ge 1 ] \
  || { echo "need 1 <= FIRST <= LAST and ROUNDS >= 1" >&2; exit 2; }
[ -f "$SOURCE/manifest" ] || { echo "$SOURCE: no build directory (no manifest)" >&2; exit 2; }
grep -q "^layer $((LAST - 1)) " "$SOURCE/manifest" \
  || { echo "$SOURCE: layer $((LAST - 1)) is not finished" >&2; exit 2; }
cd "$(dirname "$0")/.."
read -r -a options <<<"${BUILD_OPTIONS:---from data/endgames-12.owtb.zst --search-min-seeds 13 --search-max-seeds 20 --search-nodes 30000000}"
scratch=$(mktemp -d "$SOURCE.ab-XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# run BINARY N NAME: builds layer N with BINARY in a fresh scratch
# directory $scratch/NAME; prints its phase seconds.
run() {
  local binary=$1 n=$2 dir="$scratch/$3" k
  rm -rf "$dir"
  mkdir "$dir"
  for ((k = 0; k < n; k++)); do
    ln "$SOURCE/$(printf 'layer-%02d' "$k").bin" "$SOURCE/$(printf 'layer-%02d' "$k").stats" "$dir/"
  done
  # The parameters, cut to layer N-1, then the finished layers below N.
  awk -v last=$((n - 1)) '
    $1 == "largest_layer" { print "largest_layer", last; next }
    $1 == "layer" { if ($2 <= last) print; next }
    $1 == "checkpoint" { next }
    { print }' "$SOURCE/manifest" >"$dir/manifest"
  "$binary" build --dir "$dir" --max-seeds "$n" "${options[@]}" --no-compress --quiet >/dev/null
  python3 - "$dir/stats.json" "$n" <<'EOF'
import json, sys
layer = json.load(open(sys.argv[1]))["layers"][int(sys.argv[2])]
s = layer["seconds"]
m, size = layer["peak_memory_bytes"], layer["positions"]
print(f"retro {s['retrograde']:.1f} s, scc {s['scc']:.1f} s, bounds {s['bounds']:.1f} s, total {s['total']:.1f} s, "
      f"peak {layer['peak_bytes_per_position']:.1f} B/pos "
      f"(retrograde {m['retrograde'] / size:.1f}, components {m['components'] / size:.1f}, cycles {m['cycles'] / size:.1f})")
EOF
}

# figures DIR N: the layer's counts (all but seconds and memory).
figures() {
  python3 - "$1/stats.json" "$2" <<'EOF'
import json, sys
layer = json.load(open(sys.argv[1]))["layers"][int(sys.argv[2])]
for key in ("seconds", "peak_memory_bytes", "peak_bytes_per_position"):
    layer.pop(key)
print(json.dumps(layer, sort_keys=True))
EOF
}

bounds() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["layers"][int(sys.argv[2])]["seconds"]["bounds"])' "$1/stats.json" "$2"
}

# same_entries A B: whether two layer files hold the same entries, each
# in full records (3 bytes a position) or value records (1 byte: every
# entry exact, docs/tablebase-format.md), as builders before and after the
# value records write them. Compared in value records where a full-record
# file has them (every entry exact, its cycle flag the one its proof
# implies), else byte for byte.
same_entries() {
  python3 - "$1" "$2" <<'EOF'
import sys
def canonical(data, other_length):
    if len(data) == 3 * other_length:
        value, low, high = data[0::3], data[1::3], data[2::3]
        six_bits = bytes(range(64)) * 4
        cycle = bytes(b >> 6 & 1 for b in range(256))
        implied = bytes(int(b >> 6 != 0) for b in range(256))
        proof = bytes(b >> 6 for b in range(256))
        exact = low.translate(six_bits) == high and value.translate(six_bits) == high and 3 not in value.translate(proof)
        if exact and low.translate(cycle) == value.translate(implied):
            return value
    return data
a, b = (open(path, "rb").read() for path in sys.argv[1:3])
sys.exit(0 if canonical(a, len(b)) == canonical(b, len(a)) else 1)
EOF
}

status=0
for ((n = FIRST; n <= LAST; n++)); do
  old_sum=0 new_sum=0
  for ((round = 1; round <= ROUNDS; round++)); do
    if ((round % 2 == 1)); then order="old new"; else order="new old"; fi
    for which in $order; do
      binary=$OLD
      [ "$which" = new ] && binary=$NEW
      echo "layer $n round $round $which: $(run "$binary" "$n" "$which")"
    done
    layer=$(printf 'layer-%02d.bin' "$n")
    if ! same_entries "$scratch/old/$layer" "$scratch/new/$layer"; then
      echo "layer $n: the two binaries write different layers" >&2
      status=1
    fi
    if [ "$(figures "$scratch/old" "$n")" != "$(figures "$scratch/new" "$n")" ]; then
      echo "layer $n: the two binaries report different figures" >&2
      status=1
    fi
    old_sum=$(python3 -c "print($old_sum + $(bounds "$scratch/old" "$n"))")
    new_sum=$(python3 -c "print($new_sum + $(bounds "$scratch/new" "$n"))")
  done
  python3 -c "print(f'layer $n: bounds {$old_sum / $ROUNDS:.1f} s (old) against {$new_sum / $ROUNDS:.1f} s (new): {$old_sum / $new_sum:.2f}x; the same bytes: ' + ('yes' if $status == 0 else 'NO'))"
done
exit $status
