//! Canonical JSON (RFC 8785, the JSON Canonicalization Scheme): one byte string per JSON value,
//! whatever the key order, whitespace or number spelling of the text it came from.

use serde_json::Value;

/// The RFC 8785 canonical form of `value`: keys sorted by UTF-16 code units, no whitespace,
/// minimal string escapes, numbers as ECMAScript prints them (`1.0`, `1e0` and `1` are all `1`).
///
/// ```
/// use serde_json::json;
/// use tool_core::ledger::canonical_json;
///
/// let a: serde_json::Value = serde_json::from_str(r#"{ "b": 1.0, "a": [1e2, "\u00e9"] }"#).unwrap();
/// assert_eq!(canonical_json(&a), r#"{"a":[100,"é"],"b":1}"#);
/// assert_eq!(canonical_json(&a), canonical_json(&json!({"a": [100, "é"], "b": 1})));
/// ```
pub fn canonical_json(value: &Value) -> String {
    // Serializing a `Value` cannot fail: every number in one is finite and every key a string.
    serde_json_canonicalizer::to_string(value).unwrap_or_else(|_| value.to_string())
}

/// How deep [`exact_json`] goes before it gives up: deeper than any parser in this crate
/// builds a value.
pub(crate) const EXACT_MAX_DEPTH: usize = 256;

/// The exact canonical form of `value`: RFC 8785's (sorted keys, no whitespace, the same
/// string escapes) except for numbers, which keep the exact value a handler receives instead
/// of being rounded to a double. An integer is written with all its digits, so
/// `9007199254740993` and `9007199254740992` stay apart; a float with no fractional part below
/// 10^21 is written as the integer it is (`1.8e18` and `1800000000000000000` are one value),
/// negative zero as `-0`, any other float as ECMAScript prints it. `None` when `value` nests
/// deeper than [`EXACT_MAX_DEPTH`].
///
/// Two values have the same exact form only if every number in them is the same number, so a
/// signature over it binds the values a handler will receive.
pub(crate) fn exact_json(value: &Value) -> Option<String> {
    let mut out = String::new();
    write_exact(value, &mut out, EXACT_MAX_DEPTH).then_some(out)
}

fn write_exact(value: &Value, out: &mut String, depth: usize) -> bool {
    match value {
        Value::Number(number) => write_number(number, out),
        Value::Array(items) => {
            let Some(depth) = depth.checked_sub(1) else {
                return false;
            };
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if !write_exact(item, out, depth) {
                    return false;
                }
            }
            out.push(']');
        }
        Value::Object(map) => {
            let Some(depth) = depth.checked_sub(1) else {
                return false;
            };
            // RFC 8785 orders keys by their UTF-16 code units.
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_unstable_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                if !write_exact(item, out, depth) {
                    return false;
                }
            }
            out.push('}');
        }
        Value::String(text) => write_string(text, out),
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
    }
    true
}

fn write_string(text: &str, out: &mut String) {
    // serde_json escapes exactly what RFC 8785 escapes, the same way.
    out.push_str(&Value::from(text).to_string());
}

fn write_number(number: &serde_json::Number, out: &mut String) {
    use std::fmt::Write as _;
    // The same three kinds a handler's parser sees: u64, i64, or f64.
    if let Some(n) = number.as_u64() {
        let _ = write!(out, "{n}");
    } else if let Some(n) = number.as_i64() {
        let _ = write!(out, "{n}");
    } else if let Some(f) = number.as_f64() {
        if f == 0.0 && f.is_sign_negative() {
            out.push_str("-0");
        } else if f.fract() == 0.0 && f.abs() < 1e21 {
            // Exact: every integral double below 10^21 fits an i128.
            let _ = write!(out, "{}", f as i128);
        } else {
            out.push_str(&canonical_json(&Value::Number(number.clone())));
        }
    }
}

/// The exact canonical form of JSON text (see [`exact_json`]), or `None` when the text is not
/// JSON.
pub(crate) fn canonical_text(text: &str) -> Option<String> {
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|value| exact_json(&value))
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
    use super::{EXACT_MAX_DEPTH, canonical_json, canonical_text, exact_json, same_json};
    use serde_json::json;

    #[test]
    fn follows_rfc_8785() {
        // The example of RFC 8785, section 3.2.2, without its non-BMP key.
        let text = r#"{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
            "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}"#;
        assert_eq!(
            canonical_json(&serde_json::from_str(text).unwrap()),
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

    #[test]
    fn exact_form_keeps_every_integer_and_otherwise_follows_rfc_8785() {
        let exact = |text: &str| exact_json(&serde_json::from_str(text).unwrap()).unwrap();
        // Numbers a double cannot tell apart stay apart.
        for (a, b) in [
            ("9007199254740993", "9007199254740992"),
            ("1800000000000000100", "1800000000000000000"),
            ("18446744073709551615", "18446744073709551614"),
            ("-9223372036854775808", "-9223372036854775807"),
            ("-0", "0"),
        ] {
            assert_ne!(exact(a), exact(b), "{a} vs {b}");
            let rfc = |text: &str| canonical_json(&serde_json::from_str(text).unwrap());
            assert_eq!(rfc(a), rfc(b), "RFC 8785 merges {a} and {b}");
        }
        assert_eq!(exact("18446744073709551615"), "18446744073709551615");
        assert_eq!(exact("-9223372036854775808"), "-9223372036854775808");
        // The same number however it is spelled: the value a handler receives.
        for (a, b) in [
            ("1800000000000000000", "1.8e18"),
            ("1", "1.0"),
            ("100", "1e2"),
            ("1152921504606846976", "1152921504606846976.0"),
            ("-0.0", "-0"),
        ] {
            assert_eq!(exact(a), exact(b), "{a} vs {b}");
        }
        // A double with no fraction is written as the integer it is, not as ECMAScript
        // rounds its digits (`1152921504606847000`).
        assert_eq!(exact("1152921504606846976.0"), "1152921504606846976");
        assert_ne!(exact("1152921504606846976.0"), exact("1152921504606847000"));
        // Everything else is RFC 8785.
        let text = r#"{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
            "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false],
            "\u00e9": 1, "\ud83d\ude00": 2, "\uffff": 3}"#;
        assert_eq!(exact(text), canonical_text(text).unwrap());
        assert_eq!(
            exact(text),
            canonical_json(&serde_json::from_str(text).unwrap())
        );
    }

    #[test]
    fn exact_form_refuses_values_deeper_than_its_bound() {
        let mut value = json!(1);
        for _ in 0..EXACT_MAX_DEPTH {
            value = json!([value]);
        }
        assert!(exact_json(&value).is_some());
        let value = json!({ "a": value });
        assert_eq!(exact_json(&value), None);
    }
}
