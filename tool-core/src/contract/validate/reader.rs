//! The JSON reader of the checked parse's first pass (see [`parse_str`](super::parse_str)).
//!
//! It reads RFC 8259 text as strictly as `serde_json` does and hands the visitors the same
//! calls `serde_json::Deserializer` would, but it never explains a refusal: anything it does
//! not accept (text that is not JSON, nesting deeper than `serde_json` allows, a number or an
//! escape it leaves to `serde_json`, a typed read of another JSON type) stops it with
//! [`Stop`], and the text is read again by `serde_json`, whose answer is then the answer. So
//! whatever this reader accepts, it must accept with the values `serde_json` gives; what it
//! refuses only costs time.
//!
//! What it saves over `serde_json` on valid text: no error positions or messages built on the
//! way, strings borrowed from the text whenever they hold no escape, and integers and plain
//! decimals read in one pass over their digits.

use std::fmt;

use serde::de::{self, DeserializeSeed, Visitor};

use crate::contract::untagged::{self, EXACT_ANY, WideInt, tag_request};

/// The reader gave up; `serde_json` reads the text again and says why.
#[derive(Debug)]
pub(crate) struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the text is read again by serde_json")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    #[cold]
    fn custom<T: fmt::Display>(_: T) -> Self {
        Stop
    }
}

type Result<T> = std::result::Result<T, Stop>;

/// How many containers may be open at once, plus one: `serde_json`'s recursion limit.
const DEPTH: u8 = 128;

/// The exact powers of ten of an `f64` (10^22 is the last one a double holds exactly).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// A strict JSON reader over one argument text.
pub(crate) struct Reader<'de> {
    text: &'de str,
    at: usize,
    /// Containers that may still be opened, as `serde_json` counts them.
    depth: u8,
    /// The decoded content of the last string that had escapes.
    scratch: String,
    /// How many more bytes may be looked through for a tag written after other members (see
    /// [`Reader::find_tag`]): the text's length, so that looking ahead at most doubles the
    /// reading however tagged objects nest.
    lookahead: usize,
}

