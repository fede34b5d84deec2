"""The `unit-converter` example handler, in Python (componentize-py).

`convert 5 km to mi` -> `5 km = 3.1069 mi`. The same handler exists in
Rust, JavaScript and C under examples/; all four must give byte-identical
answers and failures for the same input, so tokenising, number syntax,
arithmetic order, rounding and messages are spelled out here rather than
left to built-ins whose behaviour differs between languages (e.g. float()
accepts "1_000" and "inf", round() rounds ties to even).

componentize-py generates the `wit_world` bindings from wit/skill.wit at
build time: the exported `handle` is a method of `WitWorld`, returning an
`Output` is `ok`, raising `Err(Failure(...))` is `err`.
"""

import json
import math
import re

import wit_world
from componentize_py_types import Err
from wit_world.imports.types import Failure, Output, Task

# (symbol, kind, factor in the kind's base unit, lowercase names)
UNITS = [
    ("m", "length", 1.0, ["m", "meter", "meters", "metre", "metres"]),
    ("km", "length", 1000.0, ["km", "kilometer", "kilometers", "kilometre", "kilometres"]),
    ("cm", "length", 0.01, ["cm", "centimeter", "centimeters", "centimetre", "centimetres"]),
    ("mi", "length", 1609.344, ["mi", "mile", "miles"]),
    ("yd", "length", 0.9144, ["yd", "yard", "yards"]),
    ("ft", "length", 0.3048, ["ft", "foot", "feet"]),
    ("in", "length", 0.0254, ["in", "inch", "inches"]),
    ("kg", "mass", 1000.0, ["kg", "kilogram", "kilograms"]),
    ("g", "mass", 1.0, ["g", "gram", "grams"]),
    ("lb", "mass", 453.59237, ["lb", "lbs", "pound", "pounds"]),
    ("oz", "mass", 28.349523125, ["oz", "ounce", "ounces"]),
    ("C", "temperature", 1.0, ["c", "celsius"]),
    ("F", "temperature", 1.0, ["f", "fahrenheit"]),
    ("K", "temperature", 1.0, ["k", "kelvin"]),
]

# Beyond this, results scaled by 10^4 would stop being exact integers.
MAX_ABS_VALUE = 1000000.0

NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)")
SPACE = " \t\n\r"


def failure(cls: str, message: str) -> Err:
    return Err(Failure(class_=cls, message=message))


def ascii_lower(s: str) -> str:
    """ASCII-only lowercase, so that e.g. the Kelvin sign never means "k"."""
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)


def lookup(name: str):
    key = ascii_lower(name)
    for unit in UNITS:
        if key in unit[3]:
            return unit
    valid = ", ".join(u[0] for u in UNITS)
    raise failure("UnknownUnit", f'unknown unit "{name}"; valid units: {valid}')


def parse_number(text: str) -> float:
    if NUMBER.fullmatch(text) is None:
        raise failure("InvalidInput", f'"{text}" is not a number')
    return float(text)


def context_str(ctx: dict, name: str):
    v = ctx.get(name)
    if v is None:
        return None
    if not isinstance(v, str):
        raise failure("InvalidInput", f"context field {name} must be a string")
    s = v.strip(SPACE)
    return s if s else None


def context_value(ctx: dict):
    v = ctx.get("value")
    # bool is an int in Python, but true/false is not a number in JSON.
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if v is None or isinstance(v, str):
        s = context_str(ctx, "value")
        return None if s is None else parse_number(s)
    raise failure("InvalidInput", "context field value must be a number or a numeric string")


def parse_description(text: str):
    tokens = [t for t in re.split(r"[ \t\n\r]+", text) if t]
    if tokens and ascii_lower(tokens[0]) == "convert":
        tokens.pop(0)
    if len(tokens) == 4 and ascii_lower(tokens[2]) in ("to", "in", "into"):
        return tokens[0], tokens[1], tokens[3]
    return None


def format_number(x: float) -> str:
    """4 decimals, half away from zero on |x| * 10^4, no trailing zeros."""
    negative = x < 0
    scaled = math.floor((-x if negative else x) * 10000.0 + 0.5)
    if scaled == 0:
        negative = False
    whole = scaled // 10000
    frac = scaled - whole * 10000
    out = ("-" if negative else "") + str(whole)
    if frac > 0:
        out += "." + f"{frac:04d}".rstrip("0")
    return out


def to_kelvin(symbol: str, v: float) -> float:
    if symbol == "C":
        return v + 273.15
    if symbol == "F":
        return (v - 32.0) * 5.0 / 9.0 + 273.15
    return v


def from_kelvin(symbol: str, k: float) -> float:
    if symbol == "C":
        return k - 273.15
    if symbol == "F":
        return (k - 273.15) * 9.0 / 5.0 + 32.0
    return k


def parse_context(text: str) -> dict:
    try:
        ctx = json.loads(text)
    except ValueError:
        raise failure("InvalidInput", "context is not valid JSON")
    if ctx is None:
        return {}
    if not isinstance(ctx, dict):
        raise failure("InvalidInput", "context must be a JSON object")
    return ctx


def convert(description: str, ctx: dict) -> str:
    parsed = parse_description(description)
    value = context_value(ctx)
    src = context_str(ctx, "from")
    dst = context_str(ctx, "to")
    if parsed is not None:
        if value is None:
            value = parse_number(parsed[0])
        if src is None:
            src = parsed[1]
        if dst is None:
            dst = parsed[2]
    if value is None or src is None or dst is None:
        raise failure(
            "InvalidInput",
            'write the task as "convert 5 km to mi", or set the context fields value, from and to',
        )
    if not (-MAX_ABS_VALUE <= value <= MAX_ABS_VALUE):
        raise failure("InvalidInput", "value must be between -1000000 and 1000000")
    f = lookup(src)
    t = lookup(dst)
    if f[1] != t[1]:
        raise failure("IncompatibleUnits", f"cannot convert {f[0]} ({f[1]}) to {t[0]} ({t[1]})")
    if f[1] == "temperature":
        result = from_kelvin(t[0], to_kelvin(f[0], value))
    else:
        result = value * f[2] / t[2]
    return f"{format_number(value)} {f[0]} = {format_number(result)} {t[0]}"


class WitWorld(wit_world.WitWorld):
    def handle(self, task: Task) -> Output:
        body = convert(task.description, parse_context(task.context_json))
        return Output(body=body, content_type="text/plain", flags=[])
