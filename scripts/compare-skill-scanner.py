#!/usr/bin/env python3
"""Peer comparison: skillhost's skill text audit against Cisco's
cisco-ai-skill-scanner on the same evaluation set (tests/data/audit).

    python3 scripts/compare-skill-scanner.py [--markdown] [--corpus DIR]

Installs the scanner (pinned) into a venv under target/skill-scanner,
stages every sample as a skill folder there (a `name.md` sample becomes
`name/SKILL.md`; corpus skills are staged as their SKILL.md only, which is
what `skillhost eval audit` reads of them), runs the scanner with its
static, pipeline and behavioural analysers and no LLM, runs
`skillhost eval audit --json`, and prints both tools' figures side by side.

A sample counts as caught / held back when the scanner's max_severity is
HIGH or CRITICAL, and when skillhost has a high finding.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

SCANNER = "cisco-ai-skill-scanner==2.3.2"
ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "audit"
WORK = ROOT / "target" / "skill-scanner"
HELD = {"HIGH", "CRITICAL"}


def scanner_bin():
    venv = WORK / "venv"
    exe = venv / "bin" / "skill-scanner"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = str(venv / "bin" / "pip")
        subprocess.run([pip, "install", "-q", SCANNER], check=True)
    return exe


def stage_one(src, dest):
    """A skill folder copied as it is; a .md sample as dest/SKILL.md."""
    if src.is_dir():
        shutil.copytree(src, dest)
    else:
        dest.mkdir(parents=True)
        shutil.copy(src, dest / "SKILL.md")


def listed(manifest):
    for line in manifest.read_text().splitlines():
        rel = line.split("#", 1)[0].strip()
        if rel:
            yield rel


def stage(corpus, malicious, hard):
    """Stages every set; returns {staged path: (set, category)}."""
    stage_dir = WORK / "stage"
    shutil.rmtree(stage_dir, ignore_errors=True)
    where = {}
    cats = tomllib.loads(malicious.with_suffix(".toml").read_text())["sample"]
    for s in cats:
        dest = stage_dir / "malicious" / s["file"].removesuffix(".md")
        stage_one(malicious / s["file"], dest)
        where[dest] = ("malicious", s["category"])
    for name, kind in (("benign.txt", "real"), ("corpus-risky.txt", "risky")):
        for i, rel in enumerate(listed(DATA / name)):
            dest = stage_dir / kind / f"{i:04d}"
            stage_one(corpus / rel, dest)
            where[dest] = (kind, "")
    for sub in sorted(hard.iterdir()):
        dest = stage_dir / "hard" / sub.name.removesuffix(".md")
        stage_one(sub, dest)
        where[dest] = ("hard", "")
    extra = stage_dir / "real-extra"
    shutil.copytree(DATA / "benign-extra", extra)
    risky_extra = set(listed(DATA / "extra-risky.txt"))
    for skill in extra.rglob("SKILL.md"):
        name = "benign-extra/" + str(skill.parent.relative_to(extra))
        where[skill.parent] = ("risky" if name in risky_extra else "real", "")
    return stage_dir, where


def run_scanner(exe, stage_dir):
    """{skill path: max_severity} of every skill the scanner reported."""
    seen = {}
    for group in sorted(p for p in stage_dir.iterdir() if p.is_dir()):
        out = WORK / f"{group.name}.json"
        cmd = [str(exe), "scan-all", str(group), "--recursive", "--lenient",
               "--use-behavioral", "--format", "json", "--output-json", str(out)]
        subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL)
        for r in json.loads(out.read_text()).get("results", []):
            seen[Path(r["skill_path"]).resolve()] = r.get("max_severity") or ""
    return seen


def scanner_figures(where, seen):
    f = {"categories": {}, "real": [0, 0], "hard": [0, 0], "risky": [0, 0],
         "unscanned": 0}
    for path, (kind, cat) in where.items():
        sev = seen.get(path.resolve())
        if sev is None:
            f["unscanned"] += 1
        hit = sev in HELD
        slot = f["categories"].setdefault(cat, [0, 0]) if kind == "malicious" else f[kind]
        slot[0] += hit
        slot[1] += 1
    return f


def skillhost_figures(corpus, malicious, hard):
    cmd = ["cargo", "run", "-q", "-p", "skillhost", "--", "eval", "audit",
           "--json", "--corpus", str(corpus), "--malicious", str(malicious),
           "--hard-negative", str(hard)]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    r = json.loads(out.stdout)
    return {
        "categories": {c["category"]: [c["caught"], c["samples"]] for c in r["categories"]},
        "real": [r["false_positives"], r["benign"]],
        "hard": [r["hard_negative_false_positives"], r["hard_negatives"]],
        "risky": [r["risky_flagged"], r["risky"]],
        "unscanned": 0,
    }


def pct(pair):
    hit, n = pair
    return f"{hit}/{n} = {100.0 * hit / n:.1f}%" if n else "n/a"


def precision(f):
    held = f["risky"][0] + f["real"][0]
    return f"{f['risky'][0]}/{held} = {100.0 * f['risky'][0] / held:.1f}%" if held else "n/a"


def rows(sh, cs):
    out = []
    for cat in sh["categories"]:
        out.append((f"recall: {cat}", pct(sh["categories"][cat]),
                    pct(cs["categories"].get(cat, [0, 0])), ">= 90%"))
    total = lambda f: [sum(v[0] for v in f["categories"].values()),
                       sum(v[1] for v in f["categories"].values())]
    out.append(("recall: all", pct(total(sh)), pct(total(cs)), ""))
    out.append(("FP on real skills", pct(sh["real"]), pct(cs["real"]), "<= 2%"))
    out.append(("FP on hard negatives", pct(sh["hard"]), pct(cs["hard"]), "(reported)"))
    out.append(("real risky held back", pct(sh["risky"]), pct(cs["risky"]), ""))
    out.append(("precision of held back", precision(sh), precision(cs), ">= 70%"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "skill-corpus"))
    ap.add_argument("--malicious", default=str(DATA / "malicious"),
                    help="folder of malicious samples, DIR.toml beside it "
                         "(e.g. tests/data/audit/heldout/malicious)")
    ap.add_argument("--hard-negative", default=str(DATA / "hard-negative"))
    args = ap.parse_args()
    corpus = Path(args.corpus)
    malicious, hard = Path(args.malicious).resolve(), Path(args.hard_negative).resolve()
    exe = scanner_bin()
    stage_dir, where = stage(corpus, malicious, hard)
    cs = scanner_figures(where, run_scanner(exe, stage_dir))
    sh = skillhost_figures(corpus, malicious, hard)
    head = ("figure", "skillhost eval audit", "cisco-ai-skill-scanner 2.3.2", "target")
    table = [head] + rows(sh, cs)
    if args.markdown:
        print("| " + " | ".join(head) + " |\n|---|---|---|---|")
        for r in table[1:]:
            print("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(r[i]) for r in table) for i in range(4)]
        for r in table:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    if cs["unscanned"]:
        print(f"(the scanner reported no result for {cs['unscanned']} staged skills; "
              "counted as not flagged)")


if __name__ == "__main__":
    os.environ.setdefault("RUSTUP_AUTO_INSTALL", "0")
    main()
