//! The commonest shapes of `email`, `date-time` and `uri`, decided without the `jsonschema`
//! crate's checkers. Every string a function here accepts is of its format for that crate
//! (property tests hold the two to that); a `false` decides nothing.
//!
//! An address of 8 to 32 bytes is read as eight-byte words, one bit a byte kept for the bytes
//! that end its runs; other addresses and URIs are read in runs of bytes of one class, looked
//! up in a table; a date-time's fixed fields are checked as three eight-byte words at once.

/// An address of the plainest shape: a local part of ASCII letters and digits in runs joined
/// by one `.`, `_`, `+` or `-`, at most 64 bytes; `@`; a domain of at least two labels of ASCII
/// letters and digits, each at most 63 bytes, the last of letters only; 254 bytes in all.
#[inline]
pub(crate) fn email(text: &str) -> bool {
    let b = text.as_bytes();
    if (8..=32).contains(&b.len()) {
        return short_email(b);
    }
    if b.len() > 254 {
        return false;
    }
    // The local part, run by run up to the `@`.
    let mut i = 0;
    loop {
        let end = run(&EMAIL_CLASSES, b, i, ALNUM);
        if end == i {
            return false;
        }
        match b.get(end) {
            Some(b'.' | b'_' | b'+' | b'-') => i = end + 1,
            Some(b'@') if end <= 64 => {
                i = end + 1;
                break;
            }
            _ => return false,
        }
    }
    // The domain, label by label.
    let mut labels = 0;
    loop {
        let end = run(&EMAIL_CLASSES, b, i, ALNUM);
        if end == i || end - i > 63 {
            return false;
        }
        labels += 1;
        match b.get(end) {
            Some(b'.') => i = end + 1,
            None => return labels >= 2 && run(&EMAIL_CLASSES, b, i, ALPHA) == end,
            Some(_) => return false,
        }
    }
}

/// [`email`] for 8 to 32 bytes, read as up to four eight-byte words (the last one may overlap
/// the one before it): one bit a byte for the bytes that are not ASCII letters or digits, the
/// breaks. Only the breaks are looked at one by one.
#[inline(always)]
fn short_email(b: &[u8]) -> bool {
    let breaks_of = |word: &[u8; 8]| {
        let word = u64::from_le_bytes(*word);
        let alphanumeric = in_range(word, b'0', b'9') | in_range(word | (ONES * 0x20), b'a', b'z');
        // Exact up to the first byte that is not ASCII, which is a break: a text with one
        // is refused at it, whatever the bits above it.
        bits(!alphanumeric | word)
    };
    let mut breaks = 0u64;
    let mut words = b.chunks_exact(8);
    let mut from = 0;
    // (`as_chunks` would read the same, but compiles to more instructions here.)
    for word in &mut words {
        if let Some(word) = word.first_chunk::<8>() {
            breaks |= breaks_of(word) << from;
        }
        from += 8;
    }
    let Some(last) = b.last_chunk::<8>() else {
        return false;
    };
    if !words.remainder().is_empty() {
        breaks |= breaks_of(last) << (b.len() - 8);
    }
    // Every run between breaks is not empty.
    if breaks & 1 != 0 || breaks & (breaks >> 1) != 0 || breaks >> (b.len() - 1) != 0 {
        return false;
    }
    let mut domain = false;
    let mut dots = 0;
    let mut rest = breaks;
    while rest != 0 {
        let at = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        match (b[at], domain) {
            (b'@', false) => domain = true,
            (b'.', true) => dots += 1,
            (b'.' | b'_' | b'+' | b'-', false) => {}
            _ => return false,
        }
    }
    if !domain || dots == 0 {
        return false;
    }
    // The last label, after the last break, has no digit: read in the last word when it fits.
    // Its bytes are letters and digits, and of those only the digits have bit 6 clear.
    let label = 64 - breaks.leading_zeros() as usize;
    let digits = bits(!u64::from_le_bytes(*last) << 1) << (b.len() - 8);
    digits >> label == 0
        && b.get(label..b.len() - 8)
            .is_none_or(|before| before.iter().all(|c| !c.is_ascii_digit()))
}

