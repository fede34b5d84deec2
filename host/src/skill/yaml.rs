//! YAML front matter to JSON, with a budget.
//!
//! serde_norway already refuses deep nesting (128 levels) and caps alias
//! replays, but its cap is relative to the document size and an alias to a
//! long string can still multiply memory. We deserialize straight into
//! `serde_json::Value` through our own visitor so that every node and every
//! string byte counts against a fixed budget: an alias bomb fails fast, and
//! duplicate keys resolve as most YAML loaders do (the last one wins) instead
//! of failing the whole skill.

use std::cell::Cell;
use std::fmt;

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};
use serde_json::{Map, Number, Value};

/// Most nodes one front matter may expand to (aliases included).
const MAX_NODES: usize = 100_000;
/// Most string bytes one front matter may expand to (aliases included).
const MAX_STRING_BYTES: usize = 8 << 20;

/// Deepest `[`/`{` nesting handed to the YAML parser. libyaml's scanner is
/// quadratic in flow depth (16k levels take a second, a megabyte of `[`
/// would take hours), and serde_norway refuses more than 128 levels anyway.
const MAX_FLOW_DEPTH: usize = 512;

/// Parses one YAML document into JSON. Returns the parser's message on error.
/// `duplicates` receives keys that appeared twice in the same mapping.
pub(crate) fn to_json(text: &str, duplicates: &mut Vec<String>) -> Result<Value, String> {
    if flow_depth(text) > MAX_FLOW_DEPTH {
        return Err(format!(
            "brackets nest more than {MAX_FLOW_DEPTH} levels deep"
        ));
    }
    let budget = Budget {
        nodes: Cell::new(MAX_NODES),
        bytes: Cell::new(MAX_STRING_BYTES),
        duplicates: std::cell::RefCell::new(Vec::new()),
    };
    let de = serde_norway::Deserializer::from_str(text);
    let value = Node { budget: &budget }
        .deserialize(de)
        .map_err(|e| e.to_string())?;
    duplicates.extend(budget.duplicates.into_inner());
    Ok(value)
}

/// Deepest unclosed `[`/`{` nesting, counting brackets anywhere (quoted
/// or not): an upper bound of what the parser would see, cheap and linear.
fn flow_depth(text: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for b in text.bytes() {
        match b {
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

struct Budget {
    nodes: Cell<usize>,
    bytes: Cell<usize>,
    duplicates: std::cell::RefCell<Vec<String>>,
}

impl Budget {
    fn node<E: de::Error>(&self) -> Result<(), E> {
        match self.nodes.get().checked_sub(1) {
            Some(left) => {
                self.nodes.set(left);
                Ok(())
            }
            None => Err(E::custom(format!(
                "front matter expands to more than {MAX_NODES} values (an alias bomb?)"
            ))),
        }
    }

    fn string<E: de::Error>(&self, len: usize) -> Result<(), E> {
        match self.bytes.get().checked_sub(len) {
            Some(left) => {
                self.bytes.set(left);
                Ok(())
            }
            None => Err(E::custom(format!(
                "front matter expands to more than {MAX_STRING_BYTES} bytes of text (an alias bomb?)"
            ))),
        }
    }
}

/// Seed and visitor for any YAML node.
#[derive(Clone, Copy)]
struct Node<'b> {
    budget: &'b Budget,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.budget.node()?;
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        // JSON has no NaN or infinity; keep them as the words YAML uses.
        Ok(match Number::from_f64(v) {
            Some(n) => Value::Number(n),
            None if v.is_nan() => Value::String(".nan".into()),
            None if v > 0.0 => Value::String(".inf".into()),
            None => Value::String("-.inf".into()),
        })
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        self.budget.string(v.len())?;
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        self.budget.string(v.len())?;
        Ok(Value::String(v))
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Value, E> {
        self.budget.string(v.len())?;
        Ok(Value::String(String::from_utf8_lossy(v).into_owned()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(self)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key_seed(Key { node: self })? {
            let value = map.next_value_seed(self)?;
            if out.insert(key.clone(), value).is_some() {
                self.budget.duplicates.borrow_mut().push(key);
            }
        }
        Ok(Value::Object(out))
    }

    /// A tagged node (`!foo value`): the tag is dropped, the value kept.
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        let (_tag, variant) = data.variant::<String>()?;
        variant.newtype_variant_seed(self)
    }
}

/// Mapping keys become strings: `1: x` and `true: x` keep their text.
struct Key<'b> {
    node: Node<'b>,
}

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        Ok(match self.node.deserialize(d)? {
            Value::String(s) => s,
            Value::Null => "null".to_owned(),
            other => other.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Value, String> {
        to_json(s, &mut Vec::new())
    }

    #[test]
    fn scalars_maps_and_lists() {
        let v = parse("a: 1\nb: [x, 2.5, true, null]\nc: {d: e}\n").expect("valid");
        assert_eq!(
            v,
            serde_json::json!({"a": 1, "b": ["x", 2.5, true, null], "c": {"d": "e"}})
        );
    }

    #[test]
    fn non_string_keys_keep_their_text() {
        let v = parse("1: one\ntrue: yes\n").expect("valid");
        assert_eq!(v, serde_json::json!({"1": "one", "true": "yes"}));
    }

    #[test]
    fn duplicate_keys_last_wins_and_are_reported() {
        let mut dups = Vec::new();
        let v = to_json("a: 1\na: 2\n", &mut dups).expect("valid");
        assert_eq!(v, serde_json::json!({"a": 2}));
        assert_eq!(dups, vec!["a".to_owned()]);
    }

    #[test]
    fn tags_are_dropped() {
        let v = parse("a: !custom hello\n").expect("valid");
        assert_eq!(v, serde_json::json!({"a": "hello"}));
    }

    #[test]
    fn alias_bomb_is_refused() {
        let mut doc = String::from("a: &a [x,x,x,x,x,x,x,x,x]\n");
        let mut prev = 'a';
        for name in ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'] {
            let refs = vec![format!("*{prev}"); 9].join(",");
            doc.push_str(&format!("{name}: &{name} [{refs}]\n"));
            prev = name;
        }
        let err = parse(&doc).expect_err("bomb must fail");
        assert!(err.contains("alias") || err.contains("repetition"), "{err}");
    }

    #[test]
    fn deep_nesting_is_refused() {
        let doc = format!("a: {}{}\n", "[".repeat(500_000), "]".repeat(500_000));
        let err = parse(&doc).expect_err("too deep");
        assert!(err.contains("512 levels"), "{err}");
        let doc = format!("a: {}1{}\n", "{b: ".repeat(10_000), "}".repeat(10_000));
        assert!(parse(&doc).is_err());
        // Within the bound, serde_norway's own limit (128) still answers.
        let doc = format!("a: {}{}\n", "[".repeat(300), "]".repeat(300));
        assert!(
            parse(&doc)
                .expect_err("too deep")
                .contains("recursion limit")
        );
        let doc = format!("a: {}{}\n", "[".repeat(20), "]".repeat(20));
        assert!(parse(&doc).is_ok());
    }

    #[test]
    fn alias_to_long_string_is_bounded() {
        let long = "x".repeat(100_000);
        let refs = vec!["*s"; 200].join(", ");
        let doc = format!("s: &s {long}\nl: [{refs}]\n");
        let err = parse(&doc).expect_err("8 MiB budget");
        assert!(err.contains("bytes of text"), "{err}");
    }
}
