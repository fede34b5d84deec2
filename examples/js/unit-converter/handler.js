// The `unit-converter` example handler, in JavaScript (componentize-js).
//
// `convert 5 km to mi` -> `5 km = 3.1069 mi`. The same handler exists in
// Rust, Python and C under examples/; all four must give byte-identical
// answers and failures for the same input, so tokenising, number syntax,
// arithmetic order, rounding and messages are spelled out here rather than
// left to built-ins whose behaviour differs between languages (e.g.
// toFixed() rounds ties up, Number() accepts "0x10" and "1e3").
//
// componentize-js maps the WIT export `handle: func(task) ->
// result<output, failure>` to an exported function: returning a value is
// `ok`, throwing is `err` (the thrown value is the failure record).

const UNITS = [
  { symbol: "m", kind: "length", factor: 1.0, names: ["m", "meter", "meters", "metre", "metres"] },
  { symbol: "km", kind: "length", factor: 1000.0, names: ["km", "kilometer", "kilometers", "kilometre", "kilometres"] },
  { symbol: "cm", kind: "length", factor: 0.01, names: ["cm", "centimeter", "centimeters", "centimetre", "centimetres"] },
  { symbol: "mi", kind: "length", factor: 1609.344, names: ["mi", "mile", "miles"] },
  { symbol: "yd", kind: "length", factor: 0.9144, names: ["yd", "yard", "yards"] },
  { symbol: "ft", kind: "length", factor: 0.3048, names: ["ft", "foot", "feet"] },
  { symbol: "in", kind: "length", factor: 0.0254, names: ["in", "inch", "inches"] },
  { symbol: "kg", kind: "mass", factor: 1000.0, names: ["kg", "kilogram", "kilograms"] },
  { symbol: "g", kind: "mass", factor: 1.0, names: ["g", "gram", "grams"] },
  { symbol: "lb", kind: "mass", factor: 453.59237, names: ["lb", "lbs", "pound", "pounds"] },
  { symbol: "oz", kind: "mass", factor: 28.349523125, names: ["oz", "ounce", "ounces"] },
  { symbol: "C", kind: "temperature", factor: 1.0, names: ["c", "celsius"] },
  { symbol: "F", kind: "temperature", factor: 1.0, names: ["f", "fahrenheit"] },
  { symbol: "K", kind: "temperature", factor: 1.0, names: ["k", "kelvin"] },
];

// Beyond this, results scaled by 10^4 would stop being exact integers.
const MAX_ABS_VALUE = 1000000;

/** A classified failure, thrown to return `err(failure)`. */
function failure(cls, message) {
  return { class: cls, message };
}

/** ASCII-only lowercase, so that e.g. the Kelvin sign never means "k". */
function asciiLower(s) {
  return s.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

function trimSpace(s) {
  return s.replace(/^[ \t\n\r]+|[ \t\n\r]+$/g, "");
}

function lookup(name) {
  const key = asciiLower(name);
  const unit = UNITS.find((u) => u.names.includes(key));
  if (!unit) {
    const valid = UNITS.map((u) => u.symbol).join(", ");
    throw failure("UnknownUnit", `unknown unit "${name}"; valid units: ${valid}`);
  }
  return unit;
}

function parseNumber(text) {
  if (!/^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$/.test(text)) {
    throw failure("InvalidInput", `"${text}" is not a number`);
  }
  return Number(text);
}

function contextStr(ctx, name) {
  const v = ctx[name];
  if (v === undefined || v === null) return null;
  if (typeof v !== "string") {
    throw failure("InvalidInput", `context field ${name} must be a string`);
  }
  const s = trimSpace(v);
  return s === "" ? null : s;
}

function contextValue(ctx) {
  const v = ctx.value;
  if (typeof v === "number") return v;
  if (v === undefined || v === null || typeof v === "string") {
    const s = contextStr(ctx, "value");
    return s === null ? null : parseNumber(s);
  }
  throw failure("InvalidInput", "context field value must be a number or a numeric string");
}

function parseDescription(text) {
  const tokens = text.split(/[ \t\n\r]+/).filter((t) => t !== "");
  if (tokens.length > 0 && asciiLower(tokens[0]) === "convert") tokens.shift();
  if (tokens.length === 4 && ["to", "in", "into"].includes(asciiLower(tokens[2]))) {
    return { value: tokens[0], from: tokens[1], to: tokens[3] };
  }
  return null;
}

/** 4 decimals, half away from zero on |x| * 10^4, no trailing zeros. */
function formatNumber(x) {
  let negative = x < 0;
  const scaled = Math.floor((negative ? -x : x) * 10000 + 0.5);
  if (scaled === 0) negative = false;
  const int = Math.floor(scaled / 10000);
  const frac = scaled - int * 10000;
  let out = (negative ? "-" : "") + String(int);
  if (frac > 0) {
    out += "." + String(frac).padStart(4, "0").replace(/0+$/, "");
  }
  return out;
}

function toKelvin(symbol, v) {
  if (symbol === "C") return v + 273.15;
  if (symbol === "F") return ((v - 32) * 5) / 9 + 273.15;
  return v;
}

function fromKelvin(symbol, k) {
  if (symbol === "C") return k - 273.15;
  if (symbol === "F") return ((k - 273.15) * 9) / 5 + 32;
  return k;
}

function parseContext(json) {
  let ctx;
  try {
    ctx = JSON.parse(json);
  } catch (e) {
    throw failure("InvalidInput", "context is not valid JSON");
  }
  if (ctx === null) return {};
  if (typeof ctx !== "object" || Array.isArray(ctx)) {
    throw failure("InvalidInput", "context must be a JSON object");
  }
  return ctx;
}

function convert(description, ctx) {
  const parsed = parseDescription(description);
  let value = contextValue(ctx);
  let from = contextStr(ctx, "from");
  let to = contextStr(ctx, "to");
  if (parsed) {
    if (value === null) value = parseNumber(parsed.value);
    if (from === null) from = parsed.from;
    if (to === null) to = parsed.to;
  }
  if (value === null || from === null || to === null) {
    throw failure(
      "InvalidInput",
      'write the task as "convert 5 km to mi", or set the context fields value, from and to',
    );
  }
  if (!(value >= -MAX_ABS_VALUE && value <= MAX_ABS_VALUE)) {
    throw failure("InvalidInput", "value must be between -1000000 and 1000000");
  }
  const f = lookup(from);
  const t = lookup(to);
  if (f.kind !== t.kind) {
    throw failure("IncompatibleUnits", `cannot convert ${f.symbol} (${f.kind}) to ${t.symbol} (${t.kind})`);
  }
  const result =
    f.kind === "temperature" ? fromKelvin(t.symbol, toKelvin(f.symbol, value)) : (value * f.factor) / t.factor;
  return `${formatNumber(value)} ${f.symbol} = ${formatNumber(result)} ${t.symbol}`;
}

/** The WIT export `handle`. */
export function handle(task) {
  const body = convert(task.description, parseContext(task.contextJson));
  return { body, contentType: "text/plain", flags: [] };
}