/// One bit a byte, at the byte's place, from the high bits of the bytes of `w`.
#[inline(always)]
const fn bits(w: u64) -> u64 {
    ((w & HIGH) >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
}

/// Where the run of bytes from `i` whose classes in `classes` include `class` ends.
#[inline(always)]
fn run(classes: &[u8; 256], b: &[u8], mut i: usize, class: u8) -> usize {
    while let Some(&byte) = b.get(i) {
        if classes[usize::from(byte)] & class == 0 {
            break;
        }
        i += 1;
    }
    i
}

/// ASCII letters and digits.
const ALNUM: u8 = 1;
/// ASCII letters.
const ALPHA: u8 = 2;

/// The classes each byte belongs to, for [`email`].
static EMAIL_CLASSES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let byte = c as u8;
        if byte.is_ascii_alphabetic() {
            table[c] = ALNUM | ALPHA;
        } else if byte.is_ascii_digit() {
            table[c] = ALNUM;
        }
        c += 1;
    }
    table
};

/// `0x01` in every byte.
const ONES: u64 = 0x0101_0101_0101_0101;
/// The high bit of every byte.
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `w` from `lo` to `hi`. Exact for the bytes below the first
/// one that is not ASCII: no byte's sums carry into its neighbour unless a byte below it is
/// not ASCII.
#[inline(always)]
const fn in_range(w: u64, lo: u8, hi: u8) -> u64 {
    w.wrapping_add(ONES * (0x80 - lo as u64)) & !w.wrapping_add(ONES * (0x7f - hi as u64)) & HIGH
}

/// The high bit of each byte of `w` that is not an ASCII digit.
#[inline(always)]
const fn not_digits(w: u64) -> u64 {
    (!in_range(w, b'0', b'9') | w) & HIGH
}

/// A date-time of the plainest RFC 3339 shape: `YYYY-MM-DDTHH:MM:SS`, an optional fraction of
/// 1 to 9 digits, then `Z` or an offset `+HH:MM`/`-HH:MM`; upper-case `T` and `Z`; a year from
/// 0001, a real day of its month (leap years counted), hours to 23, minutes and seconds to 59
/// (a leap second is left to the full check), offsets to 23:59.
pub(crate) fn date_time(text: &str) -> bool {
    let b = text.as_bytes();
    let Some(head) = b.first_chunk::<19>() else {
        return false;
    };
    // `YYYY-MM-`, `DDTHH:MM` and `HH:MM:SS`, each a little-endian word.
    let word = |at: usize| {
        let mut bytes = [0; 8];
        bytes.copy_from_slice(&head[at..at + 8]);
        u64::from_le_bytes(bytes)
    };
    let (date, middle, time) = (word(0), word(8), word(11));
    const fn mask(bytes: [u8; 8]) -> u64 {
        u64::from_le_bytes(bytes)
    }
    // Where each word holds a digit, and what its other bytes must be.
    const DATE_DIGITS: u64 = mask([0x80, 0x80, 0x80, 0x80, 0, 0x80, 0x80, 0]);
    const MIDDLE_DIGITS: u64 = mask([0x80, 0x80, 0, 0x80, 0x80, 0, 0x80, 0x80]);
    const TIME_DIGITS: u64 = mask([0x80, 0x80, 0, 0x80, 0x80, 0, 0x80, 0x80]);
    const DATE_SEPARATORS: (u64, u64) = (
        mask([0, 0, 0, 0, 0xff, 0, 0, 0xff]),
        mask([0, 0, 0, 0, b'-', 0, 0, b'-']),
    );
    const MIDDLE_SEPARATORS: (u64, u64) = (
        mask([0, 0, 0xff, 0, 0, 0xff, 0, 0]),
        mask([0, 0, b'T', 0, 0, b':', 0, 0]),
    );
    const TIME_SEPARATORS: (u64, u64) = (
        mask([0, 0, 0, 0, 0, 0xff, 0, 0]),
        mask([0, 0, 0, 0, 0, b':', 0, 0]),
    );
    let misplaced = (not_digits(date) & DATE_DIGITS)
        | (not_digits(middle) & MIDDLE_DIGITS)
        | (not_digits(time) & TIME_DIGITS);
    if misplaced != 0
        || date & DATE_SEPARATORS.0 != DATE_SEPARATORS.1
        || middle & MIDDLE_SEPARATORS.0 != MIDDLE_SEPARATORS.1
        || time & TIME_SEPARATORS.0 != TIME_SEPARATORS.1
    {
        return false;
    }
    // Every field is digits: a two-digit field compares as its text, most significant first.
    let field = |at: usize| u16::from_be_bytes([head[at], head[at + 1]]);
    let (month, day) = (field(5), field(8));
    if &head[..4] == b"0000"
        || !(two(b"01")..=two(b"12")).contains(&month)
        || !(two(b"01")..=two(b"31")).contains(&day)
        || (day > two(b"28") && day_past_month(head, month, day))
        || field(11) > two(b"23")
        || field(14) > two(b"59")
        || field(17) > two(b"59")
    {
        return false;
    }
    let mut rest = &b[19..];
    if let [b'.', fraction @ ..] = rest {
        let end = fraction
            .iter()
            .position(|d| !d.is_ascii_digit())
            .unwrap_or(fraction.len());
        if end == 0 || end > 9 {
            return false;
        }
        rest = &fraction[end..];
    }
    match rest {
        [b'Z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => {
            [h1, h2, m1, m2].iter().all(|d| d.is_ascii_digit())
                && u16::from_be_bytes([*h1, *h2]) <= two(b"23")
                && u16::from_be_bytes([*m1, *m2]) <= two(b"59")
        }
        _ => false,
    }
}

