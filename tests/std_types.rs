//! The standard types as arguments, and the string formats: each one's advertised schema, its
//! parse of good and bad values (violations with pointers and keywords), and the parity law
//! against the `jsonschema` crate (Draft 2020-12, formats asserted) on generated values: the
//! typed parser accepts exactly when the validator accepts the advertised schema, both report
//! the same (pointer, keyword) pairs, and where serde's own `Deserialize` accepts, the value is
//! serde's.
//!
//! Each parity test runs `STD_TYPES_CASES` cases (1,000 by default).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::Debug;
use std::marker::PhantomData;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::num::{NonZeroI8, NonZeroI32, NonZeroI64, NonZeroU8, NonZeroU64, NonZeroUsize};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tool_core::__private::{
    ConstConstraints, Constraints, Cx, Deserializer, Num, Path, SchemaGen, parse_argument,
    parse_argument_value, root_schema,
};
use tool_core::{
    Argument, ArgumentErrors,
    contract::{Format, Keyword},
};

// ---- entry points ----

/// `T` under the constraints `C`, as a field declaring them would hold it.
#[derive(Debug, PartialEq)]
struct With<T, C>(T, PhantomData<C>);

impl<T: Argument, C: ConstConstraints> Argument for With<T, C> {
    fn schema(generator: &mut SchemaGen, _: &Constraints) -> Value {
        T::schema(generator, &C::VALUE)
    }

    fn parse<'de, D: Deserializer<'de>, Ignored: ConstConstraints>(
        de: D,
        cx: &mut Cx,
        at: &Path<'_>,
    ) -> Result<Option<Self>, D::Error> {
        Ok(T::parse::<D, C>(de, cx, at)?.map(|value| With(value, PhantomData)))
    }
}

macro_rules! constraints {
    ($($name:ident = $value:expr;)*) => {$(
        #[derive(Debug, PartialEq)]
        struct $name;
        impl ConstConstraints for $name {
            const VALUE: Constraints = $value;
            type Items = tool_core::__private::Unconstrained;
        }
    )*};
}

constraints! {
    DateFormat = Constraints { format: Some(Format::Date), ..Constraints::NONE };
    DateTimeFormat = Constraints { format: Some(Format::DateTime), ..Constraints::NONE };
    TimeFormat = Constraints { format: Some(Format::Time), ..Constraints::NONE };
    DurationFormat = Constraints { format: Some(Format::Duration), ..Constraints::NONE };
    EmailFormat = Constraints { format: Some(Format::Email), ..Constraints::NONE };
    HostnameFormat = Constraints { format: Some(Format::Hostname), ..Constraints::NONE };
    Ipv4Format = Constraints { format: Some(Format::Ipv4), ..Constraints::NONE };
    Ipv6Format = Constraints { format: Some(Format::Ipv6), ..Constraints::NONE };
    UriFormat = Constraints { format: Some(Format::Uri), ..Constraints::NONE };
    UuidFormat = Constraints { format: Some(Format::Uuid), ..Constraints::NONE };
    ShortDate = Constraints {
        format: Some(Format::Date),
        max_length: Some(8),
        ..Constraints::NONE
    };
    WideRange = Constraints {
        minimum: Some(Num::I(-5)),
        exclusive_maximum: Some(Num::F(1e20)),
        ..Constraints::NONE
    };
    NonZeroRange = Constraints {
        minimum: Some(Num::I(-3)),
        maximum: Some(Num::U(3)),
        ..Constraints::NONE
    };
    TwoToFour = Constraints { min_length: Some(2), max_length: Some(4), ..Constraints::NONE };
}

fn parse<T: Argument>(value: Value) -> Result<T, ArgumentErrors> {
    parse_argument_value::<T>(&value)
}

fn found(errors: &ArgumentErrors) -> Vec<(String, &'static str)> {
    errors
        .iter()
        .map(|v| (v.instance_location().to_owned(), v.keyword().as_str()))
        .collect()
}

/// The (instance location, keyword) pairs of the violations of `value` as a `T`.
fn refused<T: Argument + Debug>(value: Value) -> Vec<(String, &'static str)> {
    let errors = parse::<T>(value.clone()).expect_err(&format!("{value} should be refused"));
    found(&errors)
}

fn at(pointer: &str, keyword: &'static str) -> (String, &'static str) {
    (pointer.to_owned(), keyword)
}

fn schema<T: Argument>() -> Value {
    let mut schema = root_schema::<T>();
    schema
        .as_object_mut()
        .expect("an object schema")
        .remove("$schema");
    schema
}

// ---- the law ----

fn validator<T: Argument>() -> jsonschema::Validator {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&root_schema::<T>())
        .expect("the advertised schema compiles")
}

type Found = BTreeSet<(String, String)>;

/// Checks the law on one instance; the parsed value when it was accepted.
fn check<T: Argument + PartialEq + Debug>(
    validator: &jsonschema::Validator,
    instance: &Value,
) -> Result<Option<T>, TestCaseError> {
    let text = serde_json::to_string(instance).expect("serializable");
    let ours = parse_argument::<T>(&text);
    let theirs: Found = validator
        .iter_errors(instance)
        .map(|error| {
            (
                error.instance_path().to_string(),
                error.kind().keyword().to_owned(),
            )
        })
        .collect();
    prop_assert_eq!(
        ours.is_ok(),
        theirs.is_empty(),
        "accept/reject differ on {}: ours {:?}, jsonschema {:?}",
        text,
        ours.as_ref().err().map(ToString::to_string),
        theirs
    );
    prop_assert_eq!(
        &parse_argument_value::<T>(instance),
        &ours,
        "text and value entry points differ on {}",
        text
    );
    match ours {
        Ok(parsed) => Ok(Some(parsed)),
        Err(errors) => {
            let ours: Found = errors
                .iter()
                .map(|v| {
                    (
                        v.instance_location().to_owned(),
                        v.keyword().as_str().to_owned(),
                    )
                })
                .collect();
            prop_assert_eq!(&ours, &theirs, "violations differ on {}", text);
            Ok(None)
        }
    }
}

/// Where serde's own `Deserialize` accepts `instance`, it gives `parsed`.
fn agrees_with_serde<T: DeserializeOwned + PartialEq + Debug>(
    parsed: &T,
    instance: &Value,
) -> Result<(), TestCaseError> {
    if let Ok(by_serde) = serde_json::from_value::<T>(instance.clone()) {
        prop_assert_eq!(parsed, &by_serde, "serde differs on {}", instance);
    }
    Ok(())
}

fn cases() -> u32 {
    match std::env::var("STD_TYPES_CASES") {
        Ok(text) => text
            .parse()
            .unwrap_or_else(|_| panic!("STD_TYPES_CASES must be a number, not {text:?}")),
        Err(_) => 1_000,
    }
}

/// A parity test of `$ty` on values from `$values`; `serde` also compares with serde's value.
macro_rules! parity {
    ($name:ident: $ty:ty, $values:expr $(, $serde:ident)?) => {
        mod $name {
            use super::*;

            fn law() -> &'static jsonschema::Validator {
                static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> =
                    std::sync::OnceLock::new();
                VALIDATOR.get_or_init(validator::<$ty>)
            }

            proptest! {
                #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
                #[test]
                fn agrees_with_jsonschema(instance in $values) {
                    let parsed = check::<$ty>(law(), &instance)?;
                    $(
                        let _ = stringify!($serde);
                        if let Some(parsed) = &parsed {
                            agrees_with_serde::<$ty>(parsed, &instance)?;
                        }
                    )?
                    let _ = parsed;
                }
            }
        }
    };
}

// ---- generated values ----

/// Values of every JSON type that no scalar strategy below makes.
fn other_types() -> impl Strategy<Value = Value> {
    prop::sample::select(vec![
        Value::Null,
        json!(true),
        json!([]),
        json!([1]),
        json!({}),
        json!({"a": 1}),
        json!(""),
        json!("1"),
        json!(1.5),
    ])
}

/// Numbers at the edges of every integer type, zero in its three spellings, and beyond 64 bits.
fn integers() -> impl Strategy<Value = Value> {
    let edges: Vec<Value> = vec![
        json!(0),
        json!(0.0),
        json!(-0.0),
        json!(1),
        json!(-1),
        json!(1.0),
        json!(-1.5),
        json!(127),
        json!(128),
        json!(-128),
        json!(-129),
        json!(255),
        json!(256),
        json!(i32::MAX),
        json!(i32::MIN),
        json!(i64::MAX),
        json!(i64::MIN),
        json!(u64::MAX),
        json!(1e19),
        json!(-1e19),
        json!(1e20),
        json!(1.5e20),
        json!(2f64.powi(64)),
        json!(-(2f64.powi(63)) - 4096.0),
        json!(2f64.powi(127)),
        json!(2f64.powi(127).next_down()),
        json!(-(2f64.powi(127))),
        json!(-(2f64.powi(127)).next_down()),
        json!(2f64.powi(128)),
        json!(2f64.powi(128).next_down()),
        json!(1e39),
        json!(-1e39),
        json!(123.25),
    ];
    prop_oneof![
        4 => prop::sample::select(edges),
        2 => any::<i64>().prop_map(Value::from),
        2 => any::<u64>().prop_map(Value::from),
        1 => (-3i64..=3).prop_map(Value::from),
        2 => (any::<i32>(), 0i32..=127).prop_map(|(m, e)| Value::from(f64::from(m) * 2f64.powi(e))),
        1 => other_types(),
    ]
}

