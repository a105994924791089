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

/// Whether two JSON values are the same value: objects compared as maps, numbers by value
/// (`1`, `1.0` and `1e0` are equal). The same verdict as comparing canonical forms, without
/// producing them.
pub(crate) fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(x), Some(y), ..) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, x)| y.get(key).is_some_and(|y| same_json(x, y)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::{canonical_json, canonical_text, same_json};
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
    fn same_json_agrees_with_canonical_forms() {
        let cases = [
            (
                r#"{"a":1,"b":[1.0,"x"]}"#,
                r#"{ "b": [1e0, "x"], "a": 1.0 }"#,
            ),
            (r#"{"a":1}"#, r#"{"a":2}"#),
            (r#"[1,2]"#, r#"[2,1]"#),
            (r#"{"a":null}"#, r#"{}"#),
            (r#"18446744073709551615"#, r#"18446744073709551615.0"#),
            (r#"-5"#, r#"-5.0"#),
            (r#""a""#, r#""a""#),
        ];
        for (a, b) in cases {
            let (x, y): (serde_json::Value, serde_json::Value) = (
                serde_json::from_str(a).unwrap(),
                serde_json::from_str(b).unwrap(),
            );
            assert_eq!(
                same_json(&x, &y),
                canonical_json(&x) == canonical_json(&y),
                "{a} vs {b}"
            );
        }
    }

    #[test]
    fn integral_floats_and_integers_agree() {
        assert_eq!(canonical_json(&json!(-5.0)), canonical_json(&json!(-5)));
        assert_eq!(canonical_text("not json"), None);
    }
}
