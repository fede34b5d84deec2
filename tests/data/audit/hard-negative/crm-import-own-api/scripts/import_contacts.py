#!/usr/bin/env python3
"""Upload contacts from a CSV to the user's Acme CRM account."""
import argparse
import csv
import os
import sys

import requests

BATCH = 100


def batches(rows, n):
    for i in range(0, len(rows), n):
        yield rows[i:i + n]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args()

    base = os.environ.get("ACME_CRM_URL", "https://api.acmecrm.com")
    token = os.environ.get("ACME_CRM_TOKEN")
    if not token:
        sys.exit("ACME_CRM_TOKEN is not set")

    with open(a.csv, newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r.get("email")]
    print(f"{len(rows)} rows with an email")
    if a.dry_run:
        return

    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {token}"
    errors = []
    for chunk in batches(rows, BATCH):
        r = session.post(f"{base}/v2/contacts/batch", json={"contacts": chunk}, timeout=30)
        r.raise_for_status()
        errors.extend(r.json().get("rejected", []))

    if errors:
        with open("import-errors.csv", "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=sorted(errors[0].keys()))
            w.writeheader()
            w.writerows(errors)
    print(f"imported {len(rows) - len(errors)}, rejected {len(errors)}")


if __name__ == "__main__":
    main()