/// Strings of up to a few characters from a mixed alphabet (ASCII, accents, astral).
fn short_strings() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => "[a-zA-Z0-9 é€😀\"\\\\]{0,4}".prop_map(Value::String),
        1 => other_types(),
    ]
}

fn ipv4_text() -> impl Strategy<Value = String> {
    let part = prop_oneof![
        4 => (0u16..=255).prop_map(|n| n.to_string()),
        1 => (256u16..=999).prop_map(|n| n.to_string()),
        1 => (0u16..=99).prop_map(|n| format!("0{n}")),
        1 => prop::sample::select(vec!["".to_owned(), "x".to_owned(), " 1".to_owned()]),
    ];
    prop::collection::vec(part, 3..=5).prop_map(|parts| parts.join("."))
}

fn ipv6_text() -> impl Strategy<Value = String> {
    let group = prop_oneof![
        4 => (0u32..=0xffff).prop_map(|n| format!("{n:x}")),
        1 => (0u32..=0xffff).prop_map(|n| format!("{n:04X}")),
        1 => (0x1_0000u32..=0xf_ffff).prop_map(|n| format!("{n:x}")),
        1 => Just(String::new()),
    ];
    (
        prop::collection::vec(group, 1..=9),
        prop::sample::select(vec!["", "", "", "%eth0", "%25", "/64"]),
        prop::option::of(ipv4_text()),
        any::<u8>(),
    )
        .prop_map(|(groups, tail, v4, gap)| {
            let mut text = groups.join(":");
            if gap % 3 == 0 {
                let at = usize::from(gap) % (text.len() + 1);
                if text.is_char_boundary(at) {
                    text.insert_str(at, "::");
                }
            }
            if let Some(v4) = v4.filter(|_| gap % 2 == 0) {
                text.push(':');
                text.push_str(&v4);
            }
            text.push_str(tail);
            text
        })
}

fn ip_strings() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => ipv4_text().prop_map(Value::String),
        3 => ipv6_text().prop_map(Value::String),
        1 => prop::sample::select(vec![json!("::"), json!("::1"), json!("1::"), json!("::ffff:1.2.3.4"), json!("127.0.0.1"), json!("0.0.0.0")]),
        1 => other_types(),
    ]
}

/// Small items that repeat often, as JSON writes them in several ways.
fn set_items() -> impl Strategy<Value = Value> {
    prop::sample::select(vec![
        json!(1),
        json!(1.0),
        json!(2),
        json!(0),
        json!(-0.0),
        json!(255),
        json!(256),
        json!(-1),
        json!("a"),
        json!("b"),
        json!(null),
        json!([1]),
    ])
}

fn arrays_of(items: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => prop::collection::vec(items, 0..6).prop_map(Value::Array),
        1 => other_types(),
    ]
}

/// Property names: integers as JSON writes them, near the ranges' ends, and what is not one.
fn keys() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (-300i64..=300).prop_map(|n| n.to_string()),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => any::<u64>().prop_map(|n| n.to_string()),
        1 => prop::sample::select(vec![
            "-0", "00", "01", "+1", " 1", "1 ", "1.0", "1e2", "", "-", "a", "~1", "0x10",
            "18446744073709551616", "-9223372036854775809",
            "170141183460469231731687303715884105727",
            "170141183460469231731687303715884105728",
            "-170141183460469231731687303715884105728",
            "340282366920938463463374607431768211455",
            "340282366920938463463374607431768211456",
        ])
        .prop_map(str::to_owned),
    ]
}

fn objects_of(values: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => prop::collection::btree_map(keys(), values, 0..5)
            .prop_map(|map| Value::Object(map.into_iter().collect())),
        1 => other_types(),
    ]
}

fn small_values() -> impl Strategy<Value = Value> {
    prop::sample::select(vec![
        json!(0),
        json!(1),
        json!(255),
        json!(256),
        json!(-1),
        json!(1.5),
        json!(true),
        json!("x"),
        json!(null),
    ])
}

// ---- char ----

#[test]
fn char_is_a_string_of_one_character() {
    assert_eq!(
        schema::<char>(),
        json!({"type": "string", "minLength": 1, "maxLength": 1})
    );
    assert_eq!(parse::<char>(json!("é")).unwrap(), 'é');
    assert_eq!(parse::<char>(json!("😀")).unwrap(), '😀');
    assert_eq!(refused::<char>(json!("ab")), [at("", "maxLength")]);
    assert_eq!(refused::<char>(json!("")), [at("", "minLength")]);
    assert_eq!(refused::<char>(json!(1)), [at("", "type")]);
}

parity!(char_parity: char, short_strings(), serde);

// ---- str owners and paths ----

#[test]
fn str_owners_take_the_string_constraints() {
    assert_eq!(schema::<Box<str>>(), json!({"type": "string"}));
    assert_eq!(&*parse::<Box<str>>(json!("a")).unwrap(), "a");
    assert_eq!(&*parse::<Arc<str>>(json!("a")).unwrap(), "a");
    assert_eq!(&*parse::<Rc<str>>(json!("a")).unwrap(), "a");
    assert_eq!(
        parse::<Cow<'static, str>>(json!("a")).unwrap(),
        Cow::<str>::Borrowed("a")
    );
    assert_eq!(
        parse::<PathBuf>(json!("/tmp/a b")).unwrap(),
        PathBuf::from("/tmp/a b")
    );
    assert_eq!(refused::<PathBuf>(json!(["a"])), [at("", "type")]);
    assert_eq!(
        schema::<With<Arc<str>, TwoToFour>>(),
        json!({"type": "string", "minLength": 2, "maxLength": 4})
    );
    assert_eq!(
        refused::<With<Arc<str>, TwoToFour>>(json!("x")),
        [at("", "minLength")]
    );
    assert_eq!(
        refused::<With<Cow<'static, str>, DateFormat>>(json!("2025-02-30")),
        [at("", "format")]
    );
}

