//! The `unit-converter` example handler, in Rust with the guest SDK.
//!
//! `convert 5 km to mi` -> `5 km = 3.1069 mi`. The same handler exists in
//! JavaScript, Python and C under `examples/`; all four must give
//! byte-identical answers and failures for the same input, so every step
//! below (tokenising, number syntax, arithmetic order, rounding, messages)
//! is spelled out rather than left to a library whose behaviour differs
//! between languages. See `examples/README.md` for the shared contract.

use serde_json::Value;
use skillhost_guest::{Failure, HandlerResult, Output, Task};

/// What a unit measures; only units of the same kind convert.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Length,
    Mass,
    Temperature,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Length => "length",
            Kind::Mass => "mass",
            Kind::Temperature => "temperature",
        }
    }
}

struct Unit {
    symbol: &'static str,
    kind: Kind,
    /// Size in the kind's base unit (metre, gram); unused for temperatures.
    factor: f64,
    /// Lowercase names that mean this unit.
    names: &'static [&'static str],
}

/// Every unit, in the order the "valid units" message lists them.
const UNITS: &[Unit] = &[
    Unit { symbol: "m", kind: Kind::Length, factor: 1.0, names: &["m", "meter", "meters", "metre", "metres"] },
    Unit { symbol: "km", kind: Kind::Length, factor: 1000.0, names: &["km", "kilometer", "kilometers", "kilometre", "kilometres"] },
    Unit { symbol: "cm", kind: Kind::Length, factor: 0.01, names: &["cm", "centimeter", "centimeters", "centimetre", "centimetres"] },
    Unit { symbol: "mi", kind: Kind::Length, factor: 1609.344, names: &["mi", "mile", "miles"] },
    Unit { symbol: "yd", kind: Kind::Length, factor: 0.9144, names: &["yd", "yard", "yards"] },
    Unit { symbol: "ft", kind: Kind::Length, factor: 0.3048, names: &["ft", "foot", "feet"] },
    Unit { symbol: "in", kind: Kind::Length, factor: 0.0254, names: &["in", "inch", "inches"] },
    Unit { symbol: "kg", kind: Kind::Mass, factor: 1000.0, names: &["kg", "kilogram", "kilograms"] },
    Unit { symbol: "g", kind: Kind::Mass, factor: 1.0, names: &["g", "gram", "grams"] },
    Unit { symbol: "lb", kind: Kind::Mass, factor: 453.59237, names: &["lb", "lbs", "pound", "pounds"] },
    Unit { symbol: "oz", kind: Kind::Mass, factor: 28.349523125, names: &["oz", "ounce", "ounces"] },
    Unit { symbol: "C", kind: Kind::Temperature, factor: 1.0, names: &["c", "celsius"] },
    Unit { symbol: "F", kind: Kind::Temperature, factor: 1.0, names: &["f", "fahrenheit"] },
    Unit { symbol: "K", kind: Kind::Temperature, factor: 1.0, names: &["k", "kelvin"] },
];

/// Inputs beyond this magnitude are refused so that every result, scaled
/// by 10^4 for rounding, stays an exact integer in an f64 (< 2^53) and
/// prints the same in every language.
const MAX_ABS_VALUE: f64 = 1_000_000.0;

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

fn lookup(name: &str) -> Result<&'static Unit, Failure> {
    let key = name.to_ascii_lowercase();
    UNITS
        .iter()
        .find(|u| u.names.contains(&key.as_str()))
        .ok_or_else(|| {
            let valid: Vec<&str> = UNITS.iter().map(|u| u.symbol).collect();
            Failure::new(
                "UnknownUnit",
                format!("unknown unit \"{name}\"; valid units: {}", valid.join(", ")),
            )
        })
}

/// `[+-]digits[.digits]` or `[+-].digits`, ASCII only; anything else (exponents,
/// `inf`, `1_000`) is refused the same way in every language.
fn parse_number(text: &str) -> Result<f64, Failure> {
    let not_number = || Failure::new("InvalidInput", format!("\"{text}\" is not a number"));
    let body = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || !digits(frac) || (int.is_empty() && frac.is_empty()) {
        return Err(not_number());
    }
    text.parse::<f64>().map_err(|_| not_number())
}

