//! `tools/list` pagination: which slice of the listing a cursor names.
//!
//! The registry of a running server does not change, so a cursor is the offset of the page it
//! starts. Clients must treat it as opaque; the server accepts only offsets it could have
//! issued (a positive multiple of the page size, inside the listing).

use std::ops::Range;

/// The items of the page `cursor` names, and the cursor of the page after it; `None` when
/// the cursor was not issued by a server with this page size and listing length.
pub(crate) fn page(
    cursor: Option<&str>,
    page_size: usize,
    len: usize,
) -> Option<(Range<usize>, Option<String>)> {
    let page_size = page_size.max(1);
    let start = match cursor {
        None => 0,
        Some(cursor) => {
            // `parse` accepts a leading `+`; an issued cursor has only digits.
            if cursor.is_empty() || !cursor.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let start: usize = cursor.parse().ok()?;
            if start == 0 || start >= len || !start.is_multiple_of(page_size) {
                return None;
            }
            start
        }
    };
    let end = start.saturating_add(page_size).min(len);
    let next = (end < len).then(|| end.to_string());
    Some((start..end, next))
}

#[cfg(test)]
mod tests {
    use super::page;

    #[test]
    fn pages_follow_each_other_to_the_end() {
        assert_eq!(page(None, 2, 5), Some((0..2, Some("2".to_owned()))));
        assert_eq!(page(Some("2"), 2, 5), Some((2..4, Some("4".to_owned()))));
        assert_eq!(page(Some("4"), 2, 5), Some((4..5, None)));
        assert_eq!(page(None, 50, 0), Some((0..0, None)));
        assert_eq!(page(None, 0, 3), Some((0..1, Some("1".to_owned()))));
    }

    #[test]
    fn rejects_cursors_it_never_issued() {
        for cursor in [
            "",
            "0",
            "3",
            "6",
            "+2",
            " 2",
            "two",
            "99999999999999999999999",
        ] {
            assert_eq!(page(Some(cursor), 2, 5), None, "{cursor:?}");
        }
    }
}