parity!(box_str_parity: Box<str>, short_strings(), serde);
parity!(cow_parity: Cow<'static, str>, short_strings(), serde);
parity!(path_parity: PathBuf, short_strings(), serde);
parity!(arc_str_parity: With<Arc<str>, TwoToFour>, short_strings());
parity!(rc_str_parity: Rc<str>, short_strings());

// ---- i128 and u128 ----

#[test]
fn wide_integers_advertise_exact_bounds() {
    assert_eq!(
        schema::<i128>(),
        json!({
            "type": "integer",
            "minimum": -170141183460469231731687303715884105728.0,
            "exclusiveMaximum": 170141183460469231731687303715884105728.0,
        })
    );
    assert_eq!(
        schema::<u128>(),
        json!({
            "type": "integer",
            "minimum": 0,
            "exclusiveMaximum": 340282366920938463463374607431768211456.0,
        })
    );
}

#[test]
fn wide_integers_read_every_digit() {
    assert_eq!(parse_argument::<i128>("-42").unwrap(), -42);
    assert_eq!(
        parse_argument::<u128>("18446744073709551616").unwrap(),
        1 << 64
    );
    assert_eq!(
        parse_argument::<i128>("-18446744073709551616").unwrap(),
        -(1 << 64)
    );
    // 2^100 is a double; 2^100 + 1 is not, and a validator would see 2^100.
    assert_eq!(
        parse_argument::<u128>("1267650600228229401496703205376").unwrap(),
        1 << 100
    );
    let errors = parse_argument::<u128>("1267650600228229401496703205377").unwrap_err();
    assert_eq!(found(&errors), [at("", "type")]);
    assert!(
        errors.to_string().contains("more significant digits"),
        "{errors}"
    );
    // i128::MAX is not a double either; i128::MIN is.
    assert_eq!(
        found(&parse_argument::<i128>(&i128::MAX.to_string()).unwrap_err()),
        [at("", "type")]
    );
    assert_eq!(
        parse_argument::<i128>(&i128::MIN.to_string()).unwrap(),
        i128::MIN
    );
    // Fractions and exponents are doubles; a value of another type is refused as one.
    assert_eq!(
        parse_argument::<i128>("1e20").unwrap(),
        100_000_000_000_000_000_000
    );
    assert_eq!(parse_argument::<u128>("[1]").unwrap_err().len(), 1);
    assert_eq!(
        found(&parse_argument::<u128>("-1").unwrap_err()),
        [at("", "minimum")]
    );
    assert_eq!(
        found(&parse_argument::<i128>("1.5").unwrap_err()),
        [at("", "type")]
    );
    assert_eq!(
        found(&parse_argument::<i128>("1e39").unwrap_err()),
        [at("", "exclusiveMaximum")]
    );
    assert_eq!(
        found(&parse_argument::<Vec<u128>>(r#"[1, "2", 3.5, 4e40]"#).unwrap_err()),
        [
            at("/1", "type"),
            at("/2", "type"),
            at("/3", "exclusiveMaximum")
        ]
    );
    assert_eq!(
        found(&parse_argument::<With<i128, WideRange>>("100000000000000000000").unwrap_err()),
        [at("", "exclusiveMaximum")]
    );
}

/// An `f32` read with serde's typed `deserialize_f32`, as a hand-written argument may: the
/// first pass stops at it and the text is read again untyped.
#[derive(Debug, PartialEq)]
struct TypedF32(f32);

impl Argument for TypedF32 {
    fn schema(_: &mut SchemaGen, _: &Constraints) -> Value {
        json!({"type": "number"})
    }

    fn parse<'de, D: Deserializer<'de>, C: ConstConstraints>(
        de: D,
        _: &mut Cx,
        _: &Path<'_>,
    ) -> Result<Option<Self>, D::Error> {
        <f32 as serde::Deserialize>::deserialize(de).map(|v| Some(TypedF32(v)))
    }
}

#[derive(Argument, Debug, PartialEq)]
struct WideBesideTyped {
    n: u128,
    x: TypedF32,
}

#[derive(Argument, serde::Deserialize, Debug, PartialEq)]
#[serde(untagged)]
enum WideOrName {
    Wide(u128),
    Name(String),
}

#[test]
fn wide_integers_keep_every_digit_when_the_text_is_read_again() {
    // 2^100 + 1 is not a double: read untyped as one, it would be 2^100, a value never written.
    let text = r#"{"n": 1267650600228229401496703205377, "x": 1.5}"#;
    assert_eq!(
        found(&parse_argument::<WideBesideTyped>(text).unwrap_err()),
        [at("/n", "type")]
    );
    let text = r#"{"n": 1267650600228229401496703205376, "x": 1.5}"#;
    assert_eq!(
        parse_argument::<WideBesideTyped>(text).unwrap(),
        WideBesideTyped {
            n: 1 << 100,
            x: TypedF32(1.5)
        }
    );
    // A value of another type is a violation like any other, not text that is not JSON.
    let text = r#"{"n": "1", "x": 1.5}"#;
    assert_eq!(
        found(&parse_argument::<WideBesideTyped>(text).unwrap_err()),
        [at("/n", "type")]
    );
    let text = r#"{"n": 1e20, "x": 1.5}"#;
    assert_eq!(
        parse_argument::<WideBesideTyped>(text).unwrap().n,
        100_000_000_000_000_000_000
    );
    // Text that is not JSON is still explained by position.
    let errors = parse_argument::<WideBesideTyped>(r#"{"n": 1, "x": 1.5"#).unwrap_err();
    assert!(errors.to_string().contains("line 1"), "{errors}");
}

#[test]
fn wide_integers_in_an_untagged_union_keep_every_digit() {
    assert_eq!(
        parse_argument::<WideOrName>("1267650600228229401496703205376").unwrap(),
        WideOrName::Wide(1 << 100)
    );
    assert!(parse_argument::<WideOrName>("1267650600228229401496703205377").is_err());
    assert_eq!(
        parse_argument::<WideOrName>(r#""x""#).unwrap(),
        WideOrName::Name("x".into())
    );
}

parity!(i128_parity: i128, integers(), serde);
parity!(u128_parity: u128, integers(), serde);
parity!(i128_range_parity: With<i128, WideRange>, integers());

// ---- NonZero ----

#[test]
fn nonzero_integers_refuse_zero() {
    assert_eq!(
        schema::<NonZeroU8>(),
        json!({"type": "integer", "minimum": 1, "maximum": 255})
    );
    assert_eq!(
        schema::<NonZeroI8>(),
        json!({"type": "integer", "minimum": -128, "maximum": 127, "not": {"const": 0}})
    );
    assert_eq!(parse::<NonZeroU8>(json!(7)).unwrap().get(), 7);
    assert_eq!(parse::<NonZeroI32>(json!(-7)).unwrap().get(), -7);
    assert_eq!(refused::<NonZeroU64>(json!(0)), [at("", "minimum")]);
    assert_eq!(refused::<NonZeroI64>(json!(-0.0)), [at("", "not")]);
    assert_eq!(refused::<NonZeroI8>(json!(0.0)), [at("", "not")]);
    assert_eq!(
        refused::<Vec<NonZeroI8>>(json!([1, 0, 200])),
        [at("/1", "not"), at("/2", "maximum")]
    );
}

parity!(nonzero_u8_parity: NonZeroU8, integers(), serde);
parity!(nonzero_usize_parity: NonZeroUsize, integers(), serde);
parity!(nonzero_i8_parity: NonZeroI8, integers(), serde);
parity!(nonzero_i64_parity: NonZeroI64, integers(), serde);
parity!(nonzero_range_parity: With<NonZeroI32, NonZeroRange>, integers());

// ---- IP addresses ----

#[test]
fn ip_addresses_are_formatted_strings() {
    assert_eq!(
        schema::<Ipv4Addr>(),
        json!({"type": "string", "format": "ipv4"})
    );
    assert_eq!(
        schema::<Ipv6Addr>(),
        json!({"type": "string", "format": "ipv6"})
    );
    assert_eq!(
        schema::<IpAddr>(),
        json!({"type": "string", "anyOf": [{"format": "ipv4"}, {"format": "ipv6"}]})
    );
    assert_eq!(
        parse::<IpAddr>(json!("::ffff:192.0.2.1")).unwrap(),
        "::ffff:192.0.2.1".parse::<IpAddr>().unwrap()
    );
    assert_eq!(refused::<Ipv4Addr>(json!("192.0.2.01")), [at("", "format")]);
    assert_eq!(
        refused::<Ipv6Addr>(json!("fe80::1%eth0")),
        [at("", "format")]
    );
    assert_eq!(refused::<IpAddr>(json!("localhost")), [at("", "anyOf")]);
    assert_eq!(refused::<IpAddr>(json!(3)), [at("", "type")]);
}

parity!(ipv4_parity: Ipv4Addr, ip_strings(), serde);
parity!(ipv6_parity: Ipv6Addr, ip_strings(), serde);
parity!(ip_parity: IpAddr, ip_strings(), serde);

// ---- tuples and arrays ----

#[test]
fn tuples_and_arrays_have_one_schema_per_position() {
    assert_eq!(
        schema::<(u8, String)>(),
        json!({
            "type": "array",
            "prefixItems": [
                {"type": "integer", "minimum": 0, "maximum": 255},
                {"type": "string"}
            ],
            "items": false,
            "minItems": 2,
            "maxItems": 2
        })
    );
    assert_eq!(
        schema::<[bool; 0]>(),
        json!({"type": "array", "items": false, "minItems": 0, "maxItems": 0})
    );
    assert_eq!(
        parse::<(u8, String)>(json!([1, "a"])).unwrap(),
        (1, "a".to_owned())
    );
    assert_eq!(parse::<[i8; 3]>(json!([1, -2, 3])).unwrap(), [1, -2, 3]);
    assert_eq!(
        refused::<(u8, String)>(json!(["a", 1])),
        [at("/0", "type"), at("/1", "type")]
    );
    assert_eq!(
        refused::<(u8, String)>(json!([1, "a", 3, 4])),
        [
            at("/2", "falseSchema"),
            at("/3", "falseSchema"),
            at("", "maxItems")
        ]
    );
    assert_eq!(
        refused::<[i8; 3]>(json!([1, 300])),
        [at("/1", "maximum"), at("", "minItems")]
    );
    assert_eq!(refused::<(bool,)>(json!({"0": true})), [at("", "type")]);
}

type Six = (i8, char, Option<u8>, String, bool, u16);

parity!(pair_parity: (u8, String), arrays_of(small_values()), serde);
parity!(single_parity: (bool,), arrays_of(small_values()), serde);
parity!(six_parity: Six, arrays_of(prop_oneof![small_values(), short_strings()]), serde);
parity!(array_parity: [u8; 3], arrays_of(small_values()), serde);
parity!(empty_array_parity: [u8; 0], arrays_of(small_values()), serde);

// ---- sets ----

#[test]
fn sets_refuse_repeats_as_json_schema_finds_them() {
    assert_eq!(
        schema::<BTreeSet<u8>>(),
        json!({
            "type": "array",
            "items": {"type": "integer", "minimum": 0, "maximum": 255},
            "uniqueItems": true
        })
    );
    assert_eq!(
        parse::<BTreeSet<u8>>(json!([3, 1, 2])).unwrap(),
        BTreeSet::from([1, 2, 3])
    );
    // `1` and `1.0` are the same JSON value.
    assert_eq!(
        refused::<BTreeSet<u8>>(json!([1, 1.0])),
        [at("", "uniqueItems")]
    );
    // A repeat among items of the wrong type is found too.
    assert_eq!(
        refused::<HashSet<u8>>(json!(["a", 2, "a"])),
        [at("/0", "type"), at("/2", "type"), at("", "uniqueItems")]
    );
    assert_eq!(
        refused::<With<BTreeSet<String>, TwoToFour>>(json!(["a"])),
        [at("", "minItems")]
    );
}

parity!(btree_set_parity: BTreeSet<u8>, arrays_of(set_items()), serde);
parity!(hash_set_parity: HashSet<String>, arrays_of(set_items()), serde);
parity!(set_of_options_parity: BTreeSet<Option<i8>>, arrays_of(set_items()), serde);
parity!(bounded_set_parity: With<BTreeSet<u8>, TwoToFour>, arrays_of(set_items()));

// ---- maps with integer keys ----

#[test]
fn integer_keys_are_numerals_as_json_writes_them() {
    assert_eq!(
        schema::<BTreeMap<u8, bool>>(),
        json!({
            "type": "object",
            "additionalProperties": {"type": "boolean"},
            "propertyNames": {"pattern": "^(0|[1-9][0-9]{0,1}|1[0-9]{2}|2[0-4][0-9]|25[0-4]|255)$"}
        })
    );
    assert_eq!(
        schema::<HashMap<String, bool>>(),
        json!({"type": "object", "additionalProperties": {"type": "boolean"}})
    );
    assert_eq!(
        parse::<BTreeMap<i64, bool>>(json!({"-3": true, "0": false})).unwrap(),
        BTreeMap::from([(-3, true), (0, false)])
    );
    let errors = parse::<BTreeMap<u8, bool>>(json!({"01": true, "256": 1, "7": 1})).unwrap_err();
    assert_eq!(
        found(&errors),
        [
            at("", "propertyNames"),
            at("", "propertyNames"),
            at("/256", "type"),
            at("/7", "type")
        ]
    );
    assert_eq!(errors.violations()[0].pointer(), "/01");
    assert!(
        errors.violations()[0]
            .message()
            .contains("an integer from 0 to 255"),
        "{errors}"
    );
}

#[test]
fn integer_keys_are_the_keys_serde_reads() {
    for name in [
        "0", "7", "-7", "255", "256", "-0", "01", "+1", " 1", "1.0", "1e2", "x", "",
    ] {
        let text = format!("{{\"{name}\": true}}");
        let ours = parse_argument::<BTreeMap<i16, bool>>(&text).ok();
        let serde = serde_json::from_str::<BTreeMap<i16, bool>>(&text).ok();
        if let Some(serde) = serde {
            // serde reads `-0` as a key (0) too; here no two names make one key.
            if name != "-0" {
                assert_eq!(ours.as_ref(), Some(&serde), "{name:?}");
            }
        } else {
            assert_eq!(ours, None, "{name:?}");
        }
    }
}

parity!(u8_keys_parity: BTreeMap<u8, u8>, objects_of(small_values()), serde);
parity!(i64_keys_parity: HashMap<i64, bool>, objects_of(small_values()), serde);
parity!(i8_keys_parity: BTreeMap<i8, u8>, objects_of(small_values()), serde);
parity!(u128_keys_parity: BTreeMap<u128, u8>, objects_of(small_values()), serde);
parity!(i128_keys_parity: BTreeMap<i128, u8>, objects_of(small_values()), serde);
parity!(string_keys_parity: BTreeMap<String, u8>, objects_of(small_values()), serde);

// ---- formats ----

/// Strings near each format: valid ones, and the near misses that tell checks apart.
fn format_strings(format: Format) -> BoxedStrategy<String> {
    let tricky: Vec<&str> = match format {
        Format::Date | Format::DateTime | Format::Time => vec![
            "2025-02-28",
            "2024-02-29",
            "2025-02-29",
            "2025-02-30",
            "2025-13-01",
            "0000-01-01",
            "2025-1-01",
            "20250101",
            "2025-01-01T00:00:00Z",
            "2025-01-01t00:00:00z",
            "2025-01-01 00:00:00Z",
            "2016-12-31T23:59:60Z",
            "2025-01-15T23:59:60Z",
            "2025-01-15T23:59:60.5+00:00",
            "2025-06-30T23:59:60Z",
            "2016-12-31T22:59:60-01:00",
            "2016-12-31T23:59:60+01:00",
            "2025-01-01T12:00:60Z",
            "2025-01-01T24:00:00Z",
            "2025-01-01T00:00:00.123456789012Z",
            "2025-01-01T00:00:00.Z",
            "2025-01-01T00:00:00+23:59",
            "2025-01-01T00:00:00+24:00",
            "2025-01-01T00:00:00-00:00",
            "2025-01-01T00:00:00+0100",
            "2025-01-01T00:00:00",
            "23:59:60Z",
            "12:00:00z",
            "12:00:00.5+05:30",
            "12:00:00",
            "1:00:00Z",
        ],
        Format::Duration => vec![
            "P1D",
            "P1W",
            "P1Y2M3DT4H5M6S",
            "PT1H",
            "PT",
            "P",
            "P1",
            "P1WT1H",
            "P1Y1D",
            "PT1H1S",
            "P1.5D",
            "p1d",
            "P1D1Y",
            "PT36H",
            "P0D",
        ],
        Format::Email => vec![
            "a@example.com",
            "a.b+c@example.co",
            "\"a b\"@example.com",
            "\"\"@example.com",
            "a@[127.0.0.1]",
            "a@[IPv6:::1]",
            "a@[ipv6:::1]",
            "a@@example.com",
            "a@",
            "@example.com",
            "é@example.com",
            "a@exämple.com",
            "a@xn--exmple-cua.com",
            "a..b@example.com",
            "a@-example.com",
            "mailto:a@example.com",
        ],
        Format::Hostname => vec![
            "example.com",
            "a",
            "a.",
            "-a.com",
            "a-.com",
            "xn--exmple-cua.com",
            "xn--a.com",
            "ab--c.com",
            "exämple.com",
            "a_b.com",
            "1.2.3.4",
            "localhost",
            "",
        ],
        Format::Ipv4 | Format::Ipv6 => vec![
            "1.2.3.4",
            "01.2.3.4",
            "256.1.1.1",
            "::1",
            "fe80::1%eth0",
            "::ffff:1.2.3.4",
            "1::2::3",
            "1:2:3:4:5:6:7:8",
            "1:2:3:4:5:6:7:8:9",
            "[::1]",
        ],
        Format::Uri => vec![
            "https://example.com",
            "mailto:a@example.com",
            "urn:isbn:0451450523",
            "/relative",
            "relative",
            "http://[::1]/",
            "http://[fe80::1%25eth0]/",
            "http://exa mple.com",
            "http://example.com/%zz",
            "http://example.com:99999",
            "http://256.256.256.256/",
            "HTTP://EXAMPLE.COM",
            "a:b",
            "1a:b",
            "http:",
            "file:///tmp/a",
            "http://ex\u{e4}mple.com",
        ],
        Format::Uuid => vec![
            "67e55044-10b1-426f-9247-bb680e5fe0c8",
            "67E55044-10B1-426F-9247-BB680E5FE0C8",
            "67e5504410b1426f9247bb680e5fe0c8",
            "{67e55044-10b1-426f-9247-bb680e5fe0c8}",
            "urn:uuid:67e55044-10b1-426f-9247-bb680e5fe0c8",
            "67e55044-10b1-426f-9247-bb680e5fe0c",
            "67e55044-10b1-426f-9247-bb680e5fe0cg",
            "00000000-0000-0000-0000-000000000000",
        ],
        _ => vec![],
    };
    let tricky: Vec<String> = tricky.into_iter().map(str::to_owned).collect();
    let generated: BoxedStrategy<String> = match format {
        Format::Date => "[0-9]{4}-[0-1][0-9]-[0-3][0-9]".boxed(),
        Format::DateTime => {
            "[0-9]{4}-[0-1][0-9]-[0-3][0-9][Tt ][0-2][0-9]:[0-5][0-9]:[0-6][0-9](\\.[0-9]{0,12})?([Zz]|[+-][0-2][0-9]:[0-6][0-9])?"
                .boxed()
        }
        Format::Time => {
            "[0-2][0-9]:[0-6][0-9]:[0-6][0-9](\\.[0-9]{0,3})?([Zz]|[+-][0-2][0-9]:[0-6][0-9])?".boxed()
        }
        Format::Duration => "P([0-9]{1,2}[YMWD]){0,3}(T([0-9]{1,2}[HMS]){0,3})?".boxed(),
        Format::Email => {
            "[a-z.\"é]{0,4}@([a-z-]{0,4}\\.){0,2}[a-zä-]{0,4}".boxed()
        }
        Format::Hostname => "(xn--)?[a-z0-9-]{0,6}(\\.[a-z0-9ä_-]{0,6}){0,3}".boxed(),
        Format::Ipv4 => ipv4_text().boxed(),
        Format::Ipv6 => ipv6_text().boxed(),
        Format::Uri => {
            "[a-z]{0,5}:(//[a-z0-9.%\\[\\]:@-]{0,8})?(/[a-z0-9%?#]{0,4}){0,2}".boxed()
        }
        Format::Uuid => "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-gA-G]{11,13}".boxed(),
        _ => Just(String::new()).boxed(),
    };
    prop_oneof![1 => prop::sample::select(tricky), 3 => generated].boxed()
}

#[test]
fn formats_are_advertised_and_checked() {
    assert_eq!(
        schema::<With<String, DateTimeFormat>>(),
        json!({"type": "string", "format": "date-time"})
    );
    assert_eq!(
        parse::<With<String, DateFormat>>(json!("2024-02-29"))
            .unwrap()
            .0,
        "2024-02-29"
    );
    let errors = parse::<With<String, DateFormat>>(json!("2025-02-30")).unwrap_err();
    assert_eq!(found(&errors), [at("", "format")]);
    assert_eq!(
        errors.violations()[0].keyword(),
        Keyword::from_schema_keyword("format")
    );
    assert_eq!(
        errors.to_string(),
        r#"- (root): must be a date YYYY-MM-DD (format "date"); got "2025-02-30""#
    );
    // Every broken keyword is reported.
    assert_eq!(
        refused::<With<String, ShortDate>>(json!("2025-02-30")),
        [at("", "maxLength"), at("", "format")]
    );
    assert_eq!(
        refused::<Vec<With<String, UuidFormat>>>(json!(["67e5504410b1426f9247bb680e5fe0c8"])),
        [at("/0", "format")]
    );
}

macro_rules! format_parity {
    ($($name:ident: $format:expr, $constraints:ty;)*) => {$(
        mod $name {
            use super::*;

            fn law() -> &'static jsonschema::Validator {
                static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> =
                    std::sync::OnceLock::new();
                VALIDATOR.get_or_init(validator::<With<String, $constraints>>)
            }

            proptest! {
                #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
                #[test]
                fn agrees_with_jsonschema(text in format_strings($format)) {
                    let instance = Value::String(text);
                    let parsed = check::<With<String, $constraints>>(law(), &instance)?;
                    prop_assert_eq!(parsed.is_some(), $format.is_valid(instance.as_str().unwrap_or("")));
                }
            }
        }
    )*};
}

format_parity! {
    date_format: Format::Date, DateFormat;
    date_time_format: Format::DateTime, DateTimeFormat;
    time_format: Format::Time, TimeFormat;
    duration_format: Format::Duration, DurationFormat;
    email_format: Format::Email, EmailFormat;
    hostname_format: Format::Hostname, HostnameFormat;
    ipv4_format: Format::Ipv4, Ipv4Format;
    ipv6_format: Format::Ipv6, Ipv6Format;
    uri_format: Format::Uri, UriFormat;
    uuid_format: Format::Uuid, UuidFormat;
}

// ---- the types of other crates ----

fn date_time_strings() -> BoxedStrategy<Value> {
    prop_oneof![
        6 => format_strings(Format::DateTime).prop_map(Value::String),
        1 => other_types(),
    ]
    .boxed()
}

fn partial_time_strings() -> BoxedStrategy<Value> {
    prop_oneof![
        3 => "[0-2][0-9]:[0-6][0-9]:[0-6][0-9](\\.[0-9]{0,12})?".prop_map(Value::String),
        1 => prop::sample::select(vec![
            "23:59:59", "23:59:60", "24:00:00", "09:30", "09:30:00Z", "09:30:00.", "9:30:00",
            "09:30:00.123456789", "09:30:00.1234567891", " 09:30:00",
        ])
        .prop_map(|s| Value::String(s.to_owned())),
        1 => other_types(),
    ]
    .boxed()
}

fn date_strings() -> BoxedStrategy<Value> {
    prop_oneof![
        6 => format_strings(Format::Date).prop_map(Value::String),
        1 => other_types(),
    ]
    .boxed()
}

mod chrono_types {
    use chrono::{DateTime, FixedOffset, NaiveDate, NaiveTime, TimeZone, Utc};

    use super::*;

    #[test]
    fn chrono_types_read_rfc_3339() {
        assert_eq!(
            schema::<DateTime<Utc>>(),
            json!({"type": "string", "format": "date-time"})
        );
        assert_eq!(
            schema::<NaiveDate>(),
            json!({"type": "string", "format": "date"})
        );
        assert_eq!(
            schema::<NaiveTime>(),
            json!({
                "type": "string",
                "pattern": r"^([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,9})?$"
            })
        );
        assert_eq!(
            parse::<DateTime<Utc>>(json!("2025-01-31T09:30:00+01:00")).unwrap(),
            Utc.with_ymd_and_hms(2025, 1, 31, 8, 30, 0).unwrap()
        );
        assert_eq!(
            parse::<DateTime<FixedOffset>>(json!("2025-01-31t09:30:00.5z")).unwrap(),
            DateTime::parse_from_rfc3339("2025-01-31T09:30:00.5Z").unwrap()
        );
        // A leap second where the format allows one is chrono's leap second.
        let leap = parse::<DateTime<Utc>>(json!("2016-12-31T23:59:60Z")).unwrap();
        assert_eq!(leap.timestamp_subsec_nanos(), 1_000_000_000);
        assert_eq!(
            refused::<DateTime<Utc>>(json!("2025-01-01T12:00:60Z")),
            [at("", "format")]
        );
        assert_eq!(
            refused::<DateTime<Utc>>(json!("2025-02-30T00:00:00Z")),
            [at("", "format")]
        );
        assert_eq!(
            refused::<DateTime<Utc>>(json!("2025-01-01 00:00:00Z")),
            [at("", "format")]
        );
        assert_eq!(
            parse::<NaiveDate>(json!("2024-02-29")).unwrap(),
            NaiveDate::from_ymd_opt(2024, 2, 29).unwrap()
        );
        assert_eq!(
            refused::<NaiveDate>(json!("2025-02-29")),
            [at("", "format")]
        );
        assert_eq!(
            parse::<NaiveTime>(json!("09:30:00.25")).unwrap(),
            NaiveTime::from_hms_milli_opt(9, 30, 0, 250).unwrap()
        );
        assert_eq!(refused::<NaiveTime>(json!("23:59:60")), [at("", "pattern")]);
        assert_eq!(
            refused::<NaiveTime>(json!("09:30:00Z")),
            [at("", "pattern")]
        );
    }

    parity!(date_time_utc_parity: DateTime<Utc>, date_time_strings(), serde);
    parity!(date_time_offset_parity: DateTime<FixedOffset>, date_time_strings(), serde);
    parity!(naive_date_parity: NaiveDate, date_strings(), serde);
    parity!(naive_time_parity: NaiveTime, partial_time_strings(), serde);
}

mod time_types {
    use serde::Deserialize;
    use time::macros::{date, datetime, time};
    use time::{Date, OffsetDateTime, Time};

    use super::*;

    #[test]
    fn time_types_read_rfc_3339() {
        assert_eq!(
            schema::<OffsetDateTime>(),
            json!({"type": "string", "format": "date-time", "pattern": "^[^:]*:[^:]*:[0-5]"})
        );
        assert_eq!(
            parse::<OffsetDateTime>(json!("2025-01-31T09:30:00.5+01:00")).unwrap(),
            datetime!(2025-01-31 09:30:00.5 +01:00)
        );
        // `time` holds no leap second: refused wherever it falls, as advertised.
        assert_eq!(
            refused::<OffsetDateTime>(json!("2016-12-31T23:59:60Z")),
            [at("", "pattern")]
        );
        assert_eq!(
            refused::<OffsetDateTime>(json!("2025-01-01T12:00:60Z")),
            [at("", "format"), at("", "pattern")]
        );
        assert_eq!(
            parse::<Date>(json!("2024-02-29")).unwrap(),
            date!(2024 - 02 - 29)
        );
        assert_eq!(refused::<Date>(json!("2025-02-29")), [at("", "format")]);
        assert_eq!(
            parse::<Time>(json!("09:30:00.000000250")).unwrap(),
            time!(09:30:00.000000250)
        );
        assert_eq!(
            parse::<Time>(json!("23:59:59.5")).unwrap(),
            time!(23:59:59.5)
        );
        assert_eq!(refused::<Time>(json!("24:00:00")), [at("", "pattern")]);
    }

    /// `OffsetDateTime` as `time::serde::rfc3339` reads it.
    #[derive(Deserialize, Debug, PartialEq)]
    struct Rfc3339(#[serde(with = "time::serde::rfc3339")] OffsetDateTime);

    mod offset_date_time {
        use super::*;

        fn law() -> &'static jsonschema::Validator {
            static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> =
                std::sync::OnceLock::new();
            VALIDATOR.get_or_init(validator::<OffsetDateTime>)
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
            #[test]
            fn agrees_with_jsonschema(instance in date_time_strings()) {
                if let Some(parsed) = check::<OffsetDateTime>(law(), &instance)? {
                    agrees_with_serde(&Rfc3339(parsed), &instance)?;
                }
            }
        }
    }

    /// The `Time` the partial time `text` states, read independently of the parser.
    fn expected_time(text: &str) -> Time {
        let number = |range: std::ops::Range<usize>| text[range].parse::<u32>().unwrap();
        let fraction = &text[8..].trim_start_matches('.');
        let nanos = if fraction.is_empty() {
            0
        } else {
            format!("{fraction:0<9}").parse::<u32>().unwrap()
        };
        Time::from_hms_nano(
            number(0..2) as u8,
            number(3..5) as u8,
            number(6..8) as u8,
            nanos,
        )
        .unwrap()
    }

    mod time_of_day {
        use super::*;

        fn law() -> &'static jsonschema::Validator {
            static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> =
                std::sync::OnceLock::new();
            VALIDATOR.get_or_init(validator::<Time>)
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
            #[test]
            fn agrees_with_jsonschema(instance in partial_time_strings()) {
                if let Some(parsed) = check::<Time>(law(), &instance)? {
                    prop_assert_eq!(parsed, expected_time(instance.as_str().unwrap_or("")));
                }
            }
        }
    }

    mod date {
        use super::*;

        fn law() -> &'static jsonschema::Validator {
            static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> =
                std::sync::OnceLock::new();
            VALIDATOR.get_or_init(validator::<Date>)
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
            #[test]
            fn agrees_with_jsonschema(instance in date_strings()) {
                if let Some(parsed) = check::<Date>(law(), &instance)? {
                    let text = instance.as_str().unwrap_or("");
                    let by_chrono = text.parse::<chrono::NaiveDate>().map(|d| d.to_string());
                    prop_assert_eq!(Ok(parsed.to_string()), by_chrono);
                }
            }
        }
    }
}

mod uuid_type {
    use uuid::Uuid;

    use super::*;

    #[test]
    fn uuid_is_the_hyphenated_form() {
        assert_eq!(
            schema::<Uuid>(),
            json!({"type": "string", "format": "uuid"})
        );
        let id = "67E55044-10B1-426F-9247-BB680E5FE0C8";
        assert_eq!(
            parse::<Uuid>(json!(id)).unwrap(),
            Uuid::parse_str(id).unwrap()
        );
        assert_eq!(
            refused::<Uuid>(json!("67e5504410b1426f9247bb680e5fe0c8")),
            [at("", "format")]
        );
    }

    fn uuids() -> BoxedStrategy<Value> {
        prop_oneof![
            6 => format_strings(Format::Uuid).prop_map(Value::String),
            1 => other_types(),
        ]
        .boxed()
    }

    parity!(uuid_parity: Uuid, uuids(), serde);
}

mod url_type {
    use url::Url;

    use super::*;

    #[test]
    fn url_is_a_uri_the_url_parser_reads() {
        assert_eq!(schema::<Url>(), json!({"type": "string", "format": "uri"}));
        assert_eq!(
            parse::<Url>(json!("HTTP://Example.COM")).unwrap().as_str(),
            "http://example.com/"
        );
        assert_eq!(
            parse::<Url>(json!("mailto:a@example.com"))
                .unwrap()
                .scheme(),
            "mailto"
        );
        assert_eq!(refused::<Url>(json!("/relative")), [at("", "format")]);
        // URIs that no URL parser of this kind reads: refused though the format allows them.
        for uri in [
            "http://example.com:99999",
            "http://256.256.256.256/",
            "http:",
            // An IP literal of a future version, which WHATWG URLs do not have.
            "http://[v1.x]/",
            // A percent-encoded host naming a character no host may hold.
            "http://a%20",
            // An A-label that is not valid Punycode.
            "http://xn--a.example/",
            "http://xn--/",
            // A special scheme whose authority is read from one slash: the port is not a number.
            "http:/a:b",
            // An empty host before an empty port.
            "p://:",
        ] {
            assert!(Format::Uri.is_valid(uri), "{uri}");
            assert_eq!(refused::<Url>(json!(uri)), [at("", "format")], "{uri}");
        }
    }

    fn law() -> &'static jsonschema::Validator {
        static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
        VALIDATOR.get_or_init(validator::<Url>)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
        /// The law holds on every URI the URL parser reads; the others are refused with
        /// `format` alone, as documented.
        #[test]
        fn agrees_with_jsonschema_where_the_url_parser_reads_the_uri(
            instance in prop_oneof![
                6 => format_strings(Format::Uri).prop_map(Value::String),
                1 => other_types(),
            ]
        ) {
            let readable = instance.as_str().is_none_or(|s| Url::parse(s).is_ok());
            if readable {
                if let Some(parsed) = check::<Url>(law(), &instance)? {
                    agrees_with_serde(&parsed, &instance)?;
                }
            } else {
                let errors = parse::<Url>(instance.clone()).expect_err("refused");
                prop_assert_eq!(found(&errors), [at("", "format")]);
            }
        }
    }
}

// ---- wide integers as text ----

/// Integers beyond 64 bits, of which some are exactly a double.
fn wide_integers() -> impl Strategy<Value = i128> {
    prop_oneof![
        any::<i128>(),
        (any::<i64>(), 0u32..=75).prop_map(|(m, e)| i128::from(m).saturating_mul(1 << e)),
        (any::<i32>(), 64u32..=96).prop_map(|(m, e)| i128::from(m) << e.min(96)),
        Just(i128::MAX),
        Just(i128::MIN),
        Just(i128::MAX - (1 << 73)),
        Just(i128::MAX - (1 << 74) + 1),
    ]
}

/// Whether a JSON Schema validator sees `v` itself: it fits 64 bits or is exactly a double.
fn exact_json_number(v: i128) -> bool {
    i64::try_from(v).is_ok()
        || u64::try_from(v).is_ok()
        || ((v as f64) < 2f64.powi(127) && (v as f64) as i128 == v)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
    /// Written with every digit, an integer is read exactly: accepted exactly when the
    /// validator accepts the number it sees, with serde's value, if that number is the integer
    /// written; refused with `type` if it is not.
    #[test]
    fn wide_integer_text_is_read_exactly(v in wide_integers()) {
        let text = v.to_string();
        let seen: Value = serde_json::from_str(&text).expect("JSON");
        let accepted_by_validator = validator::<i128>().is_valid(&seen);
        let ours = parse_argument::<i128>(&text);
        if exact_json_number(v) {
            prop_assert_eq!(ours.is_ok(), accepted_by_validator, "{}", text);
            if let Ok(parsed) = ours {
                prop_assert_eq!(parsed, v);
                prop_assert_eq!(Some(parsed), serde_json::from_str::<i128>(&text).ok());
            }
        } else {
            let errors = ours.expect_err("not a JSON number exactly");
            prop_assert_eq!(found(&errors), [at("", "type")]);
        }
        if let Ok(unsigned) = u128::try_from(v) {
            let ours = parse_argument::<u128>(&text);
            let exact = u64::try_from(unsigned).is_ok()
                || ((unsigned as f64) < 2f64.powi(128) && (unsigned as f64) as u128 == unsigned);
            if exact {
                prop_assert_eq!(ours.ok(), Some(unsigned));
            } else {
                prop_assert!(ours.is_err());
            }
        }
    }
}

// ---- keys of a type of one's own ----

/// A unit-variant enum keying a map, as `#[derive(Argument)]` makes one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum Color {
    Red,
    Green,
}