/// A string read from the text: borrowed when it had no escape.
enum Text<'de, 's> {
    Borrowed(&'de str),
    Copied(&'s str),
}

impl<'de> Reader<'de> {
    pub(crate) fn new(text: &'de str) -> Self {
        Reader {
            text,
            at: 0,
            depth: DEPTH,
            scratch: String::new(),
            lookahead: text.len(),
        }
    }

    /// The text's bytes: read through the text itself, so that a check that a slice of the
    /// text falls on characters' boundaries is seen to be on the bytes already read.
    #[inline(always)]
    fn bytes(&self) -> &'de [u8] {
        self.text.as_bytes()
    }

    /// Succeeds when nothing but whitespace is left.
    pub(crate) fn end(&mut self) -> Result<()> {
        match self.skip_space() {
            None => Ok(()),
            Some(_) => Err(Stop),
        }
    }

    /// The place of the first byte at or after `at` that is not JSON whitespace.
    #[inline(always)]
    fn space_from(&self, mut at: usize) -> usize {
        while matches!(self.bytes().get(at), Some(b' ' | b'\n' | b'\t' | b'\r')) {
            at += 1;
        }
        at
    }

    /// Skips JSON whitespace and peeks at the next byte.
    #[inline(always)]
    fn skip_space(&mut self) -> Option<u8> {
        // Every JSON whitespace byte is at most a space.
        let byte = *self.bytes().get(self.at)?;
        if byte > b' ' {
            return Some(byte);
        }
        while let Some(&byte) = self.bytes().get(self.at) {
            if !matches!(byte, b' ' | b'\n' | b'\t' | b'\r') {
                return Some(byte);
            }
            self.at += 1;
        }
        None
    }

    /// Reads the literal `word` (whose first byte was peeked at).
    #[inline]
    fn literal(&mut self, word: &[u8]) -> Result<()> {
        if self.bytes()[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(())
        } else {
            Err(Stop)
        }
    }

    /// Reads a string whose opening quote was peeked at.
    #[inline(always)]
    fn string(&mut self) -> Result<Text<'de, '_>> {
        let start = self.at + 1;
        let end = self.plain_run(start);
        match self.bytes().get(end) {
            Some(b'"') => {
                // Both ends are at ASCII bytes (after a quote, at a quote): char boundaries.
                // The text is sliced before anything is stored, so that the check at the end
                // is seen to be on the quote just read and costs nothing.
                let text = &self.text[start..end];
                self.at = end + 1;
                Ok(Text::Borrowed(text))
            }
            Some(b'\\') => {
                self.at = end;
                self.escaped(start).map(Text::Copied)
            }
            // A control character, or the end of the text.
            _ => Err(Stop),
        }
    }

    /// The index of the first byte from `from` that is a quote, a backslash or a control
    /// character (or the length of the text), eight bytes at a time.
    #[inline(always)]
    fn plain_run(&self, from: usize) -> usize {
        // Most strings end within their first eight bytes.
        let Some(first) = self.bytes().get(from..from + 8) else {
            return self.plain_tail(from);
        };
        let found = flags(first);
        if found != 0 {
            return from + found.trailing_zeros() as usize / 8;
        }
        // Short strings (names, dates, addresses) end within 32 bytes: read here.
        let mut at = from + 8;
        for _ in 0..3 {
            let Some(chunk) = self.bytes().get(at..at + 8) else {
                return self.plain_tail(at);
            };
            let found = flags(chunk);
            if found != 0 {
                return at + found.trailing_zeros() as usize / 8;
            }
            at += 8;
        }
        self.plain_long(at)
    }

    /// [`Self::plain_run`] past a string's first 32 bytes, out of line.
    #[inline(never)]
    fn plain_long(&self, mut at: usize) -> usize {
        // 32 bytes at a time: one test for four words.
        let mut blocks = self.bytes()[at..].chunks_exact(32);
        for block in &mut blocks {
            let (a, b, c, d) = (
                flags(&block[..8]),
                flags(&block[8..16]),
                flags(&block[16..24]),
                flags(&block[24..]),
            );
            if a | b | c | d != 0 {
                let (word, found) = [a, b, c, d]
                    .into_iter()
                    .enumerate()
                    .find(|(_, found)| *found != 0)
                    .unwrap_or_default();
                return at + word * 8 + found.trailing_zeros() as usize / 8;
            }
            at += 32;
        }
        for chunk in blocks.remainder().chunks_exact(8) {
            let found = flags(chunk);
            if found != 0 {
                return at + found.trailing_zeros() as usize / 8;
            }
            at += 8;
        }
        self.plain_tail(at)
    }

    /// [`Self::plain_run`] over the last seven bytes of the text at most: read as the text's
    /// last eight bytes, those before `at` shifted out. The last string of most texts ends
    /// here; marked cold all the same, which measured fewer instructions for its callers.
    #[cold]
    #[inline(never)]
    fn plain_tail(&self, mut at: usize) -> usize {
        let bytes = self.bytes();
        if let Some(last) = bytes.last_chunk::<8>()
            && let Some(left @ 1..8) = bytes.len().checked_sub(at)
        {
            // The zero bytes shifted in past the end are flagged, as control characters.
            let found = word_flags(u64::from_le_bytes(*last) >> (8 * (8 - left)));
            return at + (found.trailing_zeros() as usize / 8).min(left);
        }
        while let Some(&byte) = self.bytes().get(at) {
            if byte == b'"' || byte == b'\\' || byte < 0x20 {
                break;
            }
            at += 1;
        }
        at
    }

    /// Reads the rest of a string from its first escape (at `self.at`) into the scratch
    /// buffer; `start` is where its content began.
    #[cold]
    #[inline(never)]
    fn escaped(&mut self, start: usize) -> Result<&str> {
        self.scratch.clear();
        let mut run = start;
        loop {
            let end = self.plain_run(self.at);
            // Runs end at ASCII bytes: char boundaries.
            self.scratch.push_str(&self.text[run..end]);
            match self.bytes().get(end) {
                Some(b'"') => {
                    self.at = end + 1;
                    return Ok(&self.scratch);
                }
                Some(b'\\') => {
                    self.at = end + 1;
                    let decoded = self.escape()?;
                    self.scratch.push(decoded);
                    run = self.at;
                }
                _ => return Err(Stop),
            }
        }
    }

    /// Decodes the escape after a backslash. A surrogate must come in a pair.
    fn escape(&mut self) -> Result<char> {
        let byte = *self.bytes().get(self.at).ok_or(Stop)?;
        self.at += 1;
        Ok(match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let high = self.hex4()?;
                match high {
                    0xD800..=0xDBFF => {
                        if self.bytes().get(self.at..self.at + 2) != Some(b"\\u") {
                            return Err(Stop);
                        }
                        self.at += 2;
                        let low = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err(Stop);
                        }
                        let code = 0x1_0000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                        char::from_u32(code).ok_or(Stop)?
                    }
                    _ => char::from_u32(high).ok_or(Stop)?,
                }
            }
            _ => return Err(Stop),
        })
    }

    /// Reads four hexadecimal digits.
    fn hex4(&mut self) -> Result<u32> {
        let digits = self.bytes().get(self.at..self.at + 4).ok_or(Stop)?;
        let mut n = 0;
        for &digit in digits {
            let value = match digit {
                b'0'..=b'9' => digit - b'0',
                b'a'..=b'f' => digit - b'a' + 10,
                b'A'..=b'F' => digit - b'A' + 10,
                _ => return Err(Stop),
            };
            n = n * 16 + u32::from(value);
        }
        self.at += 4;
        Ok(n)
    }

    /// Reads a number (its first byte, `-` or a digit, was peeked at) and hands it to the
    /// visitor as `serde_json` would: `u64` for a non-negative integer, `i64` for a negative
    /// one, `f64` otherwise. Integers of up to 19 digits and decimals whose digits fit a
    /// double exactly are read here; every other number is read by `serde_json` itself.
    #[inline]
    fn number<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        let start = self.at;
        let negative = self.bytes()[start] == b'-';
        let mut at = start + usize::from(negative);
        let first = at;
        let mut significand: u64 = 0;
        while let Some(&digit) = self.bytes().get(at)
            && digit.is_ascii_digit()
        {
            significand = significand
                .wrapping_mul(10)
                .wrapping_add(u64::from(digit - b'0'));
            at += 1;
        }
        let digits = at - first;
        // One digit at least; no leading zero; at most 19 digits, which cannot overflow.
        if digits == 0 || digits > 19 || (self.bytes()[first] == b'0' && digits > 1) {
            return self.delegated(visitor);
        }
        match self.bytes().get(at) {
            Some(b'.') => {
                let fraction = at + 1;
                let mut end = fraction;
                while let Some(&digit) = self.bytes().get(end)
                    && digit.is_ascii_digit()
                {
                    significand = significand
                        .wrapping_mul(10)
                        .wrapping_add(u64::from(digit - b'0'));
                    end += 1;
                }
                let places = end - fraction;
                // Exact when the digits fit a double's significand and the power of ten is
                // exact: one correctly rounded division, the value every parser gives.
                if places == 0
                    || digits + places > 19
                    || places >= POW10.len()
                    || significand > 1 << 53
                    || matches!(self.bytes().get(end), Some(b'e' | b'E'))
                {
                    return self.delegated(visitor);
                }
                self.at = end;
                let value = significand as f64 / POW10[places];
                visitor.visit_f64(if negative { -value } else { value })
            }
            Some(b'e' | b'E') => self.delegated(visitor),
            _ => {
                self.at = at;
                if !negative {
                    return visitor.visit_u64(significand);
                }
                // As `serde_json` decides: `-0` and integers below `i64::MIN` are doubles.
                let negated = (significand as i64).wrapping_neg();
                if negated >= 0 {
                    visitor.visit_f64(-(significand as f64))
                } else {
                    visitor.visit_i64(negated)
                }
            }
        }
    }

    /// Hands the number at `self.at` to `serde_json`, which reads it as it reads any number.
    #[cold]
    #[inline(never)]
    fn delegated<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        self.delegated_to(visitor, |de, visitor| {
            de::Deserializer::deserialize_any(de, visitor)
        })
    }

    /// Reads the number at `self.at` with `serde_json`, by `read`.
    #[cold]
    fn delegated_to<V: Visitor<'de>>(
        &mut self,
        visitor: V,
        read: impl FnOnce(
            &mut serde_json::Deserializer<serde_json::de::StrRead<'de>>,
            V,
        ) -> serde_json::Result<V::Value>,
    ) -> Result<V::Value> {
        let end = self.number_end().ok_or(Stop)?;
        // The number is ASCII: its ends are char boundaries.
        let mut de = serde_json::Deserializer::from_str(&self.text[self.at..end]);
        let value = read(&mut de, visitor).map_err(|_| Stop)?;
        de.end().map_err(|_| Stop)?;
        self.at = end;
        Ok(value)
    }

    /// The next value if it is a number written as an integer (no fraction, no exponent) that
    /// 128 bits hold, with where it ends.
    fn wide_integer(&mut self) -> Option<(WideInt, usize)> {
        if !matches!(self.skip_space()?, b'-' | b'0'..=b'9') {
            return None;
        }
        let end = self.number_end()?;
        let digits = &self.text[self.at..end];
        if digits.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) {
            return None;
        }
        Some((WideInt::parse(digits)?, end))
    }

    /// A 128-bit read: an integer written with every digit, handed over exactly; any other
    /// value as `deserialize_any` reads it, for the visitor to refuse (a `Value`, or
    /// `serde_json`'s `deserialize_any`, holds an integer beyond 64 bits as the nearest double,
    /// which would round one that is not a double).
    fn exact<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        match self.wide_integer() {
            Some((wide, end)) => {
                self.at = end;
                wide.visit(visitor)
            }
            None => de::Deserializer::deserialize_any(self, visitor),
        }
    }

    /// Reads a value as `deserialize_any` does, but an integer beyond 64 bits, which it hands
    /// over with every digit as `visit_i128` or `visit_u128` (see [`EXACT_ANY`]).
    fn exact_any<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        // Beyond 64 bits takes 20 digits at least: any other value is read as usual, and only
        // a long run of digits is looked at again.
        let start = match self.skip_space() {
            Some(b'-') => self.at + 1,
            Some(b'0'..=b'9') => self.at,
            _ => return de::Deserializer::deserialize_any(self, visitor),
        };
        let long = self
            .bytes()
            .get(start..start + 20)
            .is_some_and(|run| run.iter().all(u8::is_ascii_digit));
        if long
            && let Some((wide, end)) = self.wide_integer()
            && wide.beyond_64_bits()
        {
            self.at = end;
            return wide.visit(visitor);
        }
        de::Deserializer::deserialize_any(self, visitor)
    }

    /// Where the number at `self.at` ends, if it follows the grammar of RFC 8259.
    fn number_end(&self) -> Option<usize> {
        let bytes = self.bytes();
        let digits = |mut at: usize| {
            let from = at;
            while bytes.get(at).is_some_and(u8::is_ascii_digit) {
                at += 1;
            }
            (at > from).then_some(at)
        };
        let mut at = self.at + usize::from(bytes.get(self.at) == Some(&b'-'));
        at = match bytes.get(at) {
            Some(b'0') => at + 1,
            Some(b'1'..=b'9') => digits(at)?,
            _ => return None,
        };
        if bytes.get(at) == Some(&b'.') {
            at = digits(at + 1)?;
        }
        if matches!(bytes.get(at), Some(b'e' | b'E')) {
            at += 1;
            if matches!(bytes.get(at), Some(b'+' | b'-')) {
                at += 1;
            }
            at = digits(at)?;
        }
        Some(at)
    }

    /// Whether the object opening at `self.at` begins with the member `tag`.
    #[inline(always)]
    fn tag_comes_first(&self, tag: &str) -> bool {
        let at = self.space_from(self.at + 1);
        let tag = tag.as_bytes();
        match self.bytes().get(at..at + tag.len() + 2) {
            Some([b'"', name @ .., b'"']) => name == tag,
            _ => false,
        }
    }

    /// Reads a tagged union's object whose first member is its tag, found by
    /// [`Self::tag_comes_first`], as an enum: the tag's value as the variant, the other members
    /// through `struct_variant`.
    #[inline]
    fn tag_enum<V: Visitor<'de>>(&mut self, tag: &str, visitor: V) -> Result<V::Value> {
        self.open()?;
        self.at = self.space_from(self.at) + tag.len() + 2;
        if self.skip_space() != Some(b':') {
            return Err(Stop);
        }
        self.at += 1;
        let value = visitor.visit_enum(TagValue { reader: self });
        self.close(value, b'}')
    }

    /// Reads a tagged union's object whose first member is not its tag: its tag first when
    /// [`Self::find_tag`] finds it, else as it comes.
    #[inline(never)]
    fn tag_later<V: Visitor<'de>>(&mut self, tag: &str, visitor: V) -> Result<V::Value> {
        match self.find_tag(tag) {
            Some(found) => self.map_tag_first(found, visitor),
            None => visitor.visit_newtype_struct(self),
        }
    }

    /// Finds the member `tag` of the object opening at `self.at` when other members come
    /// before it: the places of its key's opening quote and of the comma or brace after its
    /// value. `None` when it is not there, when a key before it has an escape (it could
    /// spell the tag), when the text is not what it should be, or when the bytes looked
    /// through would pass the lookahead left: the caller then reads the object as it comes.
    /// Nothing is checked here that reading the object does not check again.
    fn find_tag(&mut self, tag: &str) -> Option<(usize, usize)> {
        let bytes = self.bytes();
        let limit = self.at.saturating_add(self.lookahead).min(bytes.len());
        let mut at = self.space_from(self.at + 1);
        let found = loop {
            if at >= limit || bytes[at] != b'"' {
                break None;
            }
            let end = self.plain_run(at + 1);
            if bytes.get(end) != Some(&b'"') {
                break None;
            }
            let colon = self.space_from(end + 1);
            if bytes.get(colon) != Some(&b':') {
                break None;
            }
            let is_tag = &bytes[at + 1..end] == tag.as_bytes();
            let Some(next) = self.skip_value(colon + 1, limit) else {
                at = limit;
                break None;
            };
            if is_tag {
                break Some((at, next));
            }
            if bytes[next] != b',' {
                at = next;
                break None;
            }
            at = self.space_from(next + 1);
        };
        let seen = found.map_or(at, |(_, next)| next).min(limit) - self.at;
        self.lookahead = self.lookahead.saturating_sub(seen);
        untagged::bytes(seen);
        found
    }

    /// The place of the comma or closing bracket that ends the value starting at or after
    /// `at` (whitespace first), skipping strings and nested containers without reading them,
    /// before `limit`.
    fn skip_value(&self, mut at: usize, limit: usize) -> Option<usize> {
        let bytes = self.bytes();
        let mut open = 0u32;
        while at < limit {
            match bytes[at] {
                b'"' => {
                    at += 1;
                    loop {
                        at = self.plain_run(at);
                        match bytes.get(at) {
                            Some(b'"') => break,
                            Some(b'\\') => at += 2,
                            _ => return None,
                        }
                    }
                }
                b'{' | b'[' => {
                    open += 1;
                    if open >= u32::from(DEPTH) {
                        return None;
                    }
                }
                b'}' | b']' | b',' if open == 0 => return Some(at),
                b'}' | b']' => open -= 1,
                _ => {}
            }
            at += 1;
        }
        None
    }

    /// Reads the object opening at `self.at` with its member `tag`, found by
    /// [`Self::find_tag`] at `found`, handed to the visitor first.
    fn map_tag_first<V: Visitor<'de>>(
        &mut self,
        tag: (usize, usize),
        visitor: V,
    ) -> Result<V::Value> {
        self.open()?;
        let value = visitor.visit_map(TagFirst {
            start: self.at,
            reader: self,
            tag,
            state: TagState::Key,
            first: true,
        });
        self.close(value, b'}')
    }

    /// Opens an array or object (its bracket was peeked at) within the depth limit.
    #[inline(always)]
    fn open(&mut self) -> Result<()> {
        self.depth -= 1;
        if self.depth == 0 {
            return Err(Stop);
        }
        self.at += 1;
        Ok(())
    }

    #[inline]
    fn seq<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        self.open()?;
        let value = visitor.visit_seq(Items {
            reader: self,
            first: true,
        });
        self.close(value, b']')
    }

    #[inline]
    fn map<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        self.open()?;
        let value = visitor.visit_map(Members {
            reader: self,
            first: true,
        });
        self.close(value, b'}')
    }

    /// Closes the array or object whose contents were read into `value`, unless that failed:
    /// `end` must come next. The value is handed back where it lies, not moved.
    #[inline(always)]
    fn close<T>(&mut self, mut value: Result<T>, end: u8) -> Result<T> {
        if value.is_ok() {
            self.depth += 1;
            if self.skip_space() == Some(end) {
                self.at += 1;
            } else {
                value = Err(Stop);
            }
        }
        value
    }

    /// Moves to the opening quote of an object's next key (`first`: none was read yet);
    /// `false` at the closing brace.
    #[inline(always)]
    fn next_key(&mut self, first: &mut bool) -> Result<bool> {
        match self.skip_space() {
            Some(b'}') => return Ok(false),
            Some(b'"') if *first => *first = false,
            Some(b',') if !*first => {
                self.at += 1;
                if self.skip_space() != Some(b'"') {
                    return Err(Stop);
                }
            }
            _ => return Err(Stop),
        }
        Ok(true)
    }

    /// Reads the key whose opening quote is next.
    #[inline(always)]
    fn key<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<K::Value> {
        let key = match self.string()? {
            Text::Borrowed(s) => Key::Borrowed(s),
            Text::Copied(s) => Key::Copied(s),
        };
        seed.deserialize(key)
    }

    /// Reads a member's value, its colon next.
    #[inline(always)]
    fn member_value<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        if self.skip_space() != Some(b':') {
            return Err(Stop);
        }
        self.at += 1;
        seed.deserialize(self)
    }

    #[inline]
    fn str_visit<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        match self.string()? {
            Text::Borrowed(s) => visitor.visit_borrowed_str(s),
            Text::Copied(s) => visitor.visit_str(s),
        }
    }
}

