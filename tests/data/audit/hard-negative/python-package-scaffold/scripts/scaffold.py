#!/usr/bin/env python3
"""Create a minimal src-layout Python package."""
import argparse
import pathlib

PYPROJECT = """[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "{name}"
version = "0.1.0"
authors = [{{ name = "{author}" }}]
requires-python = ">=3.10"

[project.optional-dependencies]
dev = ["pytest", "ruff"]
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("--author", default="Unknown")
    a = ap.parse_args()
    root = pathlib.Path(a.name)
    (root / "src" / a.name).mkdir(parents=True, exist_ok=True)
    (root / "tests").mkdir(exist_ok=True)
    (root / "pyproject.toml").write_text(PYPROJECT.format(name=a.name, author=a.author))
    (root / "src" / a.name / "__init__.py").write_text('__version__ = "0.1.0"\n')
    (root / "tests" / "test_smoke.py").write_text(f"import {a.name}\n\n\ndef test_version():\n    assert {a.name}.__version__\n")
    print(f"created {root}")


if __name__ == "__main__":
    main()
