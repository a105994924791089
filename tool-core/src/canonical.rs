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

/// How deep [`exact_text`] reads before it leaves the text to [`exact_json`]: well within the
/// nesting `serde_json` parses, so the fallback sees the same value.
const TEXT_MAX_DEPTH: usize = 64;

/// The exact canonical form of JSON text, written straight from the text: the same string as
/// [`exact_json`] of the value `serde_json` parses from it, without building that value.
/// Strings without escapes and short integers are copied as they are; everything else is
/// written as [`exact_json`] writes it. `None` when the text is not JSON, has a duplicate key,
/// or nests deeper than [`TEXT_MAX_DEPTH`]: the caller then goes through a `Value`, whose
/// answer for such text this function does not try to reproduce.
pub(crate) fn exact_text(text: &str) -> Option<String> {
    let mut reader = TextReader {
        text,
        at: 0,
        // Room for an object's members twice, to reorder them.
        out: String::with_capacity(text.len().saturating_mul(2)),
        members: Vec::new(),
    };
    reader.value(TEXT_MAX_DEPTH)?;
    reader.skip_whitespace();
    (reader.at == text.len()).then_some(reader.out)
}

/// One object member as [`exact_text`] wrote it: its key and where it sits in the output.
struct Member<'a> {
    key: std::borrow::Cow<'a, str>,
    start: usize,
    end: usize,
}

struct TextReader<'a> {
    text: &'a str,
    at: usize,
    out: String,
    /// The members of the objects being written, innermost last (one buffer for all).
    members: Vec<Member<'a>>,
}

