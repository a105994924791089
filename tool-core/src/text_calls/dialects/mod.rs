//! The built-in dialects, one file each; each file holds the dialect's only list of markers
//! and its reader, and is registered by one line of [`BUILT_IN`].

pub(crate) mod deepseek;
pub(crate) mod granite;
pub(crate) mod hermes;
pub(crate) mod json;
pub(crate) mod llama3;
pub(crate) mod mistral;
pub(crate) mod pythonic;

use super::dialect::Reader;
use super::{Dialect, Marker};

/// A built-in dialect: its variant, name, markers and reader.
pub(crate) struct BuiltIn {
    pub(crate) dialect: Dialect,
    pub(crate) name: &'static str,
    pub(crate) markers: &'static [Marker],
    pub(crate) reader: &'static dyn Reader,
}

/// Every built-in dialect, in the order detection lists them.
pub(crate) const BUILT_IN: &[BuiltIn] = &[
    json::BUILT_IN,
    hermes::BUILT_IN,
    llama3::BUILT_IN,
    mistral::BUILT_IN,
    granite::BUILT_IN,
    deepseek::BUILT_IN,
    pythonic::BUILT_IN,
];

/// How many dialects are built in.
pub(crate) const COUNT: usize = BUILT_IN.len();

/// Every built-in dialect, in the order of [`BUILT_IN`].
pub(crate) const ALL: [Dialect; COUNT] = {
    let mut all = [Dialect::Custom(""); COUNT];
    let mut i = 0;
    while i < COUNT {
        all[i] = BUILT_IN[i].dialect;
        i += 1;
    }
    all
};

/// Every built-in dialect's markers, in the order of [`BUILT_IN`].
pub(crate) static TABLE: [(Dialect, &[Marker]); COUNT] = {
    let mut table: [(Dialect, &[Marker]); COUNT] = [(Dialect::Custom(""), &[]); COUNT];
    let mut i = 0;
    while i < COUNT {
        table[i] = (BUILT_IN[i].dialect, BUILT_IN[i].markers);
        i += 1;
    }
    table
};

/// The name of the built-in `dialect` (empty for one not built in).
pub(crate) fn name(dialect: Dialect) -> &'static str {
    BUILT_IN
        .iter()
        .find(|built_in| built_in.dialect == dialect)
        .map_or("", |built_in| built_in.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_is_registered_once_under_its_name() {
        let names: Vec<&str> = Dialect::ALL.iter().map(|d| d.name()).collect();
        assert_eq!(
            names,
            [
                "json", "hermes", "llama3", "mistral", "granite", "deepseek", "pythonic"
            ]
        );
        for (i, (dialect, markers)) in TABLE.iter().enumerate() {
            assert_eq!(*dialect, ALL[i]);
            assert_eq!(*markers, BUILT_IN[i].markers);
        }
    }
}
