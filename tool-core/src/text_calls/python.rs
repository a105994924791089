//! Python call syntax, read without evaluating anything: `get_weather(city="Paris", days=3)`
//! and lists of such calls, with arguments that are Python literals converted to JSON exactly.
//! Anything that is not a literal (a name, an operator, a call, a comprehension) is refused
//! with the reason and its byte offset; JSON's `true`, `false` and `null` are the only names
//! read, as the literals they mean.

use std::borrow::Cow;
use std::collections::HashSet;
use std::ops::Range;

use serde_json::map::Entry;
use serde_json::{Map, Value};

use super::TextError;

mod scalars;

/// One call in Python syntax.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PyCall {
    pub(crate) name: String,
    pub(crate) positional: Vec<Value>,
    /// The keyword arguments as a JSON object's text, in the order given.
    pub(crate) keyword: String,
    pub(crate) span: Range<usize>,
}

/// The keyword arguments of a call as they are read: their JSON object's text, written as
/// each comes, and their names, to refuse one given twice.
struct Keywords<'a> {
    text: Vec<u8>,
    names: Vec<Cow<'a, str>>,
    /// The names, once there are more than a few to look through.
    many: Option<HashSet<Cow<'a, str>>>,
}

impl<'a> Keywords<'a> {
    /// Past this many names, they are looked up in a set.
    const FEW: usize = 16;

    fn new() -> Self {
        Keywords {
            text: {
                // Enough for the arguments of most calls without growing.
                let mut text = Vec::with_capacity(128);
                text.push(b'{');
                text
            },
            names: Vec::new(),
            many: None,
        }
    }

    /// Whether no argument was added: the text is still the opening brace.
    fn is_empty(&self) -> bool {
        self.text.len() == 1
    }

    /// Adds `name` (a Python identifier: nothing in it needs escaping) with `value`; gives
    /// the name back if it was given before.
    fn add(
        &mut self,
        name: Cow<'a, str>,
        value: &impl serde::Serialize,
    ) -> Result<(), Cow<'a, str>> {
        let repeated = match &mut self.many {
            Some(many) => many.contains(&name),
            None => self.names.contains(&name),
        };
        if repeated {
            return Err(name);
        }
        if !self.is_empty() {
            self.text.push(b',');
        }
        self.text.push(b'"');
        self.text.extend_from_slice(name.as_bytes());
        self.text.extend_from_slice(b"\":");
        // A JSON value or a string always serializes.
        let _ = serde_json::to_writer(&mut self.text, value);
        match &mut self.many {
            Some(many) => {
                many.insert(name);
            }
            None if self.names.len() == Self::FEW => {
                let mut many: HashSet<Cow<'a, str>> = self.names.drain(..).collect();
                many.insert(name);
                self.many = Some(many);
            }
            None => self.names.push(name),
        }
        Ok(())
    }

    /// The object's text.
    fn finish(mut self) -> String {
        self.text.push(b'}');
        // Names are ASCII and serde_json writes UTF-8.
        String::from_utf8(self.text).unwrap_or_default()
    }
}

/// How deep literals may nest.
const MAX_DEPTH: usize = 128;

pub(crate) struct Reader<'a> {
    text: &'a str,
    at: usize,
}

/// The bytes of a name after its first: ASCII letters, digits and `_`.
static NAME_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut c = 0;
    while c < 256 {
        let byte = c as u8;
        table[c] = byte.is_ascii_alphanumeric() || byte == b'_';
        c += 1;
    }
    table
};

impl<'a> Reader<'a> {
    pub(crate) fn new(text: &'a str, at: usize) -> Self {
        Reader { text, at }
    }

