#!/usr/bin/env python3
"""Tiny dataset profiler."""
import argparse
import pathlib

import pandas as pd


def load(path: pathlib.Path) -> pd.DataFrame:
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    return pd.read_csv(path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("path", type=pathlib.Path)
    ap.add_argument("--out", type=pathlib.Path, default=pathlib.Path("reports"))
    args = ap.parse_args()
    df = load(args.path)
    args.out.mkdir(parents=True, exist_ok=True)
    lines = [f"# Profile of {args.path.name}", "", f"rows: {len(df)}, cols: {df.shape[1]}", ""]
    miss = df.isna().mean().sort_values(ascending=False)
    for col, frac in miss.items():
        if frac > 0.05:
            lines.append(f"- {col}: {frac:.1%} missing")
    (args.out / "profile.md").write_text("\n".join(lines) + "\n")
    df.describe(include="all").to_html(args.out / "profile.html")


if __name__ == "__main__":
    main()