/// The typed reads `tool-core`'s visitors never ask for, left to `serde_json`.
macro_rules! stop {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, _: V) -> Result<V::Value> {
            Err(Stop)
        }
    )*};
}

/// Typed reads of one JSON type: that type is read as `deserialize_any` reads it, any other
/// stops the reader (as the typed read fails in `serde_json`).
macro_rules! typed {
    ($($method:ident => $first:pat,)*) => {$(
        #[inline]
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            match self.skip_space() {
                Some($first) => self.deserialize_any(visitor),
                _ => Err(Stop),
            }
        }
    )*};
}

impl<'de> de::Deserializer<'de> for &mut Reader<'de> {
    type Error = Stop;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.skip_space().ok_or(Stop)? {
            b'"' => self.str_visit(visitor),
            b'0'..=b'9' | b'-' => self.number(visitor),
            b'{' => self.map(visitor),
            b'[' => self.seq(visitor),
            b't' => {
                self.literal(b"true")?;
                visitor.visit_bool(true)
            }
            b'f' => {
                self.literal(b"false")?;
                visitor.visit_bool(false)
            }
            b'n' => {
                self.literal(b"null")?;
                visitor.visit_unit()
            }
            _ => Err(Stop),
        }
    }

    #[inline]
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.skip_space() {
            Some(b'{') => self.map(visitor),
            _ => Err(Stop),
        }
    }

    #[inline]
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.skip_space() {
            Some(b'[') => self.seq(visitor),
            _ => Err(Stop),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        match self.skip_space() {
            Some(b'{') => self.map(visitor),
            Some(b'[') => self.seq(visitor),
            _ => Err(Stop),
        }
    }

    #[inline]
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.skip_space() {
            Some(b'n') => {
                self.literal(b"null")?;
                visitor.visit_none()
            }
            _ => visitor.visit_some(self),
        }
    }

    #[inline]
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        // `serde_json` reads its raw values under this name.
        if name == "$serde_json::private::RawValue" {
            return Err(Stop);
        }
        if name == EXACT_ANY {
            return self.exact_any(visitor);
        }
        // A tagged union's object: its tag is handed over first, wherever it is written, so
        // the members before it are read straight into the variant rather than held.
        if let Some((tag, to_enum)) = tag_request(name)
            && self.skip_space() == Some(b'{')
        {
            if !self.tag_comes_first(tag) {
                return self.tag_later(tag, visitor);
            }
            if to_enum {
                return self.tag_enum(tag, visitor);
            }
        }
        visitor.visit_newtype_struct(self)
    }

    /// Reads the value through and hands the visitor a unit, as `serde_json` does.
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_any(&mut *self, de::IgnoredAny)?;
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    /// A unit variant written as a string; a variant with content is left to `serde_json`.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        use de::value::{BorrowedStrDeserializer, StrDeserializer};
        if self.skip_space() != Some(b'"') {
            return Err(Stop);
        }
        match self.string()? {
            Text::Borrowed(s) => visitor.visit_enum(BorrowedStrDeserializer::<Stop>::new(s)),
            Text::Copied(s) => visitor.visit_enum(StrDeserializer::<Stop>::new(s)),
        }
    }

    typed! {
        deserialize_bool => b't' | b'f',
        deserialize_unit => b'n',
        deserialize_str => b'"',
        deserialize_string => b'"',
        deserialize_identifier => b'"',
        deserialize_char => b'"',
        deserialize_i8 => b'-' | b'0'..=b'9',
        deserialize_i16 => b'-' | b'0'..=b'9',
        deserialize_i32 => b'-' | b'0'..=b'9',
        deserialize_i64 => b'-' | b'0'..=b'9',
        deserialize_u8 => b'-' | b'0'..=b'9',
        deserialize_u16 => b'-' | b'0'..=b'9',
        deserialize_u32 => b'-' | b'0'..=b'9',
        deserialize_u64 => b'-' | b'0'..=b'9',
        deserialize_f64 => b'-' | b'0'..=b'9',
    }

    #[inline]
    fn deserialize_i128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.exact(visitor)
    }

    #[inline]
    fn deserialize_u128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.exact(visitor)
    }

    // `serde_json` may read an `f32` to the nearest `f32` directly (`float_roundtrip`): left
    // to it, as are byte strings.
    stop! {
        deserialize_f32 deserialize_bytes deserialize_byte_buf
    }
}

