#!/usr/bin/env python3
"""Fit the evaluation weights by least squares (no numpy).

Reads the CSV of `cargo run --release --example eval_samples` (features of
random quiet positions and a deep search's score, engine units), skips
proven results, and fits score ~ w . features without intercept (every
feature is mover minus opponent, so the fit stays antisymmetric).

    python3 scripts/fit-eval.py scratch/samples.csv

Fits on the engine's four features and on all five, with every weight
free, and with the store weight held at 25 (the engine's unit: 25 per
seed, which the opening books rely on; the free fits land on 25 anyway). Rows alternate
between a training and a test half; the test error of the engine's 2014
weights is printed for comparison.
"""

import csv
import math
import sys

ENGINE_2014 = {"store": 25, "big": 28, "empty": -54, "small": -36, "row": 0}


def solve(a, b):
    """Solves a x = b (square, Gaussian elimination, partial pivoting)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[pivot][col]) < 1e-12:
            raise ValueError("singular system: a feature is constant or redundant")
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                for c in range(col, n + 1):
                    m[r][c] -= f * m[col][c]
    return [m[i][n] / m[i][i] for i in range(n)]


def least_squares(rows, names, target):
    """Weights minimising sum (target(row) - w . row[names])^2."""
    k = len(names)
    ata = [[0.0] * k for _ in range(k)]
    atb = [0.0] * k
    for row in rows:
        x = [row[n] for n in names]
        y = target(row)
        for i in range(k):
            atb[i] += x[i] * y
            for j in range(k):
                ata[i][j] += x[i] * x[j]
    return dict(zip(names, solve(ata, atb)))


def rmse(rows, weights):
    err = sum((r["score"] - sum(w * r[n] for n, w in weights.items())) ** 2 for r in rows)
    return math.sqrt(err / max(1, len(rows)))


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "scratch/samples.csv"
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        names = [n for n in reader.fieldnames if n not in ("score", "proven", "seeds", "state")]
        rows, proven = [], 0
        for raw in reader:
            if raw["proven"] == "1":
                proven += 1
                continue
            rows.append({k: float(raw[k]) for k in names + ["score"]})
    train, test = rows[0::2], rows[1::2]
    print(f"{len(rows)} positions ({proven} proven results skipped): "
          f"{len(train)} to fit, {len(test)} to test")
    mean = sum(r["score"] for r in test) / max(1, len(test))
    spread = math.sqrt(sum((r["score"] - mean) ** 2 for r in test) / max(1, len(test)))
    print(f"test scores: mean {mean:.1f}, standard deviation {spread:.1f}")

    free = least_squares(train, names, lambda r: r["score"])
    rest = [n for n in names if n != "store"]
    held = least_squares(train, rest, lambda r: r["score"] - 25 * r["store"])
    held["store"] = 25.0
    thesis = least_squares(train, ["store", "big", "empty", "small"], lambda r: r["score"])
    shipped = least_squares(train, ["big", "empty", "small"], lambda r: r["score"] - 25 * r["store"])
    shipped["store"] = 25.0

    fits = [
        ("engine 2014", ENGINE_2014),
        ("free, thesis features", thesis),
        ("free, all features", free),
        ("store = 25, all features", held),
        ("store = 25, thesis features", shipped),
    ]
    print(f"{'weights':>26} " + " ".join(f"{n:>7}" for n in names) + "   test RMSE")
    for label, w in fits:
        cells = " ".join(f"{w.get(n, 0):>7.1f}" for n in names)
        print(f"{label:>26} {cells}   {rmse(test, w):8.1f}")
    for label, w in (("thesis features", shipped), ("all features", held)):
        rounded = ", ".join(f"{n}: {round(w.get(n, 0))}" for n in names)
        print(f"Rust, store = 25, {label}: Weights {{ {rounded} }}")


if __name__ == "__main__":
    main()
