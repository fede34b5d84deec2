//! The `data-inspector` handler: the shape of a CSV or JSON document, for a
//! person deciding what to do with it. Pure computation: no grants needed.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use skillhost_guest::{Failure, HandlerResult, Output, Task};

fn inspect(task: Task) -> HandlerResult {
    let given = task.str("data");
    let data = if given.trim().is_empty() {
        task.description
            .split_once(':')
            .map(|(_, d)| d)
            .unwrap_or("")
    } else {
        given
    };
    let data = data.trim();
    if data.is_empty() {
        return Err(Failure::new(
            "EmptyInput",
            "there is no data to inspect: pass it in the context field `data`",
        ));
    }
    let format = match task.str("format").trim().to_lowercase().as_str() {
        "" | "auto" => {
            if data.starts_with('{') || data.starts_with('[') {
                "json"
            } else {
                "csv"
            }
        }
        "json" => "json",
        "csv" => "csv",
        other => {
            return Err(Failure::new(
                "InvalidInput",
                format!("context field `format` must be auto, csv or json, got `{other}`"),
            ));
        }
    };
    let report = if format == "json" {
        inspect_json(data)?
    } else {
        inspect_csv(data)?
    };
    Ok(Output::text(report))
}

skillhost_guest::export_handler!(inspect);

fn inspect_json(data: &str) -> Result<String, Failure> {
    let value: Value = serde_json::from_str(data).map_err(|e| {
        Failure::new(
            "ParseError",
            format!(
                "invalid JSON at line {}, column {}: {e}",
                e.line(),
                e.column()
            ),
        )
    })?;
    let mut out = String::new();
    match &value {
        Value::Array(items) => {
            let objects = items.iter().filter(|v| v.is_object()).count();
            if objects == items.len() && !items.is_empty() {
                out.push_str(&format!("JSON: array of {} objects\n", items.len()));
                let mut keys: BTreeMap<&str, (usize, BTreeSet<&'static str>)> = BTreeMap::new();
                for item in items.iter().filter_map(Value::as_object) {
                    for (k, v) in item {
                        let e = keys.entry(k.as_str()).or_default();
                        e.0 += 1;
                        e.1.insert(type_name(v));
                    }
                }
                for (k, (n, types)) in keys {
                    let types: Vec<&str> = types.into_iter().collect();
                    out.push_str(&format!(
                        "- {k}: {} ({n}/{})\n",
                        types.join(" | "),
                        items.len()
                    ));
                }
            } else {
                let types: BTreeSet<&str> = items.iter().map(type_name).collect();
                let types: Vec<&str> = types.into_iter().collect();
                out.push_str(&format!(
                    "JSON: array of {} elements ({})\n",
                    items.len(),
                    if types.is_empty() {
                        "empty".to_owned()
                    } else {
                        types.join(" | ")
                    }
                ));
            }
        }
        Value::Object(map) => {
            out.push_str(&format!("JSON: object with {} keys\n", map.len()));
            for (k, v) in map {
                out.push_str(&format!("- {k}: {}\n", describe(v)));
            }
        }
        other => out.push_str(&format!("JSON: {}\n", describe(other))),
    }
    Ok(out)
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::Array(a) => format!("array of {}", a.len()),
        Value::Object(o) => format!("object with {} keys", o.len()),
        Value::String(s) => format!("string ({} chars)", s.chars().count()),
        other => format!("{} ({other})", type_name(other)),
    }
}

/// Splits CSV into records, honouring quotes (RFC 4180). Errors name the
/// line where a quoted field is left open.
fn parse_csv(data: &str) -> Result<Vec<Vec<String>>, Failure> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut in_quotes = false;
    let mut quote_line = 0;
    let mut line = 1;
    let mut chars = data.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, in_quotes) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            ('"', true) => in_quotes = false,
            ('"', false) if field.is_empty() => {
                in_quotes = true;
                quote_line = line;
            }
            (',', false) => row.push(std::mem::take(&mut field)),
            ('\r', false) => {}
            ('\n', false) => {
                line += 1;
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            ('\n', true) => {
                line += 1;
                field.push(c);
            }
            _ => field.push(c),
        }
    }
    if in_quotes {
        return Err(Failure::new(
            "ParseError",
            format!("invalid CSV: a quoted field opened on line {quote_line} is never closed"),
        ));
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows.retain(|r| !(r.len() == 1 && r[0].trim().is_empty()));
    Ok(rows)
}

