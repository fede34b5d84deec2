#!/usr/bin/env python3
"""Summarize a (redacted) gitleaks JSON report by rule and file."""
import collections
import json
import sys

findings = json.load(open(sys.argv[1]))
by_rule = collections.Counter(f["RuleID"] for f in findings)
by_file = collections.Counter(f["File"] for f in findings)
print(f"{len(findings)} findings")
for rule, n in by_rule.most_common():
    print(f"  {rule}: {n}")
print("files:")
for path, n in by_file.most_common(10):
    print(f"  {path}: {n}")