/// The bytes of an eight-byte chunk that are a quote, a backslash or a control character,
/// each flagged by its high bit. The lowest byte flagged is exact: a flag above it may come
/// from its borrow.
#[inline(always)]
fn flags(chunk: &[u8]) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(chunk);
    word_flags(u64::from_le_bytes(word))
}

/// [`flags`] of a little-endian word.
#[inline(always)]
fn word_flags(word: u64) -> u64 {
    const ONES: u64 = u64::MAX / 255;
    const HIGH: u64 = ONES << 7;
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let quote = quote.wrapping_sub(ONES) & !quote;
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let backslash = backslash.wrapping_sub(ONES) & !backslash;
    (control | quote | backslash) & HIGH
}

/// The members of an object being read.
struct Members<'a, 'de> {
    reader: &'a mut Reader<'de>,
    first: bool,
}

impl<'de> de::MapAccess<'de> for Members<'_, 'de> {
    type Error = Stop;

    #[inline(always)]
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if !self.reader.next_key(&mut self.first)? {
            return Ok(None);
        }
        self.reader.key(seed).map(Some)
    }

    #[inline(always)]
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        self.reader.member_value(seed)
    }
}

/// The members of an object being read, its tag first (see [`Reader::map_tag_first`]).
struct TagFirst<'a, 'de> {
    reader: &'a mut Reader<'de>,
    /// Where the members begin, after the brace.
    start: usize,
    /// The tag's key (its opening quote) and the comma or brace after its value.
    tag: (usize, usize),
    state: TagState,
    first: bool,
}

