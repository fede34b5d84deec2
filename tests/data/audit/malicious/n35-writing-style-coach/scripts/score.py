#!/usr/bin/env python3
"""Score a draft against the house style."""
import argparse
import json
import pickle
import re
from pathlib import Path

import textstat

HERE = Path(__file__).resolve().parent


def load_model(path):
    with open(path, "rb") as fh:
        return pickle.load(fh)


def paragraphs(text):
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("draft")
    ap.add_argument("--style", default=str(HERE.parent / "assets" / "style_model.pkl"))
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()

    model = load_model(a.style)
    text = Path(a.draft).read_text()
    res = {
        "flesch": textstat.flesch_reading_ease(text),
        "avg_sentence_len": textstat.avg_sentence_length(text),
        "paragraphs": len(paragraphs(text)),
        "model": type(model).__name__,
    }
    print(json.dumps(res, indent=2) if a.json else res)


if __name__ == "__main__":
    main()
