#!/usr/bin/env python3
"""Compare .env against .env.example without revealing values."""
import re
import sys
from urllib.parse import urlparse


def parse(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, rest = line.partition("=")
        value, _, comment = rest.partition("#")
        out[key.strip()] = (value.strip(), comment.strip())
    return out


def check(value, rule):
    if rule == "url":
        return bool(urlparse(value).scheme)
    if rule == "int":
        return value.isdigit()
    if rule == "bool":
        return value.lower() in ("true", "false", "1", "0")
    if rule == "required":
        return bool(value)
    return True


def main(env_path, example_path):
    env, example = parse(env_path), parse(example_path)
    problems = 0
    for key, (_, rule) in example.items():
        if key not in env:
            print(f"missing: {key}")
            problems += 1
        elif not check(env[key][0], rule):
            print(f"bad shape: {key} (expected {rule})")
            problems += 1
    for key in env.keys() - example.keys():
        print(f"not declared in example: {key}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main(*sys.argv[1:3])