#[derive(PartialEq)]
enum TagState {
    /// The tag's key is next.
    Key,
    /// The tag's value is next.
    Value,
    /// The members in their order, the tag's skipped.
    Rest,
}

impl<'de> de::MapAccess<'de> for TagFirst<'_, 'de> {
    type Error = Stop;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let reader = &mut *self.reader;
        match self.state {
            TagState::Key => {
                let (key, _) = self.tag;
                reader.at = key;
                let Text::Borrowed(name) = reader.string()? else {
                    return Err(Stop);
                };
                self.state = TagState::Value;
                return seed.deserialize(Key::Borrowed(name)).map(Some);
            }
            TagState::Value => return Err(Stop),
            TagState::Rest => {}
        }
        loop {
            if !reader.next_key(&mut self.first)? {
                return Ok(None);
            }
            if reader.at != self.tag.0 {
                return reader.key(seed).map(Some);
            }
            // The tag, read already.
            reader.at = self.tag.1;
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let reader = &mut *self.reader;
        let value = reader.member_value(seed)?;
        if self.state == TagState::Value {
            // The tag's value must end where looking ahead found its end; then the members
            // are read from the first.
            if reader.skip_space().is_none() || reader.at != self.tag.1 {
                return Err(Stop);
            }
            reader.at = self.start;
            self.state = TagState::Rest;
        }
        Ok(value)
    }
}