impl tool_core::ArgumentKey for Color {
    fn key_schema() -> Value {
        json!({"enum": ["red", "green"]})
    }

    fn parse_key(name: &str) -> Option<Self> {
        match name {
            "red" => Some(Color::Red),
            "green" => Some(Color::Green),
            _ => None,
        }
    }

    fn key_name(&self) -> Cow<'_, str> {
        Cow::Borrowed(match self {
            Color::Red => "red",
            Color::Green => "green",
        })
    }
}

#[test]
fn maps_take_keys_of_a_type_of_ones_own() {
    assert_eq!(
        schema::<BTreeMap<Color, u8>>(),
        json!({
            "type": "object",
            "additionalProperties": {"type": "integer", "minimum": 0, "maximum": 255},
            "propertyNames": {"enum": ["red", "green"]}
        })
    );
    assert_eq!(
        parse::<BTreeMap<Color, u8>>(json!({"red": 1, "green": 2})).unwrap(),
        BTreeMap::from([(Color::Red, 1), (Color::Green, 2)])
    );
    assert_eq!(
        refused::<BTreeMap<Color, u8>>(json!({"blue": 300})),
        [at("", "propertyNames"), at("/blue", "maximum")]
    );
}

parity!(
    enum_keys_parity: BTreeMap<Color, u8>,
    prop_oneof![
        6 => prop::collection::btree_map(
            prop::sample::select(vec!["red", "green", "blue", "Red", ""]).prop_map(str::to_owned),
            small_values(),
            0..4,
        )
        .prop_map(|map| Value::Object(map.into_iter().collect())),
        1 => other_types(),
    ],
    serde
);