/// A context string field, trimmed; `None` when absent, null or blank.
fn context_str(task: &Task, name: &str) -> Result<Option<String>, Failure> {
    match task.context.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            let s = s.trim_matches(is_space);
            Ok((!s.is_empty()).then(|| s.to_owned()))
        }
        Some(_) => Err(Failure::new(
            "InvalidInput",
            format!("context field {name} must be a string"),
        )),
    }
}

/// The `value` context field: a number, a numeric string, or absent.
fn context_value(task: &Task) -> Result<Option<f64>, Failure> {
    match task.context.get("value") {
        Some(Value::Number(n)) => n.as_f64().map(Some).ok_or_else(|| {
            Failure::new("InvalidInput", "context field value must be a number or a numeric string")
        }),
        Some(Value::String(_)) | None | Some(Value::Null) => match context_str(task, "value")? {
            Some(s) => parse_number(&s).map(Some),
            None => Ok(None),
        },
        Some(_) => Err(Failure::new(
            "InvalidInput",
            "context field value must be a number or a numeric string",
        )),
    }
}

/// Reads `[convert] VALUE FROM (to|in|into) TO` from the task text.
fn parse_description(text: &str) -> Option<(String, String, String)> {
    let mut tokens: Vec<&str> = text.split(is_space).filter(|t| !t.is_empty()).collect();
    if tokens.first().is_some_and(|t| t.eq_ignore_ascii_case("convert")) {
        tokens.remove(0);
    }
    match tokens[..] {
        [value, from, connector, to]
            if ["to", "in", "into"].contains(&connector.to_ascii_lowercase().as_str()) =>
        {
            Some((value.to_owned(), from.to_owned(), to.to_owned()))
        }
        _ => None,
    }
}

/// Rounds to 4 decimals (half away from zero, on |x| * 10^4) and prints
/// without trailing zeros: the same digits in every language.
fn format_number(x: f64) -> String {
    let mut negative = x < 0.0;
    let scaled = ((if negative { -x } else { x }) * 10000.0 + 0.5).floor();
    if scaled == 0.0 {
        negative = false;
    }
    let int = (scaled / 10000.0).floor();
    let frac = (scaled - int * 10000.0) as u64;
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    out.push_str(&(int as u64).to_string());
    if frac > 0 {
        let digits = format!("{frac:04}");
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
    out
}

fn to_kelvin(symbol: &str, v: f64) -> f64 {
    match symbol {
        "C" => v + 273.15,
        "F" => (v - 32.0) * 5.0 / 9.0 + 273.15,
        _ => v,
    }
}

fn from_kelvin(symbol: &str, k: f64) -> f64 {
    match symbol {
        "C" => k - 273.15,
        "F" => (k - 273.15) * 9.0 / 5.0 + 32.0,
        _ => k,
    }
}

fn convert(task: Task) -> HandlerResult {
    let parsed = parse_description(&task.description);
    let mut value = context_value(&task)?;
    let mut from = context_str(&task, "from")?;
    let mut to = context_str(&task, "to")?;
    if let Some((v, f, t)) = parsed {
        if value.is_none() {
            value = Some(parse_number(&v)?);
        }
        from.get_or_insert(f);
        to.get_or_insert(t);
    }
    let (Some(value), Some(from), Some(to)) = (value, from, to) else {
        return Err(Failure::new(
            "InvalidInput",
            "write the task as \"convert 5 km to mi\", or set the context fields value, from and to",
        ));
    };
    if !(-MAX_ABS_VALUE..=MAX_ABS_VALUE).contains(&value) {
        return Err(Failure::new(
            "InvalidInput",
            "value must be between -1000000 and 1000000",
        ));
    }
    let (from, to) = (lookup(&from)?, lookup(&to)?);
    if from.kind != to.kind {
        return Err(Failure::new(
            "IncompatibleUnits",
            format!(
                "cannot convert {} ({}) to {} ({})",
                from.symbol,
                from.kind.name(),
                to.symbol,
                to.kind.name()
            ),
        ));
    }
    let result = if from.kind == Kind::Temperature {
        from_kelvin(to.symbol, to_kelvin(from.symbol, value))
    } else {
        value * from.factor / to.factor
    };
    Ok(Output::text(format!(
        "{} {} = {} {}",
        format_number(value),
        from.symbol,
        format_number(result),
        to.symbol
    )))
}

skillhost_guest::export_handler!(convert);
