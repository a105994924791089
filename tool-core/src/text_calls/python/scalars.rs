//! Python's strings and numbers, read as the JSON strings and numbers they are.

use serde_json::{Number, Value};

use super::Reader;
use crate::text_calls::TextError;

impl Reader<'_> {
    /// One or more adjacent string literals, concatenated as Python does.
    pub(super) fn strings(&mut self) -> Result<Value, TextError> {
        let mut out = String::new();
        self.strings_into(&mut out)?;
        Ok(Value::String(out))
    }

    /// One or more adjacent string literals, concatenated as Python does, appended to `out`.
    pub(super) fn strings_into(&mut self, out: &mut String) -> Result<(), TextError> {
        loop {
            self.string(out)?;
            let save = self.at;
            self.skip_space();
            let next = self.peek();
            let prefixed = matches!(next, Some(b'r' | b'R' | b'u' | b'U'))
                && matches!(self.bytes().get(self.at + 1), Some(b'"' | b'\''));
            if matches!(next, Some(b'"' | b'\'')) || prefixed {
                continue;
            }
            self.at = save;
            return Ok(());
        }
    }

    /// A string literal with an optional `r`/`u` prefix, appended to `out`.
    pub(super) fn string(&mut self, out: &mut String) -> Result<(), TextError> {
        let mut raw = false;
        while let Some(c @ (b'r' | b'R' | b'u' | b'U')) = self.peek() {
            raw |= matches!(c, b'r' | b'R');
            self.at += 1;
        }
        let start = self.at;
        let Some(quote @ (b'"' | b'\'')) = self.peek() else {
            return Err(self.error("expected a string"));
        };
        let b = self.bytes();
        let triple = b.get(self.at + 1) == Some(&quote) && b.get(self.at + 2) == Some(&quote);
        self.at += if triple { 3 } else { 1 };
        loop {
            let Some(&c) = b.get(self.at) else {
                self.at = start;
                return Err(TextError::Unterminated {
                    at: start,
                    reason: "a string is not closed".into(),
                });
            };
            if c == quote {
                if !triple {
                    self.at += 1;
                    return Ok(());
                }
                if b.get(self.at + 1) == Some(&quote) && b.get(self.at + 2) == Some(&quote) {
                    self.at += 3;
                    return Ok(());
                }
                out.push(quote as char);
                self.at += 1;
                continue;
            }
            if c == b'\n' && !triple {
                return Err(self.error("a line break inside a one-line string"));
            }
            if c == b'\\' {
                if raw {
                    // A raw string keeps the backslash, and an escaped quote does not end it.
                    out.push('\\');
                    self.at += 1;
                    if let Some(&next) = b.get(self.at)
                        && (next == quote || next == b'\\')
                    {
                        out.push(next as char);
                        self.at += 1;
                    }
                    continue;
                }
                self.escape(out)?;
                continue;
            }
            // Copy the run of characters up to the next quote, backslash or line break whole
            // (those are ASCII, so the run ends on a character boundary).
            let run = b[self.at + 1..]
                .iter()
                .position(|&c| c == quote || c == b'\\' || c == b'\n')
                .map_or(b.len(), |n| self.at + 1 + n);
            // The first byte is never a quote or a backslash here; a run always advances.
            let run = if self.text.is_char_boundary(run) {
                run
            } else {
                b.len()
            };
            out.push_str(&self.text[self.at..run]);
            self.at = run;
        }
    }

    pub(super) fn escape(&mut self, out: &mut String) -> Result<(), TextError> {
        let at = self.at;
        self.at += 1;
        let Some(c) = self.peek() else {
            return Err(self.error("a string ends in the middle of an escape"));
        };
        self.at += 1;
        let simple = match c {
            b'\n' => Some(None),
            b'\\' => Some(Some('\\')),
            b'\'' => Some(Some('\'')),
            b'"' => Some(Some('"')),
            b'a' => Some(Some('\u{7}')),
            b'b' => Some(Some('\u{8}')),
            b'f' => Some(Some('\u{c}')),
            b'n' => Some(Some('\n')),
            b'r' => Some(Some('\r')),
            b't' => Some(Some('\t')),
            b'v' => Some(Some('\u{b}')),
            _ => None,
        };
        if let Some(ch) = simple {
            if let Some(ch) = ch {
                out.push(ch);
            }
            return Ok(());
        }
        let hex = |reader: &mut Self, len: usize| -> Result<u32, TextError> {
            let digits = reader.text.get(reader.at..reader.at + len).unwrap_or("");
            if digits.len() != len || !digits.bytes().all(|d| d.is_ascii_hexdigit()) {
                reader.at = at;
                return Err(
                    reader.error(format!("a `\\{}` escape needs {len} hex digits", c as char))
                );
            }
            reader.at += len;
            Ok(u32::from_str_radix(digits, 16).unwrap_or(0))
        };
        let code = match c {
            b'x' => hex(self, 2)?,
            b'u' => hex(self, 4)?,
            b'U' => hex(self, 8)?,
            b'0'..=b'7' => {
                let mut n = u32::from(c - b'0');
                for _ in 0..2 {
                    match self.peek() {
                        Some(d @ b'0'..=b'7') => {
                            n = n * 8 + u32::from(d - b'0');
                            self.at += 1;
                        }
                        _ => break,
                    }
                }
                n
            }
            b'N' => {
                self.at = at;
                return Err(self.error("`\\N{...}` escapes are not supported"));
            }
            _ => {
                // Python keeps an unknown escape as it is written.
                out.push('\\');
                self.at -= 1;
                return Ok(());
            }
        };
        match char::from_u32(code) {
            Some(ch) => {
                out.push(ch);
                Ok(())
            }
            None => {
                self.at = at;
                Err(self.error("an escape names no Unicode character (a lone surrogate?)"))
            }
        }
    }

    /// An int or a float, with an optional sign, as Python writes them.
    pub(super) fn number(&mut self) -> Result<Value, TextError> {
        let start = self.at;
        let mut negative = false;
        if let Some(sign @ (b'-' | b'+')) = self.peek() {
            negative = sign == b'-';
            self.at += 1;
            self.skip_space();
            if matches!(self.peek(), Some(b'-' | b'+')) {
                self.at = start;
                return Err(self.error("a number with more than one sign is an expression"));
            }
        }
        let b = self.bytes();
        let body_start = self.at;
        let radix = match (b.get(self.at), b.get(self.at + 1)) {
            (Some(b'0'), Some(b'x' | b'X')) => 16,
            (Some(b'0'), Some(b'o' | b'O')) => 8,
            (Some(b'0'), Some(b'b' | b'B')) => 2,
            _ => 10,
        };
        if radix != 10 {
            self.at += 2;
            let digits_start = self.at;
            while b
                .get(self.at)
                .is_some_and(|d| d.is_ascii_alphanumeric() || *d == b'_')
            {
                self.at += 1;
            }
            let written = &b[digits_start..self.at];
            if !underscores_between_digits(written, true, |d| d.is_ascii_alphanumeric()) {
                self.at = start;
                return Err(self.error("`_` in a number must stand between two digits"));
            }
            let digits: String = self.text[digits_start..self.at]
                .chars()
                .filter(|c| *c != '_')
                .collect();
            let Ok(n) = u64::from_str_radix(&digits, radix) else {
                self.at = start;
                return Err(self.error("an integer literal that is malformed or beyond 64 bits"));
            };
            return int(self, start, negative, n);
        }
        let mut is_float = false;
        while let Some(&d) = b.get(self.at) {
            match d {
                b'0'..=b'9' | b'_' => self.at += 1,
                b'.' => {
                    is_float = true;
                    self.at += 1;
                }
                b'e' | b'E' => {
                    is_float = true;
                    self.at += 1;
                    if matches!(b.get(self.at), Some(b'+' | b'-')) {
                        self.at += 1;
                    }
                }
                b'j' | b'J' => {
                    self.at = start;
                    return Err(self.error("a complex number has no JSON form"));
                }
                _ => break,
            }
        }
        if !underscores_between_digits(&b[body_start..self.at], false, |d| d.is_ascii_digit()) {
            self.at = start;
            return Err(self.error("`_` in a number must stand between two digits"));
        }
        let text: String = self.text[body_start..self.at]
            .chars()
            .filter(|c| *c != '_')
            .collect();
        if text.is_empty() {
            self.at = start;
            return Err(self.error("expected a number"));
        }
        if !is_float {
            // Python refuses leading zeros in a decimal integer other than zero itself.
            if text.len() > 1 && text.starts_with('0') && text.bytes().any(|d| d != b'0') {
                self.at = start;
                return Err(self.error("a decimal integer with a leading zero is not Python"));
            }
            let Ok(n) = text.parse::<u64>() else {
                self.at = start;
                return Err(self.error("an integer beyond 64 bits has no exact JSON form here"));
            };
            return int(self, start, negative, n);
        }
        match text.parse::<f64>() {
            Ok(x) if x.is_finite() => {
                let x = if negative { -x } else { x };
                match Number::from_f64(x) {
                    Some(n) => Ok(Value::Number(n)),
                    None => Err(self.error("a number with no JSON form")),
                }
            }
            _ => {
                self.at = start;
                Err(self.error("a float literal that is malformed or out of range"))
            }
        }
    }
}

/// Python's rule for `_` in a number: each one stands between two digits (or, after a `0x`,
/// `0o` or `0b` prefix, may also come first).
fn underscores_between_digits(
    written: &[u8],
    after_prefix: bool,
    digit: impl Fn(&u8) -> bool,
) -> bool {
    written.iter().enumerate().all(|(i, c)| {
        *c != b'_'
            || ((if i == 0 {
                after_prefix
            } else {
                digit(&written[i - 1])
            }) && written.get(i + 1).is_some_and(&digit))
    })
}

fn int(reader: &mut Reader<'_>, start: usize, negative: bool, n: u64) -> Result<Value, TextError> {
    if !negative {
        return Ok(Value::Number(n.into()));
    }
    match i64::try_from(n)
        .ok()
        .map(|n| -n)
        .or((n == 1 << 63).then_some(i64::MIN))
    {
        Some(n) => Ok(Value::Number(n.into())),
        None => {
            reader.at = start;
            Err(reader.error("an integer beyond 64 bits has no exact JSON form here"))
        }
    }
}