/// Strings of the shape the email fast path decides, near its edges.
fn plain_emails() -> impl Strategy<Value = String> {
    let local = prop_oneof![
        "[A-Za-z0-9]{1,10}([._+-][A-Za-z0-9]{1,8}){0,3}",
        "[a-z0-9]{60,66}",
        "[._+-]?[a-zA-Z0-9]{1,4}[._+-]{0,2}[a-z0-9]{0,3}[._+-]?",
    ];
    let domain = prop_oneof![
        "[a-z0-9]{1,12}(\\.[a-zA-Z0-9]{1,10}){0,2}\\.[a-zA-Z]{2,6}",
        "[a-z0-9]{60,66}\\.[a-z]{2,3}",
        "([a-z0-9]{50,63}\\.){3,4}[a-z]{2,3}",
        "[a-z0-9]{1,5}(\\.[a-z0-9]{1,5}){0,2}",
    ];
    (local, domain).prop_map(|(local, domain)| format!("{local}@{domain}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases().saturating_mul(4), ..ProptestConfig::default() })]
    // `Format::Email` decides common addresses without the `jsonschema` crate's checker: on
    // addresses of that shape and just outside it, both say the same.
    #[test]
    fn the_email_fast_path_agrees_with_jsonschema(text in plain_emails()) {
        static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
        let validator = VALIDATOR.get_or_init(|| {
            jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .should_validate_formats(true)
                .build(&json!({"format": "email"}))
                .expect("compiles")
        });
        prop_assert_eq!(Format::Email.is_valid(&text), validator.is_valid(&json!(text)), "{}", text);
    }

    // Strings with no `@` are refused without the checker: a name, a spelled-out `at`, a
    // display name around something else.
    #[test]
    fn the_email_refusal_agrees_with_jsonschema(
        text in "[A-Za-z0-9 ._\"<>()+-]{0,12}( at | AT |[ .]?)[a-z0-9.-]{0,12}>?"
    ) {
        static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
        let validator = VALIDATOR.get_or_init(|| format_checker("email"));
        prop_assert_eq!(Format::Email.is_valid(&text), validator.is_valid(&json!(text)), "{}", text);
    }
}

/// Strings of the shape the date-time fast path decides, near its edges: every field one past
/// its range on either side, fractions of 0 to 10 digits, offsets in and out of range.
fn plain_date_times() -> impl Strategy<Value = String> {
    let year = prop_oneof![
        0u32..=3,
        1899u32..=1901,
        1999u32..=2001,
        2099u32..=2101,
        9998u32..=9999
    ];
    let fraction = prop_oneof![Just(String::new()), "\\.[0-9]{0,10}"];
    let offset = prop_oneof![
        Just("Z".to_owned()),
        Just("z".to_owned()),
        Just(String::new()),
        (prop::sample::select(vec!["+", "-"]), 0u32..=25, 0u32..=61)
            .prop_map(|(sign, h, m)| format!("{sign}{h:02}:{m:02}")),
        "[+-][0-9]{1,3}:?[0-9]{1,3}",
    ];
    (
        year,
        0u32..=13,
        0u32..=32,
        0u32..=24,
        0u32..=60,
        0u32..=61,
        prop::sample::select(vec!["T", "T", "T", "t", " "]),
        fraction,
        offset,
    )
        .prop_map(|(y, mo, d, h, mi, s, t, fraction, offset)| {
            format!("{y:04}-{mo:02}-{d:02}{t}{h:02}:{mi:02}:{s:02}{fraction}{offset}")
        })
}

/// Strings of the shape the URI fast path decides, near its edges.
fn plain_uris() -> impl Strategy<Value = String> {
    let scheme = prop::sample::select(vec![
        "http://", "https://", "https://", "HTTP://", "ftp://", "http:/", "https:",
    ]);
    let host = prop_oneof![
        4 => "[a-z0-9]{1,8}(\\.[a-z0-9]{1,8}){0,3}",
        2 => "[a-z0-9-]{0,6}(\\.[a-zA-Z0-9-]{0,6}){0,3}",
        1 => "[a-z]{60,66}\\.[a-z]{2,3}",
        1 => "[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}",
    ];
    let port = prop_oneof![3 => Just(String::new()), 1 => ":[0-9]{0,6}"];
    let path = prop_oneof![
        Just(String::new()),
        "(/[A-Za-z0-9._~-]{0,6}){1,3}",
        "(/[A-Za-z0-9._~%: -]{0,6}){1,2}",
    ];
    let query = prop_oneof![
        Just(String::new()),
        "\\?[A-Za-z0-9=&._~-]{0,10}",
        "\\?[a-z=&?/ %]{0,6}"
    ];
    let fragment = prop_oneof![
        Just(String::new()),
        "#[A-Za-z0-9._~-]{0,6}",
        "#[a-z#/ ]{0,4}"
    ];
    (scheme, host, port, path, query, fragment)
        .prop_map(|(s, h, p, pa, q, f)| format!("{s}{h}{p}{pa}{q}{f}"))
}

fn format_checker(format: &str) -> jsonschema::Validator {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&json!({ "format": format }))
        .expect("compiles")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases().saturating_mul(4), ..ProptestConfig::default() })]
    // `Format::DateTime` and `Format::Uri` decide their commonest shapes without the
    // `jsonschema` crate's checker: on strings of that shape and just outside it, both say
    // the same.
    #[test]
    fn the_date_time_fast_path_agrees_with_jsonschema(text in plain_date_times()) {
        static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
        let validator = VALIDATOR.get_or_init(|| format_checker("date-time"));
        prop_assert_eq!(Format::DateTime.is_valid(&text), validator.is_valid(&json!(text)), "{}", text);
    }

    #[test]
    fn the_uri_fast_path_agrees_with_jsonschema(text in plain_uris()) {
        static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
        let validator = VALIDATOR.get_or_init(|| format_checker("uri"));
        prop_assert_eq!(Format::Uri.is_valid(&text), validator.is_valid(&json!(text)), "{}", text);
    }
}