/// Two ASCII digits as one number that orders as their text.
const fn two(digits: &[u8; 2]) -> u16 {
    u16::from_be_bytes(*digits)
}

/// Whether day 29, 30 or 31 (`day`, as [`two`]) is past the end of the month of `head`,
/// whose year and month are digits.
#[cold]
fn day_past_month(head: &[u8; 19], month: u16, day: u16) -> bool {
    let number = |digits: &[u8]| {
        digits
            .iter()
            .fold(0u32, |n, d| n * 10 + u32::from(d - b'0'))
    };
    let year = number(&head[..4]);
    let last = if month == two(b"02") {
        if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) {
            two(b"29")
        } else {
            two(b"28")
        }
    } else if [two(b"04"), two(b"06"), two(b"09"), two(b"11")].contains(&month) {
        two(b"30")
    } else {
        two(b"31")
    };
    day > last
}

/// A URI of the plainest web shape: `http://` or `https://`, a host of dot-separated labels
/// of lower-case ASCII letters and digits (inner `-` allowed, 1 to 63 bytes each, 253 in
/// all), an optional port of 1 to 5 digits up to 65535, then an optional path of `/` and
/// unreserved characters, an optional query of unreserved characters, `=` and `&`, and an
/// optional fragment of unreserved characters.
pub(crate) fn uri(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = if b.starts_with(b"https://") {
        8
    } else if b.starts_with(b"http://") {
        7
    } else {
        return false;
    };
    // The host, label by label.
    let host = i;
    loop {
        let end = run(&URI_CLASSES, b, i, HOST);
        if end == i || end - i > 63 || b[i] == b'-' || b[end - 1] == b'-' {
            return false;
        }
        i = end;
        if b.get(i) != Some(&b'.') {
            break;
        }
        i += 1;
    }
    if i - host > 253 {
        return false;
    }
    if b.get(i) == Some(&b':') {
        i += 1;
        let start = i;
        let mut port = 0u32;
        while let Some(digit) = b.get(i).filter(|d| d.is_ascii_digit() && i - start < 5) {
            port = port * 10 + u32::from(digit - b'0');
            i += 1;
        }
        if i == start || port > 65_535 {
            return false;
        }
    }
    if b.get(i) == Some(&b'/') {
        i = run(&URI_CLASSES, b, i, PATH);
    }
    if b.get(i) == Some(&b'?') {
        i = run(&URI_CLASSES, b, i + 1, QUERY);
    }
    if b.get(i) == Some(&b'#') {
        i = run(&URI_CLASSES, b, i + 1, UNRESERVED);
    }
    i == b.len()
}

