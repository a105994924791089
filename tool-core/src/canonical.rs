//! Canonical JSON (RFC 8785, the JSON Canonicalization Scheme): one byte string per JSON value,
//! whatever the key order, whitespace or number spelling of the text it came from.

use serde_json::Value;

/// The RFC 8785 canonical form of `value`: keys sorted by UTF-16 code units, no whitespace,
/// minimal string escapes, numbers as ECMAScript prints them (`1.0`, `1e0` and `1` are all `1`).
///
/// ```
/// use serde_json::json;
/// use tool_core::canonical_json;
///
/// let a: serde_json::Value = serde_json::from_str(r#"{ "b": 1.0, "a": [1e2, "\u00e9"] }"#).unwrap();
/// assert_eq!(canonical_json(&a), r#"{"a":[100,"é"],"b":1}"#);
/// assert_eq!(canonical_json(&a), canonical_json(&json!({"a": [100, "é"], "b": 1})));
/// ```
pub fn canonical_json(value: &Value) -> String {
    // Serializing a `Value` cannot fail: every number in one is finite and every key a string.
    serde_json_canonicalizer::to_string(value).unwrap_or_else(|_| value.to_string())
}

/// The canonical form of JSON text, or `None` when the text is not JSON.
pub(crate) fn canonical_text(text: &str) -> Option<String> {
    serde_json::from_str::<Value>(text)
        .ok()
        .map(|value| canonical_json(&value))
}

#[cfg(test)]
mod tests {
    use super::{canonical_json, canonical_text};
    use serde_json::json;

    #[test]
    fn follows_rfc_8785() {
        // The example of RFC 8785, section 3.2.2, without its non-BMP key.
        let text = r#"{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
            "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}"#;
        assert_eq!(
            canonical_text(text).unwrap(),
            "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],\"string\":\"€$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}"
        );
    }

    #[test]
    fn integral_floats_and_integers_agree() {
        assert_eq!(canonical_json(&json!(-5.0)), canonical_json(&json!(-5)));
        assert_eq!(canonical_text("not json"), None);
    }
}
