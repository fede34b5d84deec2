#!/usr/bin/env python3
"""Writes the generated part of packages.toml from a registry snapshot.

    python3 packages_snapshot.py PYPI_TSV NPM_TSV > generated.toml

PYPI_TSV: name, version, month, rank among the 15,000 most downloaded
PyPI projects, summary. NPM_TSV: name, version, downloads a month,
summary. Prints `pypi_top` / `npm_top` (the most downloaded names) and
`pypi_known` / `npm_known`: the established names (ranked on PyPI; 10,000
downloads a month or more on npm) one typo from a popular name, which the
audit must never call a look-alike. The typo shapes are those of
packages.rs (`typo_of`): keep the two in step.
"""

import csv
import sys
import tomllib
from pathlib import Path

TOP = 1000
NPM_ESTABLISHED = 10_000
MIN_LEN = 5
ROWS = ["1234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm"]
CONFUSABLE = [("l", "1"), ("l", "i"), ("i", "1"), ("o", "0")]


def canonical(name):
    return name.lower().replace("_", "-").replace(".", "-")


def bare(name):
    return canonical(name).replace("-", "")


def neighbours(c):
    out = set()
    for r, row in enumerate(ROWS):
        col = row.find(c)
        if col < 0:
            continue
        for rr, cc in [(r, col - 1), (r, col + 1), (r + 1, col - 1), (r + 1, col),
                       (r - 1, col), (r - 1, col + 1)]:
            if 0 <= rr < len(ROWS) and 0 <= cc < len(ROWS[rr]):
                out.add(ROWS[rr][cc])
    for a, b in CONFUSABLE:
        if c == a:
            out.add(b)
        if c == b:
            out.add(a)
    return out


def typos(p):
    """Every bare name one typo from bare name `p`."""
    out = {p}
    for i in range(len(p)):
        out.add(p[:i] + p[i + 1:])
        out.add(p[:i] + p[i] + p[i:])
        if i + 1 < len(p):
            out.add(p[:i] + p[i + 1] + p[i] + p[i + 2:])
        for c in neighbours(p[i]):
            out.add(p[:i] + c + p[i + 1:])
    out.add(p + "s")
    return out


def read(path, established, key):
    with open(path, newline="", encoding="utf-8") as f:
        rows = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(rows)
        return [(r[0], key(r)) for r in rows if len(r) > 3 and established(r)]


def lists(names, hand):
    top = [n for n, _ in names[:TOP]]
    popular = {canonical(n) for n in hand + top}
    by_bare = {}
    for n, _ in names:
        by_bare.setdefault(bare(n), set()).add(canonical(n))
    known = set()
    for p in popular:
        if len(p) < MIN_LEN:
            continue
        for t in typos(bare(p)):
            known |= {n for n in by_bare.get(t, ()) if n != p and n not in popular}
    return top, sorted(known)


def array(name, items):
    lines, line = [], " "
    for item in items:
        word = f' "{item}",'
        if len(line) + len(word) > 100:
            lines.append(line)
            line = " "
        line += word
    lines.append(line)
    return f"{name} = [\n" + "\n".join(lines) + "\n]\n\n"


def main():
    here = Path(__file__).with_name("packages.toml")
    text = here.read_text(encoding="utf-8")
    hand = tomllib.loads(text.split("# ---- generated")[0])
    pypi = read(sys.argv[1], lambda r: r[3].strip() != "", lambda r: int(r[3]))
    pypi.sort(key=lambda x: x[1])
    npm = read(sys.argv[2], lambda r: r[2].isdigit() and int(r[2]) >= NPM_ESTABLISHED,
               lambda r: -int(r[2]))
    npm.sort(key=lambda x: x[1])
    for reg, names in [("pypi", pypi), ("npm", npm)]:
        top, known = lists(names, hand[reg])
        sys.stdout.write(array(f"{reg}_top", top))
        sys.stdout.write(array(f"{reg}_known", known))


if __name__ == "__main__":
    main()