/// An object whose tag's value is next, handed over as an enum (see [`Reader::tag_enum`]).
struct TagValue<'a, 'de> {
    reader: &'a mut Reader<'de>,
}

impl<'de> de::EnumAccess<'de> for TagValue<'_, 'de> {
    type Error = Stop;
    type Variant = Self;

    #[inline]
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self)> {
        let value = seed.deserialize(&mut *self.reader)?;
        Ok((value, self))
    }
}

impl<'de> de::VariantAccess<'de> for TagValue<'_, 'de> {
    type Error = Stop;

    fn unit_variant(self) -> Result<()> {
        Err(Stop)
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _: T) -> Result<T::Value> {
        Err(Stop)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value> {
        Err(Stop)
    }

    /// The members after the tag.
    #[inline]
    fn struct_variant<V: Visitor<'de>>(
        self,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_map(Members {
            reader: self.reader,
            first: false,
        })
    }
}

/// The items of an array being read.
struct Items<'a, 'de> {
    reader: &'a mut Reader<'de>,
    first: bool,
}

impl<'de> de::SeqAccess<'de> for Items<'_, 'de> {
    type Error = Stop;

    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        let reader = &mut *self.reader;
        match reader.skip_space() {
            Some(b']') => return Ok(None),
            Some(_) if self.first => self.first = false,
            Some(b',') => {
                reader.at += 1;
                if matches!(reader.skip_space(), Some(b']') | None) {
                    return Err(Stop);
                }
            }
            _ => return Err(Stop),
        }
        seed.deserialize(reader).map(Some)
    }
}