/// Unreserved characters: ASCII letters and digits, `-`, `.`, `_`, `~`.
const UNRESERVED: u8 = 1;
/// A plain path's characters: the unreserved ones and `/`.
const PATH: u8 = 2;
/// A plain query's characters: the unreserved ones, `=` and `&`.
const QUERY: u8 = 4;
/// A plain host label's characters: lower-case ASCII letters, digits and `-`.
const HOST: u8 = 8;

/// The classes each byte belongs to, for [`uri`].
static URI_CLASSES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let byte = c as u8;
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            table[c] = UNRESERVED | PATH | QUERY;
        } else if byte == b'/' {
            table[c] = PATH;
        } else if byte == b'=' || byte == b'&' {
            table[c] = QUERY;
        }
        if byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-' {
            table[c] |= HOST;
        }
        c += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// The same shapes read one byte at a time, branch by branch: the definition the runs
    /// and words above are held to.
    mod by_bytes {
        /// An address of the plainest shape: a local part of ASCII letters and digits in runs joined
        /// by one `.`, `_`, `+` or `-`, at most 64 bytes; `@`; a domain of at least two labels of ASCII
        /// letters and digits, each at most 63 bytes, the last of letters only; 254 bytes in all.
        pub(super) fn email(text: &str) -> bool {
            let b = text.as_bytes();
            if b.len() > 254 {
                return false;
            }
            // The local part, in one pass up to the `@`.
            let mut i = 0;
            let mut after_separator = true;
            loop {
                let Some(&byte) = b.get(i) else {
                    return false;
                };
                if byte.is_ascii_alphanumeric() {
                    after_separator = false;
                } else if matches!(byte, b'.' | b'_' | b'+' | b'-') && !after_separator {
                    after_separator = true;
                } else if byte == b'@' {
                    break;
                } else {
                    return false;
                }
                i += 1;
            }
            if i == 0 || i > 64 || after_separator || b.len() - i - 1 > 253 {
                return false;
            }
            // The domain: labels of letters and digits, the last of letters only.
            let mut dots = 0;
            let mut label = 0;
            let mut letters_only = true;
            for &byte in &b[i + 1..] {
                if byte.is_ascii_alphanumeric() {
                    label += 1;
                    letters_only &= byte.is_ascii_alphabetic();
                } else if byte == b'.' && label != 0 && label <= 63 {
                    dots += 1;
                    label = 0;
                    letters_only = true;
                } else {
                    return false;
                }
            }
            label > 0 && label <= 63 && dots >= 1 && letters_only
        }

        /// A date-time of the plainest RFC 3339 shape: `YYYY-MM-DDTHH:MM:SS`, an optional fraction of
        /// 1 to 9 digits, then `Z` or an offset `+HH:MM`/`-HH:MM`; upper-case `T` and `Z`; a year from
        /// 0001, a real day of its month (leap years counted), hours to 23, minutes and seconds to 59
        /// (a leap second is left to the full check), offsets to 23:59.
        pub(super) fn date_time(text: &str) -> bool {
            let b = text.as_bytes();
            if b.len() < 20 {
                return false;
            }
            let (Some(year), Some(month), Some(day)) =
                (digits(b, 0, 4), digits(b, 5, 2), digits(b, 8, 2))
            else {
                return false;
            };
            let (Some(hour), Some(minute), Some(second)) =
                (digits(b, 11, 2), digits(b, 14, 2), digits(b, 17, 2))
            else {
                return false;
            };
            if b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
                return false;
            }
            if year == 0 || !(1..=12).contains(&month) || day == 0 || day > days_in(year, month) {
                return false;
            }
            if hour > 23 || minute > 59 || second > 59 {
                return false;
            }
            let mut i = 19;
            if b[i] == b'.' {
                let start = i + 1;
                i = start;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                if i == start || i - start > 9 {
                    return false;
                }
            }
            match b.get(i..) {
                Some([b'Z']) => true,
                Some([sign, ..])
                    if matches!(sign, b'+' | b'-') && b.len() == i + 6 && b[i + 3] == b':' =>
                {
                    matches!(
                        (digits(b, i + 1, 2), digits(b, i + 4, 2)),
                        (Some(h), Some(m)) if h <= 23 && m <= 59
                    )
                }
                _ => false,
            }
        }

        /// The number `b[at..at + len]` spells in ASCII digits, if that is all it holds.
        fn digits(b: &[u8], at: usize, len: usize) -> Option<u32> {
            let slice = b.get(at..at + len)?;
            let mut n = 0u32;
            for &d in slice {
                if !d.is_ascii_digit() {
                    return None;
                }
                n = n * 10 + u32::from(d - b'0');
            }
            Some(n)
        }

        fn days_in(year: u32, month: u32) -> u32 {
            match month {
                2 if year.is_multiple_of(4)
                    && (!year.is_multiple_of(100) || year.is_multiple_of(400)) =>
                {
                    29
                }
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            }
        }

        /// A URI of the plainest web shape: `http://` or `https://`, a host of dot-separated labels
        /// of lower-case ASCII letters and digits (inner `-` allowed, 1 to 63 bytes each, 253 in
        /// all), an optional port of 1 to 5 digits up to 65535, then an optional path of `/` and
        /// unreserved characters, an optional query of unreserved characters, `=` and `&`, and an
        /// optional fragment of unreserved characters.
        pub(super) fn uri(text: &str) -> bool {
            let b = text.as_bytes();
            let mut i = if b.starts_with(b"https://") {
                8
            } else if b.starts_with(b"http://") {
                7
            } else {
                return false;
            };
            // The host, label by label.
            let host = i;
            let mut label = i;
            loop {
                let byte = b.get(i).copied().unwrap_or(b'/');
                if byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-' {
                    i += 1;
                    continue;
                }
                let len = i - label;
                if len == 0 || len > 63 || b[label] == b'-' || b[i - 1] == b'-' {
                    return false;
                }
                if byte != b'.' {
                    break;
                }
                i += 1;
                label = i;
            }
            if i - host > 253 {
                return false;
            }
            if b.get(i) == Some(&b':') {
                i += 1;
                let start = i;
                let mut port = 0u32;
                while i < b.len() && b[i].is_ascii_digit() && i - start < 5 {
                    port = port * 10 + u32::from(b[i] - b'0');
                    i += 1;
                }
                if i == start || port > 65_535 {
                    return false;
                }
            }
            let unreserved =
                |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~');
            let run = |mut i: usize, class: &dyn Fn(u8) -> bool| {
                while i < b.len() && class(b[i]) {
                    i += 1;
                }
                i
            };
            if b.get(i) == Some(&b'/') {
                i = run(i, &|c| unreserved(c) || c == b'/');
            }
            if b.get(i) == Some(&b'?') {
                i = run(i + 1, &|c| unreserved(c) || c == b'=' || c == b'&');
            }
            if b.get(i) == Some(&b'#') {
                i = run(i + 1, &unreserved);
            }
            i == b.len()
        }
    }

    /// Asserts that `check` takes each of `taken` and refuses each of `refused`.
    fn decides(check: fn(&str) -> bool, taken: &[&str], refused: &[&str]) {
        for text in taken {
            assert!(check(text), "{text}");
        }
        for text in refused {
            assert!(!check(text), "{text}");
        }
    }

    #[test]
    fn the_common_shapes_are_taken() {
        decides(
            super::email,
            &[
                "ada@example.com",
                "grace.hopper+navy@mail.example.org",
                "a_b-c.d@x1.y2.museum",
                "q@example.io",
            ],
            &[
                "",
                "@example.com",
                ".ada@example.com",
                "ada.@example.com",
                "ada..b@example.com",
                "ada@example",
                "ada@example.c0m",
                "ada@-example.com",
                "ada@example..com",
                "ada@example.com.",
                "ada@@example.com",
                "a@b@example.com",
                "ada@exa_mple.com",
                "Ada Lovelace <ada@example.com>",
                "adé@example.com",
            ],
        );
        // The shortest addresses with a part one byte too long, and the longest parts.
        let a = |n| "a".repeat(n);
        for (text, plain) in [
            (format!("{}@b.cd", a(65)), false),
            (format!("{}@b.cd", a(64)), true),
            (format!("b@{}.cd", a(64)), false),
            (format!("b@{}.cd", a(63)), true),
            (format!("b@c.{}", a(64)), false),
            (format!("b@c.{}", a(63)), true),
        ] {
            assert_eq!(super::email(&text), plain, "{text}");
        }
        decides(
            super::date_time,
            &[
                "2026-03-02T09:30:00Z",
                "2026-03-02T11:00:00+01:00",
                "2024-02-29T23:59:59.123456789-12:30",
                "2000-02-29T00:00:00Z",
                "2024-02-29T23:59:59.5+14:00",
                "2023-04-30T12:00:00-00:30",
                "0001-01-01T00:00:00.123456789Z",
            ],
            &[
                "1900-02-29T00:00:00Z",
                "2026-03-02t09:30:00z",
                "2016-12-31T23:59:60Z",
                "2026-03-02T09:30:00.Z",
                "2026-03-02T09:30:00+0100",
                "2023-02-29T00:00:00Z",
                "2023-04-31T00:00:00Z",
                "2023-00-10T00:00:00Z",
                "2023-13-10T00:00:00Z",
                "2023-01-00T00:00:00Z",
                "0000-01-01T00:00:00Z",
                "2023-01-01T00:00:00.1234567890Z",
                "2023-01-01T00:00:00+24:00",
                "2023-01-01T00:00:00+01:60",
                "2023-01-01T00:00:00",
                "2024-0é-01T00:00:00Z",
                "２０２４-01-01T00:00:00Z",
                "2024-01-\u{b0}1T00:00:00Z",
                "2024-01-01T00:00:00\u{b0}",
            ],
        );
        let label = "a".repeat(63);
        let longest = format!("https://{label}.{label}.{label}.{}/", "b".repeat(61));
        let too_long = format!("https://{label}.{label}.{label}.{}/", "b".repeat(62));
        assert!(super::uri(&longest) && !super::uri(&too_long));
        assert!(!super::uri("https://exämple.com/") && !super::uri("https://example.com/ä"));
        decides(
            super::uri,
            &[
                "https://meet.example.com/q1-planning?pwd=7f3a",
                "https://example.com#top",
                "https://example.com:8080/a/b?c=d&e=f#g",
                "http://localhost:65535",
                "http://a-b.c-d.example/",
            ],
            &[
                "https://Example.com/",
                "https://example.com/a b",
                "mailto:a@example.com",
                "https://",
                "http://localhost:65536",
                "http://localhost:123456/",
                "http://localhost:/",
                "http://-a.example/",
                "http://a-.example/",
                "http://a..example/",
                "https://example.com/?q#f#g",
                "https://example.com/a?b/c",
            ],
        );
    }

    /// Text built from the bytes each shape turns on, and one byte past each: any length, any
    /// order.
    fn near(alphabet: &'static [u8], max: usize) -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(alphabet), 0..max)
            .prop_map(|bytes| String::from_utf8(bytes).expect("ASCII"))
    }

    /// `text` (ASCII) with the byte at `at` (a fraction of its length) replaced by `c`, which
    /// may take more than one byte.
    fn mutated(mut text: String, at: f64, c: char) -> String {
        if !text.is_empty() {
            let i = ((text.len() - 1) as f64 * at) as usize;
            text.replace_range(i..=i, c.encode_utf8(&mut [0; 4]));
        }
        text
    }

    /// Characters to put in place of one byte: `ascii`, and characters of two, three and four
    /// bytes whose bytes are all 0x80 or more, some just past a digit or a letter once their
    /// high bit is dropped.
    fn replacements(ascii: &'static str) -> impl Strategy<Value = char> {
        let wide: Vec<char> = "é\u{80}\u{b0}\u{b9}\u{ff}２٣\u{1d7d8}".chars().collect();
        prop_oneof![
            3 => prop::sample::select(ascii.chars().collect::<Vec<_>>()),
            1 => prop::sample::select(wide),
        ]
    }

    fn emails() -> impl Strategy<Value = String> {
        let shaped = (
            "[a-zA-Z0-9]{1,10}([._+-][a-zA-Z0-9]{1,8}){0,3}|[a-z]{60,66}",
            "[a-z0-9]{1,12}(\\.[a-zA-Z0-9]{1,10}){0,2}\\.([a-zA-Z]{2,6}|[a-zA-Z0-9]{7,12})|([a-z0-9]{58,64}\\.){1,4}[a-z]{2,3}",
        )
            .prop_map(|(local, domain)| format!("{local}@{domain}"));
        prop_oneof![
            3 => near(b"aZ09._+-@@..~ ", 24),
            3 => shaped.clone(),
            2 => (shaped, 0.0..1.0, replacements("a0._+-@~ \x7f"))
                .prop_map(|(text, at, byte)| mutated(text, at, byte)),
        ]
    }

    fn date_times() -> impl Strategy<Value = String> {
        let shaped = (
            0u32..=10_000,
            0u32..=13,
            0u32..=32,
            0u32..=24,
            0u32..=60,
            0u32..=61,
            "(\\.[0-9]{0,11})?",
            "Z|z|[+-][0-2][0-9]:[0-6][0-9]|",
        )
            .prop_map(|(y, mo, d, h, mi, s, fraction, offset)| {
                format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{fraction}{offset}")
            });
        prop_oneof![
            3 => shaped.clone(),
            3 => (shaped, 0.0..1.0, replacements("0159-:T.Z+ /"))
                .prop_map(|(text, at, byte)| mutated(text, at, byte)),
            1 => near(b"0129-:TZ+.", 30),
        ]
    }

    fn uris() -> impl Strategy<Value = String> {
        let shaped = (
            prop::sample::select(vec!["http://", "https://", "https:/", "ftp://"]),
            "[a-z0-9-]{0,8}(\\.[a-z0-9-]{1,8}){0,3}|[a-z]{60,66}\\.[a-z]{2}",
            "(:[0-9]{0,6})?",
            "(/[A-Za-z0-9._~-]{0,6}){0,3}",
            "(\\?[A-Za-z0-9=&._~-]{0,10})?",
            "(#[A-Za-z0-9._~-]{0,6})?",
        )
            .prop_map(|(s, h, p, pa, q, f)| format!("{s}{h}{p}{pa}{q}{f}"));
        prop_oneof![
            3 => shaped.clone(),
            3 => (shaped, 0.0..1.0, replacements("aA0-._~/?#=&:% "))
                .prop_map(|(text, at, byte)| mutated(text, at, byte)),
            1 => ("https?://", near(b"az09-.:/?#=&_~A%", 40)).prop_map(|(s, rest)| s + &rest),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        #[test]
        fn emails_are_read_as_byte_by_byte(text in emails()) {
            prop_assert_eq!(super::email(&text), by_bytes::email(&text), "{}", text);
        }

        #[test]
        fn date_times_are_read_as_byte_by_byte(text in date_times()) {
            prop_assert_eq!(super::date_time(&text), by_bytes::date_time(&text), "{}", text);
        }

        #[test]
        fn uris_are_read_as_byte_by_byte(text in uris()) {
            prop_assert_eq!(super::uri(&text), by_bytes::uri(&text), "{}", text);
        }
    }
}
