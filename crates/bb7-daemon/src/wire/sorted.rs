//! A JSON value written with the keys of every object sorted, without copying it: the reply
//! lines' key order ([`crate::wire::replies`]) whatever order the build's `serde_json`
//! keeps its maps in.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Value};

/// Serializes the value it borrows with sorted object keys.
pub struct Sorted<'a>(pub &'a Value);

/// Serializes the map it borrows with sorted keys (values [`Sorted`] too).
pub struct SortedMap<'a>(pub &'a Map<String, Value>);

impl Serialize for Sorted<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(map) => SortedMap(map).serialize(serializer),
            Value::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&Sorted(item))?;
                }
                seq.end()
            }
            other => other.serialize(serializer),
        }
    }
}

impl Serialize for SortedMap<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_map(Some(self.0.len()))?;
        // Without `preserve_order` the map iterates sorted already: no sorting needed.
        if self.0.keys().is_sorted() {
            for (key, value) in self.0 {
                out.serialize_entry(key, &Sorted(value))?;
            }
        } else {
            let mut entries: Vec<(&String, &Value)> = self.0.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            for (key, value) in entries {
                out.serialize_entry(key, &Sorted(value))?;
            }
        }
        out.end()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn nested_objects_come_out_sorted() {
        let mut inner = Map::new();
        inner.insert("z".into(), 1.into());
        inner.insert(
            "a".into(),
            Value::Array(vec![serde_json::json!({"y": 1, "b": [2]})]),
        );
        let value = Value::Object(inner);
        assert_eq!(
            serde_json::to_string(&Sorted(&value)).unwrap(),
            r#"{"a":[{"b":[2],"y":1}],"z":1}"#
        );
    }
}