    pub(crate) fn at(&self) -> usize {
        self.at
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.at).copied()
    }

    pub(crate) fn skip_space(&mut self) {
        while let Some(b) = self.peek() {
            if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                self.at += 1;
            } else {
                break;
            }
        }
    }

    fn error(&self, reason: impl Into<String>) -> TextError {
        if self.at >= self.text.len() {
            TextError::Unterminated {
                at: self.at,
                reason: reason.into(),
            }
        } else {
            TextError::Invalid {
                at: self.at,
                reason: reason.into(),
            }
        }
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<(), TextError> {
        self.skip_space();
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else if self.at >= self.text.len() {
            Err(self.error(format!("the text ends where {what} was expected")))
        } else {
            Err(self.error(format!("expected {what}")))
        }
    }

    /// A name: `[A-Za-z_][A-Za-z0-9_]*`, ASCII only.
    fn name(&mut self) -> Option<&'a str> {
        let start = self.at;
        let b = self.bytes();
        if !b
            .get(self.at)
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        {
            return None;
        }
        while b
            .get(self.at)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            self.at += 1;
        }
        Some(&self.text[start..self.at])
    }

    /// A name of a function or a keyword argument, where a Markdown-escaped underscore `\_`
    /// (never Python) reads as `_`.
    fn identifier(&mut self) -> Option<Cow<'a, str>> {
        let b = self.bytes();
        let escaped = |at: usize| b.get(at) == Some(&b'\\') && b.get(at + 1) == Some(&b'_');
        if !(b
            .get(self.at)
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
            || escaped(self.at))
        {
            return None;
        }
        // The run of the name, then one copy of it (without the escapes, if any).
        let start = self.at;
        let mut at = start;
        let mut escapes = false;
        loop {
            match b.get(at) {
                Some(&c) if NAME_BYTES[usize::from(c)] => at += 1,
                Some(b'\\') if escaped(at) => {
                    escapes = true;
                    at += 2;
                }
                _ => break,
            }
        }
        self.at = at;
        // The run is ASCII: its ends are char boundaries.
        let run = &self.text[start..at];
        Some(if escapes {
            Cow::Owned(run.replace("\\_", "_"))
        } else {
            Cow::Borrowed(run)
        })
    }

    /// A call `name(args)`, the name possibly dotted (`math.factorial`).
    pub(crate) fn call(&mut self) -> Result<PyCall, TextError> {
        self.skip_space();
        let start = self.at;
        let mut name = match self.identifier() {
            Some(name) => name.into_owned(),
            None => return Err(self.error("expected a function name")),
        };
        while self.peek() == Some(b'.') {
            self.at += 1;
            match self.identifier() {
                Some(part) => {
                    name.push('.');
                    name.push_str(&part);
                }
                None => return Err(self.error("expected a name after `.`")),
            }
        }
        self.expect(b'(', "`(` after the function name")?;
        let mut positional = Vec::new();
        let mut keyword = Keywords::new();
        // A keyword argument's string, read here rather than into a `Value`.
        let mut string = String::new();
        loop {
            self.skip_space();
            match self.peek() {
                Some(b')') => {
                    self.at += 1;
                    break;
                }
                None => return Err(self.error("the call is not closed with `)`")),
                _ => {}
            }
            // `name=` starts a keyword argument; a name without `=` is a variable: refused.
            let save = self.at;
            let keyword_name = match self.identifier() {
                Some(word) => {
                    self.skip_space();
                    if self.peek() == Some(b'=') && self.bytes().get(self.at + 1) != Some(&b'=') {
                        self.at += 1;
                        Some(word)
                    } else {
                        self.at = save;
                        None
                    }
                }
                None => None,
            };
            let value_at = self.at;
            match keyword_name {
                Some(word) => {
                    self.skip_space();
                    let added = if matches!(self.peek(), Some(b'"' | b'\'')) {
                        // A string, the commonest argument: read as `literal` reads it, and
                        // written without a `Value` between.
                        string.clear();
                        self.strings_into(&mut string)?;
                        self.no_operator_after()?;
                        keyword.add(word, &string.as_str())
                    } else {
                        let value = self.literal(0)?;
                        keyword.add(word, &value)
                    };
                    if let Err(word) = added {
                        self.at = save;
                        return Err(self.error(format!("the argument `{word}` is given twice")));
                    }
                }
                None => {
                    let value = self.literal(0)?;
                    if !keyword.is_empty() {
                        self.at = value_at;
                        return Err(self.error("a positional argument follows a keyword argument"));
                    }
                    positional.push(value);
                }
            }
            self.after_argument()?;
        }
        Ok(PyCall {
            name,
            positional,
            keyword: keyword.finish(),
            span: start..self.at,
        })
    }

    /// What may follow an argument: `,` (passed over) or `)`.
    fn after_argument(&mut self) -> Result<(), TextError> {
        self.item_end(
            b')',
            "the call is not closed with `)`",
            "expected `,` or `)` after an argument",
        )
        .map(drop)
    }

    /// What may follow an item of a list: after any space, a `,`, passed over (`true`), or
    /// `close`, left for the caller (`false`). `unclosed` if the text ends, `expected` at any
    /// other byte.
    #[inline]
    fn item_end(
        &mut self,
        close: u8,
        unclosed: &'static str,
        expected: &'static str,
    ) -> Result<bool, TextError> {
        self.skip_space();
        match self.peek() {
            Some(b',') => {
                self.at += 1;
                Ok(true)
            }
            Some(c) if c == close => Ok(false),
            None => Err(self.error(unclosed)),
            _ => Err(self.error(expected)),
        }
    }

    /// A list of calls `[f(...), g(...)]`, a list of strings that each hold one call
    /// `['f(...)', "g(...)"]`, or calls separated by `;` or `,` (`f(...); g(...);`).
    pub(crate) fn calls(&mut self) -> Result<Vec<PyCall>, TextError> {
        self.skip_space();
        if self.peek() != Some(b'[') {
            let mut calls = vec![self.call()?];
            loop {
                let save = self.at;
                self.skip_space();
                if !matches!(self.peek(), Some(b';' | b',')) {
                    self.at = save;
                    return Ok(calls);
                }
                self.at += 1;
                let after = self.at;
                self.skip_space();
                if self.identifier().is_none() {
                    // A last separator with no call after it.
                    self.at = after;
                    return Ok(calls);
                }
                self.at = after;
                calls.push(self.call()?);
            }
        }
        self.at += 1;
        self.skip_space();
        if matches!(self.peek(), Some(b'"' | b'\'')) {
            return self.call_strings();
        }
        let mut calls = Vec::new();
        loop {
            self.skip_space();
            match self.peek() {
                Some(b']') => {
                    self.at += 1;
                    return Ok(calls);
                }
                None => return Err(self.error("the list of calls is not closed with `]`")),
                _ => {}
            }
            calls.push(self.call()?);
            self.after_call()?;
        }
    }

    /// The rest of a list whose items are strings that each hold one call, from its first
    /// item.
    fn call_strings(&mut self) -> Result<Vec<PyCall>, TextError> {
        let mut calls = Vec::new();
        loop {
            self.skip_space();
            match self.peek() {
                Some(b']') => {
                    self.at += 1;
                    return Ok(calls);
                }
                Some(b'"' | b'\'') => {}
                None => return Err(self.error("the list of calls is not closed with `]`")),
                _ => return Err(self.error("expected a string holding a call")),
            }
            let start = self.at;
            let Value::String(inner) = self.strings()? else {
                return Err(self.error("expected a string holding a call"));
            };
            let invalid = |reason: String| TextError::Invalid {
                at: start,
                reason: format!("the string does not hold one call: {reason}"),
            };
            let mut reader = Reader::new(&inner, 0);
            let mut call = reader.call().map_err(|error| match error {
                TextError::Invalid { reason, .. } | TextError::Unterminated { reason, .. } => {
                    invalid(reason)
                }
                other => other,
            })?;
            reader.skip_space();
            if reader.at() != inner.len() {
                return Err(invalid("text after the call".into()));
            }
            call.span = start..self.at;
            calls.push(call);
            self.after_call()?;
        }
    }

    /// What may follow a call in a list of calls: `,` (passed over) or `]`.
    fn after_call(&mut self) -> Result<(), TextError> {
        self.item_end(
            b']',
            "the list of calls is not closed with `]`",
            "expected `,` or `]` after a call",
        )
        .map(drop)
    }

    /// One Python literal at the reader's position, as JSON.
    /// (What follows it is the caller's to judge.)
    pub(crate) fn value(&mut self) -> Result<Value, TextError> {
        self.bare_literal(0)
    }

    /// One Python literal, as JSON, not followed by an operator.
    fn literal(&mut self, depth: usize) -> Result<Value, TextError> {
        let value = self.bare_literal(depth)?;
        self.no_operator_after()?;
        Ok(value)
    }

    /// One Python literal, as JSON.
    fn bare_literal(&mut self, depth: usize) -> Result<Value, TextError> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("literals nest deeper than {MAX_DEPTH} levels")));
        }
        self.skip_space();
        let Some(b) = self.peek() else {
            return Err(self.error("the text ends where a value was expected"));
        };
        let value = match b {
            b'[' => {
                self.at += 1;
                Value::Array(self.sequence(b']', depth)?.0)
            }
            b'(' => {
                self.at += 1;
                let (items, trailing_comma) = self.sequence(b')', depth)?;
                if items.len() == 1 && !trailing_comma {
                    // `(x)` is x in parentheses, not a tuple.
                    items.into_iter().next().unwrap_or(Value::Null)
                } else {
                    Value::Array(items)
                }
            }
            b'{' => {
                self.at += 1;
                self.dict(depth)?
            }
            b'"' | b'\'' => self.strings()?,
            b'-' | b'+' | b'0'..=b'9' | b'.' => self.number()?,
            _ => {
                let start = self.at;
                match self.name() {
                    // JSON's spellings too: no Python program means a variable by them.
                    Some("True" | "true") => Value::Bool(true),
                    Some("False" | "false") => Value::Bool(false),
                    Some("None" | "null") => Value::Null,
                    Some(prefix)
                        if prefix.len() <= 2
                            && matches!(self.peek(), Some(b'"' | b'\''))
                            && prefix.bytes().all(|c| {
                                matches!(c, b'r' | b'R' | b'u' | b'U' | b'b' | b'B' | b'f' | b'F')
                            }) =>
                    {
                        let lower = prefix.to_ascii_lowercase();
                        if lower.contains('b') {
                            self.at = start;
                            return Err(self.error("a bytes literal has no JSON form"));
                        }
                        if lower.contains('f') {
                            self.at = start;
                            return Err(self.error("an f-string is an expression, not a literal"));
                        }
                        self.at = start;
                        self.strings()?
                    }
                    Some(word) if self.peek() == Some(b'(') => {
                        self.at = start;
                        return Err(self.error(format!(
                            "`{word}(…)` is a call inside the arguments; it is not evaluated"
                        )));
                    }
                    Some(word) => {
                        self.at = start;
                        return Err(self.error(format!(
                            "`{word}` is a name, not a literal: only strings, numbers, True, False, None, lists, tuples and dicts are accepted, and nothing is evaluated"
                        )));
                    }
                    None => return Err(self.error("expected a literal value")),
                }
            }
        };
        Ok(value)
    }

    /// A literal followed by an operator or a call is an expression: refused.
    fn no_operator_after(&mut self) -> Result<(), TextError> {
        self.skip_space();
        if let Some(next) = self.peek()
            && matches!(
                next,
                b'+' | b'-'
                    | b'*'
                    | b'/'
                    | b'%'
                    | b'('
                    | b'['
                    | b'.'
                    | b'|'
                    | b'&'
                    | b'<'
                    | b'>'
                    | b'@'
                    | b'^'
                    | b'='
                    | b'!'
                    | b'~'
            )
        {
            return Err(self.error("an expression is not a literal; nothing is evaluated"));
        }
        if let Some(rest) = self.text.get(self.at..)
            && (rest.starts_with("if ")
                || rest.starts_with("for ")
                || rest.starts_with("and ")
                || rest.starts_with("or "))
        {
            return Err(self.error("an expression is not a literal; nothing is evaluated"));
        }
        Ok(())
    }

    /// Items up to `close`; whether a comma came after the last one.
    fn sequence(&mut self, close: u8, depth: usize) -> Result<(Vec<Value>, bool), TextError> {
        let (unclosed, expected) = if close == b']' {
            ("`]` is not closed", "expected `,` or `]`")
        } else {
            ("`)` is not closed", "expected `,` or `)`")
        };
        let mut items = Vec::new();
        let mut trailing = false;
        loop {
            self.skip_space();
            match self.peek() {
                Some(c) if c == close => {
                    self.at += 1;
                    return Ok((items, trailing));
                }
                None => return Err(self.error(unclosed)),
                _ => {}
            }
            items.push(self.literal(depth + 1)?);
            trailing = self.item_end(close, unclosed, expected)?;
        }
    }

    fn dict(&mut self, depth: usize) -> Result<Value, TextError> {
        let mut map = Map::new();
        loop {
            self.skip_space();
            match self.peek() {
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Value::Object(map));
                }
                None => return Err(self.error("`{` is not closed")),
                _ => {}
            }
            let key_at = self.at;
            let key = match self.literal(depth + 1)? {
                Value::String(key) => key,
                _ => {
                    self.at = key_at;
                    return Err(self.error("a dict key must be a string to be a JSON object key"));
                }
            };
            self.skip_space();
            if self.peek() != Some(b':') {
                if matches!(self.peek(), Some(b',' | b'}')) {
                    self.at = key_at;
                    return Err(self.error("a set has no JSON form"));
                }
                return Err(self.error("expected `:` after a dict key"));
            }
            self.at += 1;
            let value = self.literal(depth + 1)?;
            match map.entry(key) {
                Entry::Vacant(entry) => {
                    entry.insert(value);
                }
                Entry::Occupied(entry) => {
                    self.at = key_at;
                    let key = entry.key();
                    return Err(self.error(format!("the dict key {key:?} is given twice")));
                }
            }
            self.item_end(b'}', "`{` is not closed", "expected `,` or `}` in a dict")?;
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn one(text: &str) -> Result<PyCall, TextError> {
        let mut reader = Reader::new(text, 0);
        let call = reader.call()?;
        reader.skip_space();
        assert_eq!(reader.at(), text.len(), "trailing text in {text:?}");
        Ok(call)
    }

    #[test]
    fn literals_become_json_exactly() {
        assert_eq!(
            one("f(0x_1F, -1_0.2_5, + 3)").unwrap().positional,
            [json!(31), json!(-10.25), json!(3)]
        );
        let call = one(r#"f(1, -2, 3.5, 1e3, 0x1F, 1_000, 'it''s', "a\tb", '''x
y''', r'\d+', True, False, None, (1,), (2), [1, (2, 3)], {'k': [None]}, u"é\u00e9\x41")"#)
        .unwrap();
        assert_eq!(call.name, "f");
        assert_eq!(
            Value::Array(call.positional),
            json!([1, -2, 3.5, 1000.0, 31, 1000, "its", "a\tb", "x\ny", "\\d+", true, false, null, [1], 2, [1, [2, 3]], {"k": [null]}, "ééA"])
        );
    }

    #[test]
    fn keyword_arguments_and_dotted_names() {
        let call = one(r#"math.hypot(x=3, y = 4.0 ,)"#).unwrap();
        assert_eq!(call.name, "math.hypot");
        assert!(call.positional.is_empty());
        assert_eq!(call.keyword, r#"{"x":3,"y":4.0}"#);
        // Past the few names looked through one by one, a repeated one is still found, and
        // the object keeps the order given.
        let names: Vec<String> = (0..40).map(|i| format!("k{i}")).collect();
        let arguments = |value: &dyn Fn(&str) -> String| {
            let written: Vec<String> = names.iter().map(|n| format!("{n}={}", value(n))).collect();
            written.join(", ")
        };
        let call = one(&format!("f({})", arguments(&|n| format!("'{n}'")))).unwrap();
        let expected: serde_json::Map<String, Value> =
            names.iter().map(|n| (n.clone(), json!(n))).collect();
        assert_eq!(call.keyword, Value::Object(expected).to_string());
        for repeated in ["k3", "k39"] {
            let text = format!("f({}, {repeated}=1)", arguments(&|_| "0".to_owned()));
            let error = one(&text).unwrap_err();
            assert!(
                error
                    .to_string()
                    .contains(&format!("`{repeated}` is given twice")),
                "{error}"
            );
        }
    }

    #[test]
    fn items_must_be_separated_and_lists_closed() {
        for (text, reason) in [
            ("[f(a=1) g()]", "expected `,` or `]` after a call"),
            ("['f(a=1)' ; 'g()']", "expected `,` or `]` after a call"),
            ("[f(a=1), g()", "the list of calls is not closed with `]`"),
            (
                "['f(a=1)', 'g()'",
                "the list of calls is not closed with `]`",
            ),
            ("f(a=[1, 2", "`]` is not closed"),
            ("f(a=(1, 2", "`)` is not closed"),
            ("f(a={'k': 1", "`{` is not closed"),
            ("f(a=1", "the call is not closed with `)`"),
        ] {
            let got = match Reader::new(text, 0).calls() {
                Err(TextError::Invalid { reason, .. } | TextError::Unterminated { reason, .. }) => {
                    reason
                }
                other => panic!("{text}: {other:?}"),
            };
            assert!(got.contains(reason), "{text}: {got}");
        }
    }

    #[test]
    fn anything_that_is_not_a_literal_is_refused_with_a_reason() {
        for (text, reason) in [
            ("f(x)", "is a name"),
            ("f(a=b)", "is a name"),
            ("f(a=1+2)", "expression"),
            ("f(a=g(1))", "not evaluated"),
            ("f(a=[i for i in x])", "is a name"),
            ("f(a={1, 2})", "must be a string"),
            ("f(a={'a', 'b'})", "set"),
            ("f(a=b'x')", "bytes"),
            ("f(a=f'{x}')", "f-string"),
            ("f(a=1j)", "complex"),
            ("f(a=1, 2)", "positional argument follows"),
            ("f(a=1, a=2)", "given twice"),
            ("f(a='x', a='y')", "given twice"),
            ("f(a='x' + 'y')", "expression"),
            ("f(a='x'.upper())", "expression"),
            ("f(a=99999999999999999999)", "beyond 64 bits"),
            ("f(a=float('inf'))", "not evaluated"),
            ("f(a=012)", "leading zero"),
            ("f(a={'k': 1, 'k': 2})", "twice"),
            ("f(a=--1)", "more than one sign"),
            ("f(a=+-1)", "more than one sign"),
            ("f(a=1__0)", "between two digits"),
            ("f(a=1_)", "between two digits"),
            ("f(a=1_.5)", "between two digits"),
            ("f(a=0x__1)", "between two digits"),
            ("f(a=1 b=2)", "expected `,` or `)` after an argument"),
            ("f(a=[1 2])", "expected `,` or `]`"),
            ("f(a=(1 2))", "expected `,` or `)`"),
            ("f(a={'k': 1 'j': 2})", "expected `,` or `}` in a dict"),
        ] {
            match one(text) {
                Err(TextError::Invalid { reason: got, .. }) => {
                    assert!(got.contains(reason), "{text}: {got}")
                }
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_truncated_call_is_unterminated_never_a_fragment() {
        for text in [
            "f(",
            "f(a=1",
            "f(a='x",
            "f(a=[1, 2",
            "f(a={'k': ",
            "f(a=\"\"\"x\"\"",
        ] {
            assert!(
                matches!(one(text), Err(TextError::Unterminated { .. })),
                "{text}: {:?}",
                one(text)
            );
        }
    }

    #[test]
    fn lists_of_calls() {
        let mut reader = Reader::new("[f(a=1), g(b='x')]", 0);
        let calls = reader.calls().unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[1].name, "g");
        assert_eq!(calls[1].span, 9..17);
    }
}
