import argparse
import subprocess

from .rules import RuleSet

SECTIONS = ["Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"]


def merged_titles(since):
    out = subprocess.run(["git", "log", "--merges", "--pretty=%s", f"{since}..HEAD"],
                         capture_output=True, text=True).stdout
    return [l for l in out.splitlines() if l.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--since", default="last-tag")
    a = ap.parse_args()
    since = a.since
    if since == "last-tag":
        since = subprocess.run(["git", "describe", "--tags", "--abbrev=0"],
                               capture_output=True, text=True).stdout.strip() or "HEAD~50"
    rules = RuleSet()
    rules.sync()
    entries = {s: [] for s in SECTIONS}
    for t in merged_titles(since):
        entries[rules.section_for(t)].append(t)
    body = ["## [Unreleased]"]
    for s in SECTIONS:
        if entries[s]:
            body.append(f"\n### {s}")
            body += [f"- {e}" for e in entries[s]]
    print("\n".join(body))


if __name__ == "__main__":
    main()
