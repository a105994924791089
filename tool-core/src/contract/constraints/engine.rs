//! How a `pattern` becomes a matcher. This file exists twice, byte for byte: in `tool-core`,
//! which matches, and in `tool-derive`, which builds every pattern at compile time exactly as
//! the runtime will, so that a pattern the derive accepts is one the runtime can evaluate. (A
//! published crate reads no file outside itself, hence the copy.) The test
//! `tests/engine_copies.rs` keeps the two identical: change both.

use std::borrow::Cow;

use jsonschema_regex::{RepeatedClass, Search};

/// The most memory one compiled regex may take, in bytes (10 MiB, the `regex` crate's default
/// and the limit the `jsonschema` crate's engine applies by default).
pub(crate) const SIZE_LIMIT: usize = 10 * (1 << 20);

/// The most memory the lazy DFA of one regex may cache while matching, in bytes (2 MiB, the
/// `regex` crate's default); beyond it the engine falls back to a slower linear-time search.
pub(crate) const DFA_SIZE_LIMIT: usize = 2 * (1 << 20);

/// What an unanchored `is_match` of a pattern runs on, chosen the way the `jsonschema` crate
/// chooses: `^X{m,n}$` over one character class counts characters (the engine would build `n`
/// copies of `X`), and a count at either edge of the pattern drops to its minimum, which
/// matches the same strings.
pub(crate) enum Form<'a> {
    /// Count characters of one class.
    #[allow(
        dead_code,
        reason = "the derive only checks that nothing needs building"
    )]
    Count(RepeatedClass),
    /// Build this regex (Rust syntax).
    Engine(Cow<'a, str>),
}

/// The form of `pattern`, whose translation to Rust syntax is `translated`.
pub(crate) fn form<'a>(pattern: &str, translated: &'a str) -> Form<'a> {
    match jsonschema_regex::search_form(pattern, translated) {
        Some(Search::RepeatedClass(class)) => Form::Count(class),
        Some(Search::Collapsed(collapsed)) => Form::Engine(Cow::Owned(collapsed)),
        None => Form::Engine(Cow::Borrowed(translated)),
    }
}

/// Builds `source` with the limits above.
pub(crate) fn build_regex(source: &str) -> Result<regex::Regex, regex::Error> {
    regex::RegexBuilder::new(source)
        .size_limit(SIZE_LIMIT)
        .dfa_size_limit(DFA_SIZE_LIMIT)
        .build()
}