fn inspect_csv(data: &str) -> Result<String, Failure> {
    let rows = parse_csv(data)?;
    let Some((header, records)) = rows.split_first() else {
        return Err(Failure::new("EmptyInput", "the CSV has no rows"));
    };
    let width = header.len();
    if let Some((i, r)) = records.iter().enumerate().find(|(_, r)| r.len() != width) {
        return Err(Failure::new(
            "ParseError",
            format!(
                "invalid CSV: record {} has {} fields but the header has {width}",
                i + 2,
                r.len()
            ),
        ));
    }
    let mut out = format!("CSV: {} rows x {width} columns\n", records.len());
    out.push_str("column | type | empty | distinct | min | max\n");
    for (c, name) in header.iter().enumerate() {
        let cells: Vec<&str> = records.iter().map(|r| r[c].trim()).collect();
        let filled: Vec<&str> = cells.iter().copied().filter(|s| !s.is_empty()).collect();
        let distinct: BTreeSet<&str> = filled.iter().copied().collect();
        let ty = column_type(&filled);
        let (min, max) = if matches!(ty, "integer" | "number") {
            let nums: Vec<f64> = filled.iter().filter_map(|s| s.parse().ok()).collect();
            let min = nums.iter().copied().fold(f64::INFINITY, f64::min);
            let max = nums.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (min.to_string(), max.to_string())
        } else {
            (String::new(), String::new())
        };
        out.push_str(&format!(
            "{} | {ty} | {} | {} | {min} | {max}\n",
            name.trim(),
            cells.len() - filled.len(),
            distinct.len()
        ));
    }
    Ok(out)
}

fn column_type(cells: &[&str]) -> &'static str {
    if cells.is_empty() {
        "empty"
    } else if cells.iter().all(|s| s.parse::<i64>().is_ok()) {
        "integer"
    } else if cells
        .iter()
        .all(|s| s.parse::<f64>().is_ok_and(f64::is_finite))
    {
        "number"
    } else if cells
        .iter()
        .all(|s| matches!(s.to_lowercase().as_str(), "true" | "false" | "yes" | "no"))
    {
        "boolean"
    } else {
        "string"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_with_quotes_and_types() {
        let r = inspect_csv("name,age,score\n\"Doe, Jane\",31,9.5\nBob,45,\n").unwrap();
        assert!(r.starts_with("CSV: 2 rows x 3 columns"), "{r}");
        assert!(r.contains("age | integer | 0 | 2 | 31 | 45"), "{r}");
        assert!(r.contains("score | number | 1 | 1 | 9.5 | 9.5"), "{r}");
    }

    #[test]
    fn csv_errors_name_the_line() {
        let e = inspect_csv("a,b\n1,2,3\n").unwrap_err();
        assert_eq!(e.class, "ParseError");
        assert!(e.message.contains("record 2"), "{}", e.message);
        let e = parse_csv("a\n\"open\n").unwrap_err();
        assert!(e.message.contains("line 2"), "{}", e.message);
    }

    #[test]
    fn json_arrays_of_objects() {
        let r = inspect_json(r#"[{"id":1,"t":"a"},{"id":2}]"#).unwrap();
        assert!(r.contains("array of 2 objects"), "{r}");
        assert!(r.contains("- id: integer (2/2)"), "{r}");
        assert!(r.contains("- t: string (1/2)"), "{r}");
        assert_eq!(inspect_json("{nope").unwrap_err().class, "ParseError");
    }
}
