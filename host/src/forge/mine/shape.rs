//! A recorded step's argument shape, read from its detail JSON without
//! building it (a result may be large).

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{ArgShape, JsonType};

/// Reads a recorded tool step's detail, appending its argument shape to
/// `out` (`{` then `key \x01 type \x00` per key in key order, or a lone
/// type); answers whether the model made the call. A detail that does not
/// parse has the shape `?`.
pub(super) fn parse_detail(detail: &str, out: &mut String) -> bool {
    let start = out.len();
    let mut de = serde_json::Deserializer::from_str(detail);
    match (DetailSeed { out: &mut *out }).deserialize(&mut de) {
        Ok(by_model) => by_model,
        Err(_) => {
            out.truncate(start);
            out.push('?');
            true
        }
    }
}

pub(super) fn shape_from_key(shape: &str) -> ArgShape {
    match shape.strip_prefix('{') {
        Some(keys) => ArgShape::Object(
            keys.split('\x00')
                .filter_map(|kv| kv.split_once('\x01'))
                .map(|(k, t)| {
                    (
                        k.to_owned(),
                        JsonType::from_code(t.chars().next().unwrap_or('n')),
                    )
                })
                .collect(),
        ),
        None => ArgShape::Value(JsonType::from_code(shape.chars().next().unwrap_or('n'))),
    }
}

/// The step object: `caller` and the shape of `arguments`, the rest
/// skipped without being built (a result may be large).
struct DetailSeed<'o> {
    out: &'o mut String,
}

impl<'de> DeserializeSeed<'de> for DetailSeed<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for DetailSeed<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a recorded tool step")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let mut by_model = true;
        let mut shaped = false;
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match key.as_str() {
                "arguments" if !shaped => {
                    let kind = map.next_value_seed(Kind {
                        keys: Some(&mut *self.out),
                    })?;
                    if kind != JsonType::Object {
                        self.out.push(kind.code());
                    }
                    shaped = true;
                }
                "caller" => {
                    let caller = map.next_value::<Key<'de>>()?;
                    by_model = caller.as_str() == "model";
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !shaped {
            self.out.push(JsonType::Null.code());
        }
        Ok(by_model)
    }
}

/// A string, borrowed from the input when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl Key<'_> {
    fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

/// A value's JSON type, the value itself skipped. With `keys`, an
/// object's keys and their types are appended there: `{`, then
/// `key \x01 type \x00` per key, in key order.
struct Kind<'o> {
    keys: Option<&'o mut String>,
}

impl<'de> DeserializeSeed<'de> for Kind<'_> {
    type Value = JsonType;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<JsonType, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Kind<'_> {
    type Value = JsonType;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<JsonType, E> {
        Ok(JsonType::Boolean)
    }
    fn visit_i64<E>(self, _: i64) -> Result<JsonType, E> {
        Ok(JsonType::Number)
    }
    fn visit_u64<E>(self, _: u64) -> Result<JsonType, E> {
        Ok(JsonType::Number)
    }
    fn visit_f64<E>(self, _: f64) -> Result<JsonType, E> {
        Ok(JsonType::Number)
    }
    fn visit_str<E>(self, _: &str) -> Result<JsonType, E> {
        Ok(JsonType::String)
    }
    fn visit_unit<E>(self) -> Result<JsonType, E> {
        Ok(JsonType::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsonType, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(JsonType::Array)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsonType, A::Error> {
        let Some(out) = self.keys else {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(JsonType::Object);
        };
        let mut keys: Vec<(Key<'de>, JsonType)> = Vec::new();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            keys.push((key, map.next_value_seed(Kind { keys: None })?));
        }
        keys.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
        out.push('{');
        for (k, t) in keys {
            out.push_str(k.as_str());
            out.push('\x01');
            out.push(t.code());
            out.push('\x00');
        }
        Ok(JsonType::Object)
    }
}
