//! Every name the derives could generate, taken by the user's own code: as field names, as type
//! names, as `#[serde(default = "...")]` functions and as constants in the deriving module. The
//! generated code must mean the user's items wherever the user's code is spliced in.

#![allow(non_upper_case_globals, non_snake_case, dead_code)]

use tool_core::Tool;

/// Default functions named like the generated bindings.
mod defaults {
    use tool_core::Tool;

    pub fn map() -> u32 {
        1
    }
    pub fn cx() -> u32 {
        2
    }
    pub fn at() -> u32 {
        3
    }
    pub fn key() -> u32 {
        4
    }
    pub fn value() -> u32 {
        5
    }
    pub fn parsed() -> u32 {
        6
    }
    pub fn generator() -> u32 {
        7
    }
    pub fn properties() -> u32 {
        8
    }
    pub fn required() -> u32 {
        9
    }
    pub fn de() -> u32 {
        10
    }
    pub fn name() -> u32 {
        11
    }
    pub fn FIELDS() -> u32 {
        12
    }
    pub fn VARIANTS() -> u32 {
        13
    }
    pub fn SCHEMA() -> u32 {
        14
    }

    /// Every field defaulted by a function named like a generated binding.
    #[derive(Tool)]
    pub struct Defaults {
        #[serde(default = "map")]
        pub map: u32,
        #[serde(default = "cx")]
        pub cx: u32,
        #[serde(default = "at")]
        pub at: u32,
        #[serde(default = "key")]
        pub key: u32,
        #[serde(default = "value")]
        pub value: u32,
        #[serde(default = "parsed")]
        pub parsed: u32,
        #[serde(default = "generator")]
        pub generator: u32,
        #[serde(default = "properties")]
        pub properties: u32,
        #[serde(default = "required")]
        pub required: u32,
        #[serde(default = "de")]
        pub de: u32,
        #[serde(default = "name")]
        pub name: u32,
        #[serde(default = "FIELDS")]
        pub fields: u32,
        #[serde(default = "VARIANTS")]
        pub variants: u32,
        #[serde(default = "SCHEMA")]
        pub schema: u32,
        #[serde(skip, default = "map")]
        pub skipped: u32,
    }
}

/// Constants named like the generated bindings, in the module that derives.
mod constants {
    use tool_core::{Argument, Tool};

    pub const map: u32 = 0;
    pub const cx: u32 = 0;
    pub const at: u32 = 0;
    pub const key: u32 = 0;
    pub const value: u32 = 0;
    pub const parsed: u32 = 0;
    pub const generator: u32 = 0;
    pub const properties: u32 = 0;
    pub const required: u32 = 0;
    pub const de: u32 = 0;
    pub const name: u32 = 0;
    pub const FIELDS: u32 = 0;
    pub const VARIANTS: u32 = 0;
    pub const SCHEMA: u32 = 0;

    /// Every field named like a generated binding.
    #[derive(Tool)]
    pub struct Constants {
        pub map: Option<u32>,
        pub cx: Option<u32>,
        pub at: Option<u32>,
        pub key: Option<u32>,
        pub value: Option<u32>,
        pub parsed: Option<u32>,
        pub generator: Option<u32>,
        pub properties: Option<u32>,
        pub required: Option<u32>,
        pub de: Option<u32>,
        pub name: Option<u32>,
        pub mode: Mode,
    }

    /// A mode.
    #[derive(Argument, Debug, PartialEq, Eq)]
    pub enum Mode {
        Fast,
        Slow,
    }
}

/// Field types named like the generated type parameters.
mod types {
    use tool_core::{Argument, Tool};

    /// A type named like the map access parameter.
    #[derive(Argument)]
    pub struct A {
        pub a: u32,
    }

    /// A type named like a value type parameter.
    #[derive(Argument, Debug, PartialEq, Eq)]
    pub enum T {
        Yes,
        No,
    }

    /// A type named like the constraints parameter.
    #[derive(Argument)]
    pub struct C {
        #[tool(length(min = 1))]
        pub c: String,
    }

    /// A type named like the deserializer parameter.
    #[derive(Argument, Debug, PartialEq, Eq)]
    pub enum D {
        On,
        Off,
    }

    /// Every field of a type named like a generated type parameter.
    #[derive(Tool)]
    pub struct Types {
        pub a: A,
        pub t: T,
        #[tool(length(min = 1))]
        pub c: Vec<C>,
        pub d: Option<D>,
    }
}

fn main() {
    let defaults = defaults::Defaults::parse_arguments("{}").unwrap();
    assert_eq!(
        [
            defaults.map,
            defaults.cx,
            defaults.at,
            defaults.key,
            defaults.value,
            defaults.parsed,
            defaults.generator,
            defaults.properties,
            defaults.required,
            defaults.de,
            defaults.name,
            defaults.fields,
            defaults.variants,
            defaults.schema,
            defaults.skipped,
        ],
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 1]
    );

    let constants = constants::Constants::parse_arguments(
        r#"{"map": 1, "cx": 2, "at": 3, "key": 4, "value": 5, "parsed": 6, "generator": 7,
            "properties": 8, "required": 9, "de": 10, "name": 11, "mode": "Slow"}"#,
    )
    .unwrap();
    assert_eq!(
        [
            constants.map,
            constants.cx,
            constants.at,
            constants.key,
            constants.value,
            constants.parsed,
            constants.generator,
            constants.properties,
            constants.required,
            constants.de,
            constants.name,
        ],
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map(Some)
    );
    assert_eq!(constants.mode, constants::Mode::Slow);
    assert!(constants::Constants::input_schema()["properties"]["mode"].is_object());
    let _ = constants::Mode::Fast;

    let types = types::Types::parse_arguments(
        r#"{"a": {"a": 7}, "t": "No", "c": [{"c": "x"}], "d": "On"}"#,
    )
    .unwrap();
    assert_eq!(types.a.a, 7);
    assert_eq!(types.t, types::T::No);
    assert_eq!(types.c[0].c, "x");
    assert_eq!(types.d, Some(types::D::On));
    let _ = (types::T::Yes, types::D::Off);
    assert_eq!(types::Types::NAME, "types");
}