// ---- tuple variants ----

/// The same decision from the typed parser, the `jsonschema` crate on the advertised schema and
/// serde's own `Deserialize`, and the same value from the parser and serde.
fn decides_as_serde_and_jsonschema<T: Argument + DeserializeOwned + PartialEq + Debug>(
    validator: &jsonschema::Validator,
    instance: &Value,
) -> Result<(), TestCaseError> {
    let text = serde_json::to_string(instance).expect("serializable");
    let ours = parse_argument::<T>(&text);
    let by_serde = serde_json::from_str::<T>(&text);
    prop_assert_eq!(
        ours.is_ok(),
        validator.is_valid(instance),
        "jsonschema decides otherwise on {}: ours {:?}",
        text,
        ours.as_ref().err().map(ToString::to_string)
    );
    prop_assert_eq!(
        ours.is_ok(),
        by_serde.is_ok(),
        "serde decides otherwise on {}: ours {:?}, serde {:?}",
        text,
        ours.as_ref().err().map(ToString::to_string),
        by_serde.as_ref().err().map(ToString::to_string)
    );
    if let (Ok(ours), Ok(by_serde)) = (&ours, &by_serde) {
        prop_assert_eq!(ours, by_serde, "serde reads {} otherwise", text);
    }
    prop_assert_eq!(
        &parse_argument_value::<T>(instance),
        &ours,
        "text and value entry points differ on {}",
        text
    );
    Ok(())
}

