//! Where the validator is in the document: a chain of stack frames, turned into an RFC 6901
//! JSON Pointer only when a violation is recorded.

/// The location of the value being checked, as a chain of borrowed segments.
///
/// Creating a child costs a few words on the stack; nothing is allocated unless a
/// violation needs the pointer.
#[derive(Debug, Clone, Copy)]
pub struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    segment: Segment<'a>,
    depth: u32,
}

#[derive(Debug, Clone, Copy)]
enum Segment<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

impl<'a> Path<'a> {
    /// The whole document.
    pub const ROOT: Path<'static> = Path {
        parent: None,
        segment: Segment::Root,
        depth: 0,
    };

    /// The member `key` of the object at `self`.
    #[inline]
    pub fn key<'b>(&'b self, key: &'b str) -> Path<'b> {
        Path {
            parent: Some(self),
            segment: Segment::Key(key),
            depth: self.depth + 1,
        }
    }

    /// The element `index` of the array at `self`.
    #[inline]
    pub fn index<'b>(&'b self, index: usize) -> Path<'b> {
        Path {
            parent: Some(self),
            segment: Segment::Index(index),
            depth: self.depth + 1,
        }
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

    fn write_pointer(&self, out: &mut String) {
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
    if !token.contains(['~', '/']) {
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
        let root = Path::ROOT;
        assert_eq!(root.pointer(), "");
        let items = root.key("items");
        let second = items.index(1);
        let odd = second.key("a/b~c");
        assert_eq!(odd.pointer(), "/items/1/a~1b~0c");
        assert_eq!(odd.depth(), 3);
    }
}
