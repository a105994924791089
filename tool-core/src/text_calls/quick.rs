//! The commonest call objects read in one pass over the bytes, without serde_json's machinery.
//!
//! Every reading here either gives what serde_json's reading of the same text gives, or gives
//! up (`None`), and the text is then read by serde_json as before. It gives up on anything
//! outside plain JSON: escapes in keys or names, `\u` escapes of surrogates, nesting deeper
//! than [`MAX_DEPTH`], repeated members of a call object. So it never accepts a text serde_json
//! refuses, and the tests hold the two readings to the same calls.

use std::ops::Range;

/// How deep values are checked here; deeper ones are left to serde_json.
const MAX_DEPTH: usize = 64;

/// A call object's name and arguments, as byte ranges of the text: the name's contents (it has
/// no escapes) and the whole arguments value (an object or a string).
pub(crate) struct QuickCall {
    pub(crate) name: Range<usize>,
    pub(crate) arguments: Range<usize>,
}

/// A cursor over JSON text.
pub(crate) struct Quick<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Quick<'a> {
    /// A cursor at byte `at` of `text`.
    pub(crate) fn new(text: &'a str, at: usize) -> Self {
        Quick {
            b: text.as_bytes(),
            at,
        }
    }

    /// Where the cursor stands.
    pub(crate) fn at(&self) -> usize {
        self.at
    }

    /// Skips JSON's whitespace.
    pub(crate) fn space(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.b.get(self.at) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.at).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        let found = self.peek() == Some(c);
        self.at += usize::from(found);
        found
    }

    /// One call object, or a list of them, at the cursor, each handed to `each` as it is
    /// read; the cursor ends after it. `None` as soon as `each` gives up.
    pub(crate) fn calls(&mut self, mut each: impl FnMut(QuickCall) -> Option<()>) -> Option<()> {
        if self.peek() == Some(b'{') {
            return each(self.call_object()?);
        }
        if !self.eat(b'[') {
            return None;
        }
        self.items(b']', |quick| each(quick.call_object()?))
    }

    /// The items of a list or the members of an object, from after its opening bracket to
    /// after `close`: each read by `item`, separated by commas, with whitespace around them.
    fn items(&mut self, close: u8, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.space();
        if self.eat(close) {
            return Some(());
        }
        loop {
            item(self)?;
            self.space();
            if self.eat(close) {
                return Some(());
            }
            if !self.eat(b',') {
                return None;
            }
            self.space();
        }
    }

    /// The `:` after a member's key, with the whitespace around it.
    fn colon(&mut self) -> Option<()> {
        self.space();
        let found = self.eat(b':');
        self.space();
        found.then_some(())
    }

    /// `{"name": "…", "arguments" | "parameters": …}`, other members checked and passed over;
    /// `null` arguments count as absent, as serde reads an `Option`.
    fn call_object(&mut self) -> Option<QuickCall> {
        if !self.eat(b'{') {
            return None;
        }
        let mut name = None;
        let mut arguments: Option<Option<Range<usize>>> = None;
        let mut parameters: Option<Option<Range<usize>>> = None;
        let mut first = true;
        self.space();
        if self.peek() == Some(b'}') {
            return None;
        }
        self.items(b'}', |quick| {
            let key = quick.plain_string()?;
            quick.colon()?;
            let slot = match &quick.b[key] {
                // An envelope's only member is left to serde_json.
                b"tool_calls" if first => return None,
                b"name" => {
                    if name.replace(quick.plain_string()?).is_some() {
                        return None;
                    }
                    None
                }
                b"arguments" => Some(&mut arguments),
                b"parameters" => Some(&mut parameters),
                _ => {
                    quick.value(0)?;
                    None
                }
            };
            if let Some(slot) = slot {
                let start = quick.at;
                quick.value(0)?;
                let value = (!quick.b[start..].starts_with(b"null")).then_some(start..quick.at);
                if slot.replace(value).is_some() {
                    return None;
                }
            }
            first = false;
            Some(())
        })?;
        let arguments = match (arguments.flatten(), parameters.flatten()) {
            (Some(range), None) | (None, Some(range)) => range,
            _ => return None,
        };
        Some(QuickCall {
            name: name?,
            arguments,
        })
    }

    /// A string with no escapes and no control characters: its contents.
    fn plain_string(&mut self) -> Option<Range<usize>> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.at;
        self.skip_plain();
        self.eat(b'"').then(|| start..self.at - 1)
    }

    /// Passes over the bytes of a string that are neither `"`, `\\` nor a control character.
    fn skip_plain(&mut self) {
        self.at = crate::canonical::plain_end(self.b, self.at);
    }

    /// A string as JSON writes one: no control characters, only JSON's escapes.
    fn string(&mut self) -> Option<()> {
        if !self.eat(b'"') {
            return None;
        }
        loop {
            self.skip_plain();
            match *self.b.get(self.at)? {
                b'"' => {
                    self.at += 1;
                    return Some(());
                }
                b'\\' => {
                    self.at += 1;
                    match *self.b.get(self.at)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.at += 1,
                        b'u' => {
                            let hex = self.b.get(self.at + 1..self.at + 5)?;
                            let mut unit = 0u32;
                            for &digit in hex {
                                unit = unit * 16 + char::from(digit).to_digit(16)?;
                            }
                            if (0xD800..0xE000).contains(&unit) {
                                return None;
                            }
                            self.at += 5;
                        }
                        _ => return None,
                    }
                }
                // A control character.
                _ => return None,
            }
        }
    }

    /// Digits, at least one.
    fn digits(&mut self) -> Option<()> {
        let start = self.at;
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
        (self.at > start).then_some(())
    }

    /// A number as JSON writes one.
    fn number(&mut self) -> Option<()> {
        self.eat(b'-');
        match self.peek()? {
            b'0' => {
                self.at += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    return None;
                }
            }
            b'1'..=b'9' => self.digits()?,
            _ => return None,
        }
        if self.eat(b'.') {
            self.digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            self.digits()?;
        }
        Some(())
    }

    /// `word` (a literal) at the cursor.
    fn word(&mut self, word: &[u8]) -> Option<()> {
        self.b[self.at..]
            .starts_with(word)
            .then(|| self.at += word.len())
    }

    /// One JSON value, checked, nested `depth` deep.
    pub(crate) fn value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.string(),
            b'{' | b'[' if depth >= MAX_DEPTH => None,
            b'{' => {
                self.at += 1;
                self.items(b'}', |quick| {
                    quick.string()?;
                    quick.colon()?;
                    quick.value(depth + 1)
                })
            }
            b'[' => {
                self.at += 1;
                self.items(b']', |quick| quick.value(depth + 1))
            }
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null"),
            _ => self.number(),
        }
    }
}