/// A parity test of `$ty` against both serde and the `jsonschema` crate, on values from
/// `$values`.
macro_rules! serde_parity {
    ($name:ident: $ty:ty, $values:expr) => {
        mod $name {
            use super::*;

            fn law() -> &'static jsonschema::Validator {
                static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> =
                    std::sync::OnceLock::new();
                VALIDATOR.get_or_init(validator::<$ty>)
            }

            proptest! {
                #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
                #[test]
                fn decides_as_serde_and_jsonschema(instance in $values) {
                    super::decides_as_serde_and_jsonschema::<$ty>(law(), &instance)?;
                }
            }
        }
    };
}

/// A figure, externally tagged as serde writes it: `{"Point": [1, 2]}`.
#[derive(Argument, serde::Deserialize, Debug, PartialEq)]
enum Figure {
    Point(f64, f64),
    Segment(u8, String, bool),
    Origin,
    Circle { r: u8 },
}

/// Adjacently tagged: `{"t": "Point", "c": [1, 2]}`.
#[derive(Argument, serde::Deserialize, Debug, PartialEq)]
#[serde(tag = "t", content = "c")]
enum Adjacent {
    Point(i8, i8),
    Named(String),
    Origin,
}

/// Untagged: the first variant whose content matches.
#[derive(Argument, serde::Deserialize, Debug, PartialEq)]
#[serde(untagged)]
enum Untagged {
    Pair(u8, u8),
    Triple(u8, u8, bool),
    Text(String),
}

