import argparse
import json

import pdfplumber


def parse(path):
    with pdfplumber.open(path) as pdf:
        text = "\n".join(p.extract_text() or "" for p in pdf.pages)
    return {"file": path, "chars": len(text)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    print(json.dumps([parse(f) for f in a.files], indent=2))
