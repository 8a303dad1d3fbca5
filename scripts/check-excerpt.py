#!/usr/bin/env python3
"""A second reader of tablebase excerpts (`endgames excerpt`), written from
the format's description (docs/tablebase-format.md, "Excerpts") and the
rules (docs/rules.md) alone, sharing no code with the crate: it checks the
checksum, plays every sampled position's moves by its own rules and checks
each sampled entry against its children one ply deep.

    scripts/check-excerpt.py FILE...

Prints one line per file and exits 1 if any entry fails (2 if a file is
not an excerpt)."""

import sys

M = (1 << 64) - 1
P1, P2, P3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9


def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M


def lane_round(a, w):
    return rotl((a + w * P2) & M, 31) * P1 & M


def checksum(data):
    lanes = [(P1 + P2) & M, P2, 0, (-P1) & M]
    whole = len(data) // 32 * 32
    for at in range(0, whole, 32):
        for i in range(4):
            word = int.from_bytes(data[at + 8 * i:at + 8 * i + 8], "little")
            lanes[i] = lane_round(lanes[i], word)
    h = len(data) * P3 & M
    for lane in lanes:
        h = ((h ^ lane_round(0, lane)) * P1 + P3) & M
    for byte in data[whole:]:
        h = rotl(h ^ (byte * P3 & M), 11) * P1 & M
    h = (h ^ (h >> 33)) * P2 & M
    return h ^ (h >> 29)


def play(pits, k):
    """Sows pit k (0-5, the mover's) of `pits` (mover's row first): returns
    (captured, the board seen from the opponent)."""
    board = list(pits)
    seeds, board[k], at = board[k], 0, k
    while seeds:
        at = (at + 1) % 12
        if at != k:
            board[at] += 1
            seeds -= 1
    taken, last = [], at
    while 6 <= last and board[last] in (2, 3):
        taken.append(last)
        last -= 1
    if sum(board[i] for i in taken) == sum(board[6:]):
        taken = []  # a grand slam captures nothing
    captured = sum(board[i] for i in taken)
    for i in taken:
        board[i] = 0
    return captured, board[6:] + board[:6]


def legal_moves(pits):
    feed = sum(pits[6:]) == 0
    return [k for k in range(6) if pits[k] > 0 and (not feed or pits[k] >= 6 - k)]


def check_file(path):
    data = open(path, "rb").read()
    body_end = data.rstrip(b"\n").rfind(b"\n") + 1
    body, last = data[:body_end], data[body_end:].decode().strip()
    if not last.startswith("checksum ") or int(last.split()[1], 16) != checksum(body):
        raise ValueError("the checksum does not match")
    lines = body.decode().split("\n")[:-1]
    if lines[0] != "oware-excerpt 1":
        raise ValueError("not an excerpt of version 1")
    n = int(lines[1].split()[5])
    samples = []
    for line in lines[2:]:
        words = line.split()
        pits = [int(p) for p in words[-6].split("-")]
        entry = [int(w) for w in words[-5:-2]] + words[-2:]
        if words[0] == "position":
            samples.append((pits, entry, []))
        else:
            samples[-1][2].append((int(words[1]), int(words[2]), pits, entry))
    failures, cycles = [], 0
    for pits, (lower, value, upper, proof, cycle), children in samples:
        fail = lambda what: failures.append(f"{'-'.join(map(str, pits))}: {what}")
        moves = legal_moves(pits)
        played = [(k,) + play(pits, k) for k in moves]
        if [(k, c, b) for k, c, b in played] != [(k, c, b) for k, c, b, _ in children]:
            fail("the moves listed are not the rules'")
            continue
        if not lower <= value <= upper <= n or (proof == "open") != (lower < upper):
            fail("a malformed entry")
            continue
        if not moves:
            if (lower, upper, cycle) != (sum(pits[:6]),) * 2 + ("no-cycle",):
                fail("no legal move: the entry must be exactly its own row")
            continue
        best_lower = max(n - e[2] for _, _, _, e in children)
        best_upper = max(n - e[0] for _, _, _, e in children)
        exits = [n - e[2] for _, c, _, e in children if c > 0 or e[4] == "no-cycle"]
        if cycle == "no-cycle":
            if (lower, upper) != (best_lower, best_upper) or proof in ("bounds", "search"):
                fail(f"{lower}..{upper} {proof}, its children give {best_lower}..{best_upper}")
        else:
            cycles += 1
            if exits and upper < max(exits):
                fail(f"upper bound {upper} below an exit worth {max(exits)}")
            if not any(c == 0 and e[4] == "cycle" for _, c, _, e in children):
                fail("on a cycle, but no quiet move leads to a position on a cycle")
    return len(samples), cycles, failures


def main():
    status = 0
    for path in sys.argv[1:]:
        try:
            count, cycles, failures = check_file(path)
        except (OSError, ValueError, IndexError, UnicodeDecodeError) as error:
            print(f"{path}: not a valid excerpt: {error}")
            status = max(status, 2)
            continue
        print(f"{path}: {count} positions ({cycles} on cycles), {len(failures)} failures")
        for failure in failures[:10]:
            print(f"  {failure}")
        if failures:
            status = max(status, 1)
    return status


if __name__ == "__main__":
    sys.exit(main())