/// An object key, read as a string whatever the visitor asks for (as `serde_json` reads a
/// key, save the numbers and booleans it also parses out of keys, left to it here).
enum Key<'de, 's> {
    Borrowed(&'de str),
    Copied(&'s str),
}

impl<'de> Key<'de, '_> {
    #[inline(always)]
    fn visit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self {
            Key::Borrowed(s) => visitor.visit_borrowed_str(s),
            Key::Copied(s) => visitor.visit_str(s),
        }
    }
}

macro_rules! key_as_str {
    ($($method:ident)*) => {$(
        #[inline]
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            self.visit(visitor)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Key<'de, '_> {
    type Error = Stop;

    key_as_str! {
        deserialize_any deserialize_str deserialize_string deserialize_identifier
        deserialize_ignored_any deserialize_char deserialize_unit deserialize_seq deserialize_map
    }

    // `serde_json` parses numbers and booleans out of keys: left to it.
    stop! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64
        deserialize_u128 deserialize_f32 deserialize_f64 deserialize_bytes deserialize_byte_buf
    }

    #[inline]
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        if name == "$serde_json::private::RawValue" {
            return Err(Stop);
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        self.visit(visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value> {
        self.visit(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        visitor: V,
    ) -> Result<V::Value> {
        self.visit(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.visit(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value> {
        Err(Stop)
    }
}

#[cfg(test)]
mod tests {
    use std::fmt;

    use proptest::prelude::*;
    use serde::Deserialize as _;
    use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

    use super::Reader;

    /// Every call a visitor receives, with doubles by their bits and strings marked borrowed
    /// or copied.
    struct Trace<'t>(&'t mut Vec<String>);

    impl<'de> DeserializeSeed<'de> for Trace<'_> {
        type Value = ();

        fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
            de.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Trace<'_> {
        type Value = ();

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON")
        }

        fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
            self.0.push(format!("bool {v}"));
            Ok(())
        }

        fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
            self.0.push(format!("i64 {v}"));
            Ok(())
        }

        fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
            self.0.push(format!("u64 {v}"));
            Ok(())
        }

        fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
            self.0.push(format!("f64 {:#x}", v.to_bits()));
            Ok(())
        }

        fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<(), E> {
            self.0.push(format!("borrowed {v:?}"));
            Ok(())
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
            self.0.push(format!("copied {v:?}"));
            Ok(())
        }

        fn visit_unit<E: de::Error>(self) -> Result<(), E> {
            self.0.push("null".to_owned());
            Ok(())
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            self.0.push("[".to_owned());
            while seq.next_element_seed(Trace(&mut *self.0))?.is_some() {}
            self.0.push("]".to_owned());
            Ok(())
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            self.0.push("{".to_owned());
            while map.next_key_seed(Trace(&mut *self.0))?.is_some() {
                map.next_value_seed(Trace(&mut *self.0))?;
            }
            self.0.push("}".to_owned());
            Ok(())
        }
    }

    /// The calls `serde_json` makes on `text`, or `None` when it refuses the text.
    fn by_serde_json(text: &str) -> Option<Vec<String>> {
        let mut trace = Vec::new();
        let mut de = serde_json::Deserializer::from_str(text);
        Trace(&mut trace).deserialize(&mut de).ok()?;
        de.end().ok()?;
        Some(trace)
    }

    /// The calls the reader makes on `text`, or `None` when it stops.
    fn by_reader(text: &str) -> Option<Vec<String>> {
        let mut trace = Vec::new();
        let mut reader = Reader::new(text);
        Trace(&mut trace).deserialize(&mut reader).ok()?;
        reader.end().ok()?;
        Some(trace)
    }

    #[track_caller]
    fn agrees(text: &str) -> Option<Vec<String>> {
        let reader = by_reader(text);
        assert_eq!(reader, by_serde_json(text), "on {text:?}");
        reader
    }

    /// A string's plain run is read eight and thirty-two bytes at a time, and its last bytes
    /// as the text's last word: every length, with a quote, an escape or a control character
    /// at every place, and non-ASCII text before it; followed by more text, ending the text,
    /// and cut short.
    #[test]
    fn strings_end_where_serde_json_ends_them_at_every_place() {
        for len in 0..80 {
            for at in 0..=len {
                for special in ["\"", "\\n", "\u{1}", "é"] {
                    let mut body = "a".repeat(at);
                    body.push_str(special);
                    body.push_str(&"b".repeat(len - at));
                    for text in [
                        format!("[\"{body}\", 1]"),
                        format!("\"{body}\""),
                        format!("[\"{body}"),
                    ] {
                        agrees(&text);
                    }
                }
            }
        }
    }

    #[test]
    fn reads_what_serde_json_reads_with_the_same_values() {
        for text in [
            r#"{"customerId":"cus_42","amount":120.5,"currency":"USD"}"#,
            " \t\n\r[1, -2, 3.25, true, false, null, \"x\", {}, []] \n",
            r#"{"a":{"b":[{"c":[[]]}]}}"#,
            "0",
            "-0",
            "-0.0",
            "0.1",
            "1450.0",
            "123456789012345678",
            "1234567890123456789",
            "12345678901234567890",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775807",
            "-9223372036854775808",
            "-9223372036854775809",
            "-10000000000000000000",
            "9007199254740993.0",
            "9007199254740992.5",
            "0.30000000000000004",
            "1.7976931348623157e308",
            "1e22",
            "1e23",
            "1E5",
            "1e-400",
            "2.5e-3",
            "-1.5E+2",
            "123.456789012345678901234",
            "0.0000000000000000000001",
            "0.00000000000000000000001",
            r#""plain""#,
            r#""""#,
            r#""é€😀""#,
            r#""a\"b\\c\/d\be\ff\ng\rh\ti""#,
            r#""\u00e9\u20AC\ud83d\ude00""#,
            r#""\u0000""#,
            "\"\u{7f}\"",
            r#"{"a\nb":1}"#,
            r#"{"a":1,"a":2}"#,
        ] {
            assert!(agrees(text).is_some(), "refused {text:?}");
        }
    }

    #[test]
    fn refuses_what_serde_json_refuses() {
        for text in [
            "",
            " ",
            "1e400",
            "-1e400",
            "01",
            "-01",
            "1.",
            ".5",
            "+1",
            "1.e5",
            "1e",
            "1e+",
            "-",
            "NaN",
            "Infinity",
            "\u{feff}{}",
            "{} x",
            "{}{}",
            "[1,]",
            "[,1]",
            "[1 2]",
            "{\"a\":1,}",
            "{,}",
            "{\"a\" 1}",
            "{\"a\":}",
            "{a:1}",
            "{'a':1}",
            "{1:1}",
            "[",
            "{",
            "{\"a\":1",
            "\"abc",
            "\"a\u{1}b\"",
            "\"a\nb\"",
            "\"a\tb\"",
            r#""\x""#,
            r#""\u12""#,
            r#""\u12g4""#,
            r#""\ud800""#,
            r#""\udc00""#,
            r#""\ud800x""#,
            r#""\ud800\u0041""#,
            r#""\ud800\ud800\udc00""#,
            r#""\ud83d\n""#,
            "tru",
            "nul",
            "True",
            "truex",
            "[1]]",
        ] {
            assert_eq!(agrees(text), None, "accepted {text:?}");
        }
    }

    #[test]
    fn skips_ignored_values_as_serde_json_does() {
        let skip = |text: &str| {
            let mut reader = Reader::new(text);
            let read = de::IgnoredAny::deserialize(&mut reader).is_ok() && reader.end().is_ok();
            let json = serde_json::from_str::<de::IgnoredAny>(text).is_ok();
            (read, json)
        };
        for text in [r#"{"a":[1,{"b":null}],"c":"d"}"#, "[[[]]]", "\"x\"", "-1.5"] {
            assert_eq!(skip(text), (true, true), "on {text:?}");
        }
        for text in ["[1,]", "{\"a\"}", "\"\\q\""] {
            assert_eq!(skip(text), (false, false), "on {text:?}");
        }
    }

    #[test]
    fn nests_exactly_as_deep_as_serde_json() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(agrees(&nested(127)).is_some());
        assert_eq!(agrees(&nested(128)), None);
        let objects = |n: usize| format!("{}1{}", r#"{"a":"#.repeat(n), "}".repeat(n));
        assert!(agrees(&objects(127)).is_some());
        assert_eq!(agrees(&objects(128)), None);
    }

    /// Text built from the pieces JSON is made of, most of it not JSON.
    fn pieces() -> impl Strategy<Value = String> {
        crate::json_pieces::json_pieces(&[], 24)
    }

    /// Valid JSON values written out, compact or spaced.
    fn documents() -> impl Strategy<Value = String> {
        let number = prop_oneof![
            any::<u64>().prop_map(|n| n.to_string()),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| f.to_string()),
            (any::<i32>(), 0u32..30)
                .prop_map(|(n, places)| { format!("{n}.{}", "7".repeat(places as usize + 1)) }),
            (any::<i16>(), -330i32..330).prop_map(|(n, e)| format!("{n}e{e}")),
        ];
        let leaf = prop_oneof![
            Just("null".to_owned()),
            Just("true".to_owned()),
            number,
            any::<String>().prop_map(|s| serde_json::to_string(&s).unwrap_or_default()),
            "[a-z\\\\\"/]{0,12}".prop_map(|s| serde_json::to_string(&s).unwrap_or_default()),
        ];
        crate::json_pieces::json_values(leaf)
    }

    proptest! {
        #[test]
        fn agrees_with_serde_json_on_any_text(text in pieces()) {
            let _ = agrees(&text);
        }

        #[test]
        fn agrees_with_serde_json_on_json(text in documents()) {
            prop_assert!(agrees(&text).is_some() || by_serde_json(&text).is_none());
        }

        #[test]
        fn agrees_with_serde_json_on_json_cut_short(text in documents(), cut in any::<prop::sample::Index>()) {
            let mut end = cut.index(text.len() + 1);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let _ = agrees(&text[..end]);
        }
    }
}
