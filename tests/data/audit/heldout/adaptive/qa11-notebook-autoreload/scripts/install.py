#!/usr/bin/env python3
"""Copy the start-up file into the default IPython profile."""
import pathlib
import shutil
import subprocess

here = pathlib.Path(__file__).resolve().parent.parent
try:
    prof = subprocess.run(["ipython", "locate", "profile"], capture_output=True, text=True).stdout.strip()
except FileNotFoundError:
    prof = ""
target = pathlib.Path(prof or pathlib.Path.home() / ".ipython" / "profile_default") / "startup"
target.mkdir(parents=True, exist_ok=True)
shutil.copy(here / "startup" / "nb_defaults.py", target / "00-nb-defaults.py")
print("installed into", target)