#[test]
fn tuple_variants_are_arrays_of_their_fields() {
    let point = json!({
        "type": "array",
        "prefixItems": [{"type": "number"}, {"type": "number"}],
        "items": false,
        "minItems": 2,
        "maxItems": 2
    });
    assert_eq!(
        schema::<Figure>()["oneOf"][0],
        json!({
            "type": "object",
            "properties": {"Point": point},
            "required": ["Point"],
            "additionalProperties": false
        })
    );
    assert_eq!(
        parse::<Figure>(json!({"Point": [1, 2.5]})).unwrap(),
        Figure::Point(1.0, 2.5)
    );
    assert_eq!(
        parse::<Figure>(json!({"Segment": [3, "a", true]})).unwrap(),
        Figure::Segment(3, "a".to_owned(), true)
    );
    assert_eq!(
        refused::<Figure>(json!({"Segment": [300, "a"]})),
        [at("/Segment/0", "maximum"), at("/Segment", "minItems")]
    );
    assert_eq!(
        refused::<Figure>(json!({"Point": [1, 2, 3]})),
        [at("/Point/2", "falseSchema"), at("/Point", "maxItems")]
    );
    assert_eq!(
        refused::<Figure>(json!({"Point": {"0": 1, "1": 2}})),
        [at("/Point", "type")]
    );
    assert_eq!(
        parse::<Adjacent>(json!({"t": "Point", "c": [-1, 2]})).unwrap(),
        Adjacent::Point(-1, 2)
    );
    assert_eq!(
        parse::<Untagged>(json!([1, 2, false])).unwrap(),
        Untagged::Triple(1, 2, false)
    );
    assert_eq!(
        parse::<Untagged>(json!([1, 2])).unwrap(),
        Untagged::Pair(1, 2)
    );
    let round_trip = <Figure as Argument>::to_value(&Figure::Segment(1, "b".to_owned(), false));
    assert_eq!(round_trip, Some(json!({"Segment": [1, "b", false]})));
}

/// Tuple contents: arrays of the lengths around those the variants take.
fn tuple_contents() -> impl Strategy<Value = Value> {
    let item = prop_oneof![
        small_values(),
        prop::sample::select(vec![json!(-128), json!(127), json!(-129), json!(false)]),
    ];
    prop_oneof![
        6 => prop::collection::vec(item, 0..5).prop_map(Value::Array),
        1 => other_types(),
    ]
}

/// serde also reads a struct variant from an array of its fields' values (`{"Circle": [1]}`),
/// which derived structs refuse: struct variants get objects only here.
///
/// serde also reads a unit variant from `null` content (`{"Origin": null}`,
/// `{"t": "Origin", "c": null}`), which the unions here refuse: left out of these tests, which
/// are about tuple variants.
fn unit_with_null(value: &Value) -> bool {
    value.get("Origin").is_some_and(Value::is_null)
        || (value.get("t") == Some(&json!("Origin")) && value.get("c").is_some_and(Value::is_null))
}

fn tagged_by_key(names: &'static [&'static str]) -> impl Strategy<Value = Value> {
    let values = prop_oneof![
        6 => (prop::sample::select(names), tuple_contents())
            .prop_map(|(name, content)| json!({ name: content })),
        1 => prop::sample::select(names).prop_map(Value::from),
        1 => (prop::sample::select(names), tuple_contents(), tuple_contents())
            .prop_map(|(name, a, b)| json!({ name: a, "Other": b })),
        1 => prop::collection::btree_map(
            prop::sample::select(&["Circle", "Point"][..]),
            small_values(),
            0..3,
        )
            .prop_map(|map| Value::Object(
                map.into_iter().map(|(k, v)| (k.to_owned(), json!({ "r": v }))).collect(),
            )),
    ];
    values.prop_filter("a unit variant with null content", |value| {
        !unit_with_null(value)
    })
}

fn tagged_adjacently() -> impl Strategy<Value = Value> {
    let names = prop::sample::select(vec!["Point", "Named", "Origin", "Other"]);
    prop_oneof![
        4 => (names.clone(), tuple_contents()).prop_map(|(name, c)| json!({"t": name, "c": c})),
        1 => names.clone().prop_map(|name| json!({"t": name})),
        1 => (names, short_strings()).prop_map(|(name, c)| json!({"t": name, "c": c})),
        1 => tuple_contents().prop_map(|c| json!({"c": c})),
    ]
    .prop_filter("a unit variant with null content", |value| {
        !unit_with_null(value)
    })
}

serde_parity!(
    externally_tagged_tuple_variants: Figure,
    tagged_by_key(&["Point", "Segment", "Origin", "Other"])
);
serde_parity!(adjacently_tagged_tuple_variants: Adjacent, tagged_adjacently());
serde_parity!(
    untagged_tuple_variants: Untagged,
    prop_oneof![tuple_contents(), short_strings()]
);

// ---- Duration ----

const MAX_SECS: u64 = u64::MAX;

#[test]
fn durations_are_read_as_serde_reads_them() {
    use std::time::Duration;
    assert_eq!(
        parse::<Duration>(json!({"secs": 3, "nanos": 5})).unwrap(),
        Duration::new(3, 5)
    );
    assert_eq!(
        parse::<Duration>(json!([3, 5])).unwrap(),
        Duration::new(3, 5)
    );
    // A billion nanoseconds or more carries into the seconds, as `Duration::new` does.
    assert_eq!(
        parse::<Duration>(json!({"nanos": 1_500_000_000u32, "secs": 1})).unwrap(),
        Duration::new(2, 500_000_000)
    );
    assert_eq!(
        parse::<Duration>(json!([MAX_SECS - 4, u32::MAX])).unwrap(),
        Duration::new(MAX_SECS - 4, u32::MAX)
    );
    assert_eq!(
        refused::<Duration>(json!({"secs": MAX_SECS, "nanos": 1_000_000_000u32})),
        [at("", "not")]
    );
    assert_eq!(
        refused::<Duration>(json!([MAX_SECS - 1, 2_000_000_000u32])),
        [at("", "not")]
    );
    assert_eq!(
        refused::<Duration>(json!({"secs": -1, "nanos": 4_294_967_296u64, "ms": 1})),
        [
            at("/secs", "minimum"),
            at("/nanos", "maximum"),
            at("", "additionalProperties")
        ]
    );
    assert_eq!(
        refused::<Duration>(json!({"secs": 1})),
        [at("", "required")]
    );
    assert_eq!(
        refused::<Duration>(json!([1, 2, 3])),
        [at("/2", "falseSchema"), at("", "maxItems")]
    );
    assert_eq!(refused::<Duration>(json!([1])), [at("", "minItems")]);
    assert_eq!(refused::<Duration>(json!("PT1S")), [at("", "type")]);
    let errors = parse::<Duration>(json!({"secs": 1.5, "nanos": 0})).unwrap_err();
    assert_eq!(
        errors.to_string(),
        "- /secs: expected integer, got 1.5",
        "{errors}"
    );
    assert_eq!(
        <Duration as Argument>::to_value(&Duration::new(2, 7)),
        Some(json!({"secs": 2, "nanos": 7}))
    );
}

/// Seconds and nanoseconds near every edge: the ranges' ends, the carries, the overflow; and
/// integers written with a fraction or an exponent when `integral_floats` (JSON Schema's
/// `integer`, as everywhere in tool arguments, where serde's `u64` wants the digits alone).
fn duration_parts(integral_floats: bool) -> impl Strategy<Value = Value> {
    let edges: Vec<Value> = [
        0u64,
        1,
        999_999_999,
        1_000_000_000,
        1_999_999_999,
        2_000_000_000,
        3_999_999_999,
        4_000_000_000,
        u64::from(u32::MAX),
        u64::from(u32::MAX) + 1,
        MAX_SECS - 4,
        MAX_SECS - 3,
        MAX_SECS - 2,
        MAX_SECS - 1,
        MAX_SECS,
    ]
    .into_iter()
    .map(Value::from)
    .chain([json!(-1), json!(1.5), json!("1"), json!(null)])
    .chain(
        [json!(2.0), json!(1e20)]
            .into_iter()
            .filter(|_| integral_floats),
    )
    .collect();
    prop_oneof![
        4 => prop::sample::select(edges),
        1 => any::<u32>().prop_map(Value::from),
        1 => any::<u64>().prop_map(Value::from),
    ]
}

fn durations(integral_floats: bool) -> impl Strategy<Value = Value> {
    let names = prop::sample::select(vec!["secs", "nanos", "ms"]);
    let part = move || duration_parts(integral_floats);
    prop_oneof![
        4 => (part(), part()).prop_map(|(secs, nanos)| json!({"secs": secs, "nanos": nanos})),
        3 => (part(), part()).prop_map(|(secs, nanos)| json!([secs, nanos])),
        2 => prop::collection::btree_map(names, part(), 0..4)
            .prop_map(|map| Value::Object(map.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        2 => prop::collection::vec(part(), 0..4).prop_map(Value::Array),
        1 => other_types(),
    ]
}

parity!(duration_parity: std::time::Duration, durations(true));
serde_parity!(duration_serde_parity: std::time::Duration, durations(false));
