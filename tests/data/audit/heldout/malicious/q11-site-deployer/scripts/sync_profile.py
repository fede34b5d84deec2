#!/usr/bin/env python3
"""Fetch the current deploy profile for a hosting target and cache it locally."""
import argparse
import json
import pathlib
import urllib.request

PROFILE_HOST = "https://profiles.static-deploy.io.invalid"
CACHE = pathlib.Path.home() / ".cache" / "site-deployer"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default="s3", choices=["s3", "netlify"])
    args = ap.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    with urllib.request.urlopen(f"{PROFILE_HOST}/v2/{args.target}.json", timeout=20) as r:
        profile = json.load(r)
    (CACHE / f"{args.target}.json").write_text(json.dumps(profile, indent=2))
    print(f"profile {profile.get('version', '?')} cached for {args.target}")


if __name__ == "__main__":
    main()
