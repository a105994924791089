//! Digests and their hex form: the one place the crate hashes and writes bytes as hex (call
//! ids, contract hashes bound into approval receipts and ledger claims, the audit chain).

use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::canonical::exact_json;

/// SHA-256 of `bytes`, as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// SHA-256 of `bytes`, as lowercase hex, shared.
pub(crate) fn sha256_shared(bytes: &[u8]) -> std::sync::Arc<str> {
    let mut text = [0; 64];
    write_hex(&Sha256::digest(bytes), &mut text);
    // Hex digits are ASCII, so this never falls back.
    std::sync::Arc::from(std::str::from_utf8(&text).unwrap_or_default())
}

/// SHA-256 (hex) of a schema's exact canonical form, so a changed bound is a changed contract
/// however large its number.
pub(crate) fn contract_hash(schema: &Value) -> String {
    let text = exact_json(schema).unwrap_or_else(|| schema.to_string());
    sha256_hex(text.as_bytes())
}

/// `bytes` as lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut out = vec![0; bytes.len() * 2];
    write_hex(bytes, &mut out);
    // Hex digits are ASCII, so this never falls back.
    String::from_utf8(out).unwrap_or_default()
}

/// Writes `bytes` as lowercase hex into `out`, two digits a byte, as far as `out` goes.
fn write_hex(bytes: &[u8], out: &mut [u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (pair, byte) in out.chunks_exact_mut(2).zip(bytes) {
        pair[0] = DIGITS[usize::from(byte >> 4)];
        pair[1] = DIGITS[usize::from(byte & 15)];
    }
}

/// The bytes a hex string (either case) stands for; `None` unless it is whole bytes of hex
/// digits.
pub(crate) fn unhex(text: &str) -> Option<Vec<u8>> {
    let mut out = vec![0; text.len() / 2];
    unhex_into(text, &mut out).then_some(out)
}

/// Writes the bytes a hex string (either case) stands for into `out`; false, with `out` in
/// no useful state, unless `text` is exactly `out.len()` bytes of hex digits.
pub(crate) fn unhex_into(text: &str, out: &mut [u8]) -> bool {
    decode_hex(text, out, &HEX_DIGITS)
}

/// [`unhex_into`] for lowercase hex only, as [`hex`] writes it: the text that gives these
/// bytes back.
#[cfg(feature = "sqlite")]
pub(crate) fn unhex_lowercase_into(text: &str, out: &mut [u8]) -> bool {
    decode_hex(text, out, &LOWERCASE_HEX_DIGITS)
}

/// Each byte's value as a hex digit, 0xff for a byte that is not one.
const HEX_DIGITS: [u8; 256] = digit_values(true);
#[cfg(feature = "sqlite")]
const LOWERCASE_HEX_DIGITS: [u8; 256] = digit_values(false);

const fn digit_values(uppercase: bool) -> [u8; 256] {
    let mut values = [0xff; 256];
    let mut i = 0;
    while i < 16 {
        values[b"0123456789abcdef"[i] as usize] = i as u8;
        if uppercase {
            values[b"0123456789ABCDEF"[i] as usize] = i as u8;
        }
        i += 1;
    }
    values
}

fn decode_hex(text: &str, out: &mut [u8], digits: &[u8; 256]) -> bool {
    if text.len() != out.len() * 2 {
        return false;
    }
    for (byte, pair) in out.iter_mut().zip(text.as_bytes().chunks_exact(2)) {
        let (high, low) = (digits[usize::from(pair[0])], digits[usize::from(pair[1])]);
        if (high | low) > 15 {
            return false;
        }
        *byte = (high << 4) | low;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_refuses_what_is_not_hex() {
        let bytes = [0x00, 0x0f, 0xa5, 0xff];
        assert_eq!(hex(&bytes), "000fa5ff");
        assert_eq!(unhex("000FA5ff").as_deref(), Some(&bytes[..]));
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("zz"), None);
        assert_eq!(unhex("é0"), None);
        // A sign is not a digit, though `u8::from_str_radix` takes one.
        assert_eq!(unhex("+f"), None);
        assert_eq!(unhex(""), Some(Vec::new()));
        let mut out = [0; 2];
        assert!(unhex_into("0aFf", &mut out));
        assert_eq!(out, [0x0a, 0xff]);
        assert!(!unhex_into("0aff00", &mut out));
        #[cfg(feature = "sqlite")]
        {
            assert!(!unhex_lowercase_into("0aFf", &mut out));
            assert!(unhex_lowercase_into("0aff", &mut out));
            assert_eq!(hex(&out), "0aff");
        }
    }

    #[test]
    fn sha256_of_nothing_is_the_known_digest() {
        assert_eq!(*sha256_shared(b""), *sha256_hex(b""));
        assert_eq!(*sha256_shared(b"abc"), *sha256_hex(b"abc"));
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