impl<'a> TextReader<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Option<()> {
        self.skip_whitespace();
        match self.peek()? {
            b'{' => self.object(depth.checked_sub(1)?),
            b'[' => self.array(depth.checked_sub(1)?),
            b'"' => {
                let string = self.string()?;
                match string {
                    std::borrow::Cow::Borrowed(raw) => {
                        self.out.push('"');
                        self.out.push_str(raw);
                        self.out.push('"');
                    }
                    std::borrow::Cow::Owned(decoded) => write_string(&decoded, &mut self.out),
                }
                Some(())
            }
            b't' => self.literal("true"),
            b'f' => self.literal("false"),
            b'n' => self.literal("null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &'static str) -> Option<()> {
        self.text[self.at..].starts_with(word).then_some(())?;
        self.at += word.len();
        self.out.push_str(word);
        Some(())
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        self.at += 1;
        self.out.push('[');
        self.skip_whitespace();
        if self.peek()? == b']' {
            self.at += 1;
            self.out.push(']');
            return Some(());
        }
        loop {
            self.value(depth)?;
            self.skip_whitespace();
            match self.peek()? {
                b',' => {
                    self.at += 1;
                    self.out.push(',');
                }
                b']' => {
                    self.at += 1;
                    self.out.push(']');
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn object(&mut self, depth: usize) -> Option<()> {
        self.at += 1;
        self.out.push('{');
        let open = self.out.len();
        let first = self.members.len();
        self.skip_whitespace();
        if self.peek()? == b'}' {
            self.at += 1;
            self.out.push('}');
            return Some(());
        }
        loop {
            self.skip_whitespace();
            if self.peek()? != b'"' {
                return None;
            }
            let key = self.string()?;
            self.skip_whitespace();
            if self.peek()? != b':' {
                return None;
            }
            self.at += 1;
            let start = self.out.len();
            write_key(&key, &mut self.out);
            self.out.push(':');
            self.value(depth)?;
            let end = self.out.len();
            self.members.push(Member { key, start, end });
            self.skip_whitespace();
            match self.peek()? {
                b',' => {
                    self.at += 1;
                    self.out.push(',');
                }
                b'}' => {
                    self.at += 1;
                    break;
                }
                _ => return None,
            }
        }
        let members = &mut self.members[first..];
        let ordered = |a: &Member<'_>, b: &Member<'_>| utf16_order(&a.key, &b.key);
        let sorted = members
            .windows(2)
            .all(|pair| ordered(&pair[0], &pair[1]) == std::cmp::Ordering::Less);
        if !sorted {
            // RFC 8785 orders keys by their UTF-16 code units; a key twice is not taken here.
            members.sort_by(ordered);
            if members
                .windows(2)
                .any(|pair| ordered(&pair[0], &pair[1]) == std::cmp::Ordering::Equal)
            {
                return None;
            }
            // The members in order after those written, which then give way to them.
            let written = self.out.len();
            for (i, member) in members.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                self.out.extend_from_within(member.start..member.end);
            }
            self.out.drain(open..written);
        }
        self.members.truncate(first);
        self.out.push('}');
        Some(())
    }

    /// The string at the cursor: the text between its quotes when it has no escape, else its
    /// decoded value.
    fn string(&mut self) -> Option<std::borrow::Cow<'a, str>> {
        let text: &'a str = self.text;
        let bytes = text.as_bytes();
        let start = self.at + 1;
        let mut at = start;
        let mut escaped = false;
        loop {
            at = plain_end(bytes, at);
            match *bytes.get(at)? {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    at += 2;
                }
                0..=0x1f => return None,
                _ => at += 1,
            }
        }
        self.at = at + 1;
        if escaped {
            serde_json::from_str::<String>(&text[start - 1..=at])
                .ok()
                .map(std::borrow::Cow::Owned)
        } else {
            Some(std::borrow::Cow::Borrowed(&text[start..at]))
        }
    }

    fn number(&mut self) -> Option<()> {
        let bytes = self.text.as_bytes();
        let start = self.at;
        let mut at = start;
        if bytes.get(at) == Some(&b'-') {
            at += 1;
        }
        let digits = at;
        match bytes.get(at)? {
            b'0' => at += 1,
            b'1'..=b'9' => {
                while bytes.get(at).is_some_and(u8::is_ascii_digit) {
                    at += 1;
                }
            }
            _ => return None,
        }
        let integer = at - digits;
        let mut plain = true;
        if bytes.get(at) == Some(&b'.') {
            plain = false;
            at += 1;
            let from = at;
            while bytes.get(at).is_some_and(u8::is_ascii_digit) {
                at += 1;
            }
            (at > from).then_some(())?;
        }
        if let Some(b'e' | b'E') = bytes.get(at) {
            plain = false;
            at += 1;
            if let Some(b'+' | b'-') = bytes.get(at) {
                at += 1;
            }
            let from = at;
            while bytes.get(at).is_some_and(u8::is_ascii_digit) {
                at += 1;
            }
            (at > from).then_some(())?;
        }
        self.at = at;
        let token = &self.text[start..at];
        // Up to 18 digits fit both u64 and i64, so such an integer is written as it is; `-0`
        // is the float negative zero.
        if (plain && integer <= 18 && token != "-0") || shortest_decimal(&token[digits - start..]) {
            self.out.push_str(token);
        } else {
            let number: serde_json::Number = token.parse().ok()?;
            write_number(&number, &mut self.out);
        }
        Some(())
    }
}

/// Where the run of bytes from `at` that can stand as they are inside a JSON string ends: the
/// first `"`, `\\` or control character from there, or the end of `bytes`. Reads eight bytes
/// at a time where it can.
pub(crate) fn plain_end(bytes: &[u8], mut at: usize) -> usize {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    // The bytes of `word` below `n`, flagged in their high bit. A subtraction borrows into a
    // byte only from a flagged byte below it, so the lowest flagged byte (the first in the
    // text, the word being read little-endian) is always one that is below `n`.
    let below = |word: u64, n: u8| word.wrapping_sub(ONES * u64::from(n)) & !word & HIGH;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let mut eight = [0; 8];
        eight.copy_from_slice(chunk);
        let word = u64::from_le_bytes(eight);
        let stop = below(word ^ (ONES * u64::from(b'"')), 1)
            | below(word ^ (ONES * u64::from(b'\\')), 1)
            | below(word, 0x20);
        if stop != 0 {
            // The first byte flagged is the first that stops the run.
            return at + (stop.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&c) = bytes.get(at) {
        if c == b'"' || c == b'\\' || c < 0x20 {
            return at;
        }
        at += 1;
    }
    at
}

/// Whether `digits` (a number without its sign, as JSON spells it) is a decimal fraction that
/// ECMAScript prints exactly as it is spelled: no exponent, no trailing zero, at most 15
/// significant digits and at most five zeros between the point and its first one. Every
/// decimal of up to 15 significant digits parses to a double no other such decimal parses
/// to, so its digits are the shortest that give that double back, which is what ECMAScript
/// prints; below 10^21 and from 10^-6 on, it prints them without an exponent.
fn shortest_decimal(digits: &str) -> bool {
    let Some((whole, fraction)) = digits.split_once('.') else {
        return false;
    };
    if !fraction.ends_with(|c: char| matches!(c, '1'..='9'))
        || !fraction.bytes().all(|b| b.is_ascii_digit())
    {
        return false;
    }
    let significant = if whole == "0" {
        let zeros = fraction.len() - fraction.trim_start_matches('0').len();
        if zeros > 5 {
            return false;
        }
        fraction.len() - zeros
    } else {
        whole.len() + fraction.len()
    };
    significant <= 15
}

/// Writes an object key as [`write_string`] would.
// The variant matters: a borrowed key is text without escapes, copied as it is.
#[allow(clippy::ptr_arg)]
fn write_key(key: &std::borrow::Cow<'_, str>, out: &mut String) {
    match key {
        std::borrow::Cow::Borrowed(raw) => {
            out.push('"');
            out.push_str(raw);
            out.push('"');
        }
        std::borrow::Cow::Owned(decoded) => write_string(decoded, out),
    }
}

/// RFC 8785's key order: by UTF-16 code units (byte order for ASCII keys).
fn utf16_order(a: &str, b: &str) -> std::cmp::Ordering {
    if a.is_ascii() && b.is_ascii() {
        a.cmp(b)
    } else {
        a.encode_utf16().cmp(b.encode_utf16())
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
    use super::{
        EXACT_MAX_DEPTH, canonical_json, canonical_text, exact_json, exact_text, same_json,
    };
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

    /// `exact_text` must give what `exact_json` gives for the value parsed from the same
    /// text, or leave the text to it.
    fn agrees(text: &str) -> bool {
        let through_value = serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|v| exact_json(&v));
        match exact_text(text) {
            Some(direct) => {
                assert_eq!(Some(&direct), through_value.as_ref(), "{text}");
                true
            }
            None => false,
        }
    }

    #[test]
    fn exact_text_writes_what_exact_json_writes() {
        let written = [
            r#"{"customerId":"cus_42","amount":120.5,"currency":"USD"}"#,
            r#" { "b" : [ 1 , 2.50 , -3e2 , 4E+1 , 0 ] , "a" : { "d" : null , "c" : true } } "#,
            r#"{"k":"line\nbreak \u00e9 \ud83d\ude00 \"quoted\" \\ \/"}"#,
            r#"{"\u00e9":1,"e":2,"\ud83d\ude00":3,"\uffff":4,"z":5}"#,
            r#"{"é":1,"😀":2,"￿":3,"a\"b":4}"#,
            r#"[-0, -0.0, 0.0, 1.0, 1e0, 100, 1e2, 1.8e18, 1800000000000000000]"#,
            r#"[123456789012345678, 1234567890123456789, 18446744073709551615, 18446744073709551616]"#,
            r#"[-123456789012345678, -9223372036854775808, -9223372036854775809, 0.1, 1e-7, 5e-324]"#,
            r#"[333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001, 1e21, 1e20]"#,
            r#""just a string""#,
            "true",
            "null",
            "[]",
            "{}",
            r#"{"a":{},"b":[[],{}]}"#,
        ];
        for text in written {
            assert!(agrees(text), "{text} is written directly");
        }
        let left = [
            r#"{"a":1,"a":2}"#,
            r#"{"b":1,"a":2,"b":3}"#,
            "[1,]",
            "{\"a\":1}x",
            "01",
            "1.",
            "-",
            "1e400",
            "\"tab\tinside\"",
            "\"\\ud800\"",
            "[1 2]",
            "{\"a\" 1}",
            "tru",
            "",
        ];
        for text in left {
            assert!(!agrees(text), "{text} is left to the value");
        }
        let deep = format!("{}1{}", "[".repeat(65), "]".repeat(65));
        assert!(!agrees(&deep));
        let shallow = format!("{}1{}", "[".repeat(64), "]".repeat(64));
        assert!(agrees(&shallow));
    }

    #[test]
    fn exact_text_agrees_with_exact_json_on_generated_values() {
        // A small deterministic generator: values of every kind, keys in any order, any
        // whitespace, escapes, numbers of every spelling.
        struct Gen(u64);
        impl Gen {
            fn next(&mut self) -> u64 {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                self.0
            }
            fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
                items[(self.next() % items.len() as u64) as usize]
            }
            fn space(&mut self, out: &mut String) {
                out.push_str(self.pick(&["", "", "", " ", "\n  ", "\t"]));
            }
            fn value(&mut self, out: &mut String, depth: u32) {
                self.space(out);
                match self.next() % if depth == 0 { 4 } else { 6 } {
                    0 => out.push_str(self.pick(&[
                        "0",
                        "-0",
                        "7",
                        "-12",
                        "1.0",
                        "2.5",
                        "-0.0",
                        "1e2",
                        "1E-3",
                        "6.02e23",
                        "12345678901234567890",
                        "99999999999999999999999",
                        "0.1",
                        "1e21",
                        "-9223372036854775808",
                        "18446744073709551615",
                        "3.0e0",
                    ])),
                    1 => out.push_str(self.pick(&[
                        r#""""#,
                        r#""plain""#,
                        r#""\n\t\"\\\/""#,
                        r#""\u00e9\u0000\u001f""#,
                        r#""😀 é ￿""#,
                        r#""\ud83d\ude00""#,
                        r#""a\u0062c""#,
                    ])),
                    2 => out.push_str(self.pick(&["true", "false", "null"])),
                    3 => out.push_str(self.pick(&[r#""x""#, "42"])),
                    4 => {
                        out.push('[');
                        let n = self.next() % 4;
                        for i in 0..n {
                            if i > 0 {
                                out.push(',');
                            }
                            self.value(out, depth - 1);
                        }
                        self.space(out);
                        out.push(']');
                    }
                    _ => {
                        out.push('{');
                        let mut keys = vec![
                            r#""a""#,
                            r#""b""#,
                            r#""B""#,
                            r#""ab""#,
                            r#""é""#,
                            r#""\u00e9x""#,
                            r#""😀""#,
                            r#""￿""#,
                            r#""\n""#,
                            r#""""#,
                            r#""a\"""#,
                            r#""z""#,
                        ];
                        let n = self.next() % 5;
                        for i in 0..n {
                            let at = (self.next() % keys.len() as u64) as usize;
                            let key = keys.swap_remove(at);
                            if i > 0 {
                                out.push(',');
                            }
                            self.space(out);
                            out.push_str(key);
                            self.space(out);
                            out.push(':');
                            self.value(out, depth - 1);
                        }
                        self.space(out);
                        out.push('}');
                    }
                }
                self.space(out);
            }
        }
        let mut generator = Gen(0x9e37_79b9_7f4a_7c15);
        let mut direct = 0;
        for _ in 0..5_000 {
            let mut text = String::new();
            generator.value(&mut text, 4);
            if agrees(&text) {
                direct += 1;
            }
        }
        // Nearly every generated text is valid and has no duplicate key.
        assert!(direct > 4_000, "{direct}");
    }

    #[test]
    fn decimals_copied_as_spelled_are_what_ecmascript_prints() {
        // Around each bound of the copy: 15 and 16 significant digits, five and six zeros
        // after the point, trailing zeros, integer parts of every length.
        let mut generator = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |below: u64| {
            generator ^= generator << 13;
            generator ^= generator >> 7;
            generator ^= generator << 17;
            generator % below
        };
        let mut copied = 0;
        for _ in 0..20_000 {
            let mut text = String::new();
            if next(2) == 0 {
                text.push('-');
            }
            let whole = next(18);
            if whole == 0 {
                text.push('0');
            } else {
                text.push(char::from(b'1' + next(9) as u8));
                for _ in 1..whole {
                    text.push(char::from(b'0' + next(10) as u8));
                }
            }
            text.push('.');
            for _ in 0..next(8) {
                text.push('0');
            }
            for _ in 0..=next(18) {
                text.push(char::from(b'0' + next(10) as u8));
            }
            let through_value = exact_json(&serde_json::from_str(&text).unwrap());
            assert_eq!(exact_text(&text), through_value, "{text}");
            if through_value.as_deref() == Some(text.as_str()) {
                copied += 1;
            }
        }
        assert!(copied > 2_000, "{copied}");
        for (text, printed) in [
            ("0.1", "0.1"),
            ("0.000001", "0.000001"),
            ("0.0000001", "1e-7"),
            ("123456789012.345", "123456789012.345"),
            ("1234567890123.4567", "1234567890123.4568"),
            ("0.30000000000000004", "0.30000000000000004"),
            ("1.0000000000000001", "1"),
            ("2.50", "2.5"),
        ] {
            assert_eq!(exact_text(text).as_deref(), Some(printed), "{text}");
        }
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
