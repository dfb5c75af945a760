//! Helpers shared by the `dfft` integration tests.

use serde_json::Value;

/// The fields of a report's `problem` and `result` objects, flat (the common JSON schema,
/// docs/schema/dfft-report.schema.json, nests them; these tests read fields by name).
pub fn flat(v: Value) -> Value {
    let mut out = serde_json::Map::new();
    for part in ["problem", "result"] {
        if let Some(Value::Object(fields)) = v.get(part) {
            out.extend(fields.clone());
        }
    }
    Value::Object(out)
}
