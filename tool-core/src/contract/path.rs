//! Where the validator is in the document: a chain of stack frames, turned into an RFC 6901
//! JSON Pointer only when a violation is recorded.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// The location of the value being checked, as a chain of borrowed segments.
///
/// Creating a child costs a few words on the stack; nothing is allocated unless a
/// violation needs the pointer.
#[derive(Debug, Clone)]
pub struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    segment: Segment<'a>,
    depth: u32,
    /// This location's name in one [`Places`] (that table's id, the place), once asked: a
    /// location is named from its parent's name and its own segment, each read once, so
    /// naming every place below a long key does not read that key again each time.
    place: Cell<Option<(u64, u64)>>,
}

#[derive(Debug, Clone, Copy)]
enum Segment<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

impl<'a> Path<'a> {
    /// The whole document.
    pub const fn root() -> Path<'static> {
        Path {
            parent: None,
            segment: Segment::Root,
            depth: 0,
            place: Cell::new(None),
        }
    }

    /// The member `key` of the object at `self`.
    #[inline]
    pub fn key<'b>(&'b self, key: &'b str) -> Path<'b> {
        Path {
            parent: Some(self),
            segment: Segment::Key(key),
            depth: self.depth + 1,
            place: Cell::new(None),
        }
    }

    /// The element `index` of the array at `self`.
    #[inline]
    pub fn index<'b>(&'b self, index: usize) -> Path<'b> {
        Path {
            parent: Some(self),
            segment: Segment::Index(index),
            depth: self.depth + 1,
            place: Cell::new(None),
        }
    }

    /// This location's name in `places`: equal for two locations exactly when their JSON
    /// Pointers are equal.
    pub(crate) fn place(&self, places: &mut Places) -> u64 {
        if let Some((table, place)) = self.place.get()
            && table == places.id
        {
            return place;
        }
        let place = match (self.parent, self.segment) {
            (Some(parent), Segment::Key(key)) => {
                let parent = parent.place(places);
                places.key(parent, key)
            }
            (Some(parent), Segment::Index(index)) => {
                let parent = parent.place(places);
                places.index(parent, index)
            }
            (None, _) | (_, Segment::Root) => Places::ROOT,
        };
        self.place.set(Some((places.id, place)));
        place
    }

    /// How many containers enclose this location.
    #[inline]
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The JSON Pointer of this location (`""` for the root).
    pub fn pointer(&self) -> String {
        let mut pointer = String::with_capacity(32);
        self.write_pointer(&mut pointer);
        pointer
    }

    /// Appends the JSON Pointer of this location to `out`.
    pub(crate) fn write_pointer(&self, out: &mut String) {
        if let Some(parent) = self.parent {
            parent.write_pointer(out);
        }
        match self.segment {
            Segment::Root => {}
            Segment::Key(key) => push_escaped(out, key),
            Segment::Index(index) => {
                out.push('/');
                push_decimal(out, index as u64);
            }
        }
    }
}

/// Names locations by small numbers: each (parent, segment) is given its number once, so a
/// location is named in time bounded by its own segment, however long the way to it.
pub(crate) struct Places {
    /// Which table this is: a location remembers its name together with the table's id.
    id: u64,
    keys: HashMap<u64, HashMap<Box<str>, u64>>,
    indices: HashMap<(u64, usize), u64>,
    count: u64,
}

impl Default for Places {
    fn default() -> Self {
        static IDS: AtomicU64 = AtomicU64::new(0);
        Places {
            id: IDS.fetch_add(1, Ordering::Relaxed),
            keys: HashMap::new(),
            indices: HashMap::new(),
            count: 0,
        }
    }
}

impl Places {
    /// The document's root.
    const ROOT: u64 = 0;

    fn next(&mut self) -> u64 {
        self.count += 1;
        self.count
    }

    fn key(&mut self, parent: u64, key: &str) -> u64 {
        crate::contract::untagged::bytes(key.len());
        if let Some(&place) = self.keys.get(&parent).and_then(|keys| keys.get(key)) {
            return place;
        }
        let place = self.next();
        self.keys
            .entry(parent)
            .or_default()
            .insert(key.into(), place);
        place
    }

    fn index(&mut self, parent: u64, index: usize) -> u64 {
        crate::contract::untagged::bytes(1);
        if let Some(&place) = self.indices.get(&(parent, index)) {
            return place;
        }
        let place = self.next();
        self.indices.insert((parent, index), place);
        place
    }
}

/// Appends `n` in decimal digits, without the formatting machinery.
pub(crate) fn push_decimal(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &digit in &digits[at..] {
        out.push(char::from(digit));
    }
}

/// Appends `/` and `token` escaped per RFC 6901 (`~` → `~0`, `/` → `~1`).
/// `%XX` escapes of a URI fragment (a `$ref` such as `#/$defs/Wrapper%3CT%3E`) decoded;
/// `None` when the decoded bytes are not UTF-8.
#[cfg_attr(not(feature = "providers"), allow(dead_code))] // used by the wire formats
pub(crate) fn percent_decode(text: &str) -> Option<std::borrow::Cow<'_, str>> {
    if !text.contains('%') {
        return Some(std::borrow::Cow::Borrowed(text));
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(byte) = text
                .get(i + 1..i + 3)
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).ok().map(std::borrow::Cow::Owned)
}

pub(crate) fn push_escaped(pointer: &mut String, token: &str) {
    pointer.push('/');
    if !token.bytes().any(|b| b == b'~' || b == b'/') {
        pointer.push_str(token);
        return;
    }
    for ch in token.chars() {
        match ch {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            _ => pointer.push(ch),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Path;

    #[test]
    fn builds_escaped_pointers() {
        let root = Path::root();
        assert_eq!(root.pointer(), "");
        let items = root.key("items");
        let second = items.index(1);
        let odd = second.key("a/b~c");
        assert_eq!(odd.pointer(), "/items/1/a~1b~0c");
        assert_eq!(odd.depth(), 3);
    }
}
