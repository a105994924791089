//! The contract as a user reads about it: the advertised schema, strict JSON, every violation
//! with its pointer, and the edge cases of numbers, strings and nesting.

use std::collections::BTreeMap;

use examples::{CreateInvoice, Currency, GetWeather, SearchFlights, Units};
use serde_json::{Value, json};
use tool_core::{Argument, ArgumentErrors, Tool, contract::Keyword};

fn refused<T: Tool + std::fmt::Debug>(raw: &str) -> ArgumentErrors {
    T::parse_arguments(raw).expect_err("the arguments should be refused")
}

fn found(errors: &ArgumentErrors) -> Vec<(String, Keyword)> {
    errors
        .iter()
        .map(|v| (v.pointer().into_owned(), v.keyword()))
        .collect()
}

#[test]
fn advertises_the_invoice_schema_exactly() {
    assert_eq!(CreateInvoice::NAME, "create_invoice");
    assert_eq!(
        CreateInvoice::description(),
        "Create an invoice for a customer."
    );
    assert_eq!(
        CreateInvoice::input_schema(),
        &json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "customerId": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The customer's id, e.g. \"cus_42\"."
                },
                "amount": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "description": "Amount in the currency's major unit, e.g. 120.5."
                },
                "currency": {
                    "enum": ["USD", "EUR", "GBP"],
                    "description": "ISO 4217 currency code."
                }
            },
            "required": ["customerId", "amount", "currency"],
            "additionalProperties": false
        })
    );
}

#[test]
fn builds_the_schema_once() {
    assert!(std::ptr::eq(
        GetWeather::input_schema(),
        GetWeather::input_schema()
    ));
}

#[test]
fn every_advertised_schema_is_valid_draft_2020_12() {
    for schema in [
        GetWeather::input_schema(),
        CreateInvoice::input_schema(),
        SearchFlights::input_schema(),
        Everything::input_schema(),
    ] {
        assert!(
            jsonschema::meta::is_valid(schema),
            "not a valid 2020-12 schema: {schema}"
        );
    }
}

fn objects_are_closed(schema: &Value, at: &str) {
    match schema {
        Value::Object(map) => {
            if map.contains_key("properties") {
                assert_eq!(
                    map.get("additionalProperties"),
                    Some(&Value::Bool(false)),
                    "open object at {at}"
                );
            }
            for (key, value) in map {
                objects_are_closed(value, &format!("{at}/{key}"));
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                objects_are_closed(item, &format!("{at}/{i}"));
            }
        }
        _ => {}
    }
}

#[test]
fn every_object_refuses_unknown_fields() {
    objects_are_closed(SearchFlights::input_schema(), "");
    objects_are_closed(Everything::input_schema(), "");
    let errors = refused::<SearchFlights>(
        r#"{"origin":"CDG","destination":"JFK","departureDate":"2026-12-01",
            "passengers":[{"age":30,"seat":"12A"}],"cabin":"economy","limit":5}"#,
    );
    assert_eq!(
        found(&errors),
        [(
            "/passengers/0/seat".to_owned(),
            Keyword::AdditionalProperties
        )]
    );
}

/// Every Rust range is advertised.
#[derive(Tool, Debug, PartialEq)]
/// Takes one of everything.
#[allow(clippy::struct_field_names)]
struct Everything {
    a_u8: u8,
    a_u16: u16,
    a_u32: u32,
    a_u64: u64,
    a_i8: i8,
    a_i16: i16,
    a_i32: i32,
    a_i64: i64,
    a_f32: f32,
    a_f64: f64,
    text: Option<String>,
    #[tool(length(min = 1, max = 2))]
    #[allow(clippy::vec_box)] // Box<T> is part of what is exercised.
    list: Vec<Box<u8>>,
    map: BTreeMap<String, Vec<bool>>,
}

#[test]
fn encodes_every_integer_range() {
    let properties = &Everything::input_schema()["properties"];
    let range = |name: &str| {
        let p = &properties[name];
        (
            p["type"].clone(),
            p["minimum"].clone(),
            p["maximum"].clone(),
        )
    };
    assert_eq!(range("a_u8"), (json!("integer"), json!(0), json!(255)));
    assert_eq!(range("a_u16"), (json!("integer"), json!(0), json!(65535)));
    assert_eq!(
        range("a_u32"),
        (json!("integer"), json!(0), json!(4294967295_u32))
    );
    assert_eq!(
        range("a_u64"),
        (json!("integer"), json!(0), json!(u64::MAX))
    );
    assert_eq!(range("a_i8"), (json!("integer"), json!(-128), json!(127)));
    assert_eq!(
        range("a_i16"),
        (json!("integer"), json!(-32768), json!(32767))
    );
    assert_eq!(
        range("a_i32"),
        (json!("integer"), json!(i32::MIN), json!(i32::MAX))
    );
    assert_eq!(
        range("a_i64"),
        (json!("integer"), json!(i64::MIN), json!(i64::MAX))
    );
    assert_eq!(
        range("a_f32"),
        (
            json!("number"),
            json!(-f64::from(f32::MAX)),
            json!(f64::from(f32::MAX))
        )
    );
    assert_eq!(range("a_f64"), (json!("number"), Value::Null, Value::Null));
    assert_eq!(properties["text"], json!({"type": ["string", "null"]}));
    assert_eq!(
        properties["list"],
        json!({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 255}, "minItems": 1, "maxItems": 2})
    );
    assert_eq!(
        properties["map"],
        json!({"type": "object", "additionalProperties": {"type": "array", "items": {"type": "boolean"}}})
    );
    let required = Everything::input_schema()["required"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(required, 12, "every field but the Option is required");
}

#[test]
fn parses_valid_arguments_into_the_type() {
    let args = CreateInvoice::parse_arguments(
        r#"{"customerId":"cus_42","amount":120.5,"currency":"EUR"}"#,
    )
    .unwrap();
    assert_eq!(
        args,
        CreateInvoice {
            customer_id: "cus_42".to_owned(),
            amount: 120.5,
            currency: Currency::EUR
        }
    );
    let weather =
        GetWeather::parse_value(&json!({"city": "Paris", "units": "fahrenheit"})).unwrap();
    assert_eq!(weather.units, Units::Fahrenheit);
}

#[test]
fn reports_every_violation_as_lines_a_model_can_act_on() {
    let errors = refused::<CreateInvoice>(
        r#"{"customerId":"cus_42","amount":"120.5","currency":"dollars"}"#,
    );
    assert_eq!(
        errors.to_string(),
        "- /amount: expected number, got string \"120.5\"\n\
         - /currency: must be one of \"USD\", \"EUR\", \"GBP\"; got \"dollars\""
    );
    let errors = refused::<CreateInvoice>(r#"{"amount":0,"currency":5,"note":"hi"}"#);
    assert_eq!(
        found(&errors),
        [
            ("/amount".to_owned(), Keyword::ExclusiveMinimum),
            ("/currency".to_owned(), Keyword::Enum),
            ("/note".to_owned(), Keyword::AdditionalProperties),
            ("/customerId".to_owned(), Keyword::Required),
        ]
    );
    let missing = &errors.violations()[3];
    assert_eq!(missing.instance_location(), "");
    assert_eq!(missing.property(), Some("customerId"));
    assert_eq!(missing.to_string(), "/customerId: missing required field");
}

#[test]
fn reports_nested_violations_with_json_pointers() {
    let errors = refused::<SearchFlights>(
        r#"{"origin":"cdg","destination":"JFK","departureDate":"2026-12-01",
            "passengers":[{"age":30},{"age":130,"checkedBags":9}],"cabin":"economy",
            "maxPrice":{"amount":-1,"currency":"USD"},"limit":0,
            "tags":{"a/b":7}}"#,
    );
    assert_eq!(
        found(&errors),
        [
            ("/origin".to_owned(), Keyword::Pattern),
            ("/passengers/1/age".to_owned(), Keyword::Maximum),
            ("/passengers/1/checkedBags".to_owned(), Keyword::Maximum),
            ("/maxPrice/amount".to_owned(), Keyword::ExclusiveMinimum),
            ("/limit".to_owned(), Keyword::Minimum),
            ("/tags/a~1b".to_owned(), Keyword::Type),
        ]
    );
}

#[test]
fn reports_containers_of_the_wrong_type_with_every_other_violation() {
    // Objects and arrays are first read with serde's typed calls, which stop at a value of
    // another JSON type; the second, untyped pass must still report everything, in order.
    let errors = refused::<SearchFlights>(
        r#"{"origin":"cdg","destination":"JFK","departureDate":"2026-12-01",
            "passengers":{"age":30},"cabin":"economy","maxPrice":7,
            "departureWindow":[8,20],"limit":0,"tags":"none","extra":1}"#,
    );
    assert_eq!(
        found(&errors),
        [
            ("/origin".to_owned(), Keyword::Pattern),
            ("/passengers".to_owned(), Keyword::Type),
            ("/maxPrice".to_owned(), Keyword::Type),
            ("/departureWindow".to_owned(), Keyword::Type),
            ("/limit".to_owned(), Keyword::Minimum),
            ("/tags".to_owned(), Keyword::Type),
            ("/extra".to_owned(), Keyword::AdditionalProperties),
        ]
    );
    assert_eq!(
        errors.iter().nth(2).map(ToString::to_string).as_deref(),
        Some("/maxPrice: expected object, got 7")
    );
    let errors = refused::<SearchFlights>(
        r#"{"origin":"CDG","destination":"JFK","departureDate":"2026-12-01",
            "passengers":[{"age":30},"adult",null,{"age":200}],"cabin":"economy","limit":5}"#,
    );
    assert_eq!(
        found(&errors),
        [
            ("/passengers/1".to_owned(), Keyword::Type),
            ("/passengers/2".to_owned(), Keyword::Type),
            ("/passengers/3/age".to_owned(), Keyword::Maximum),
        ]
    );
    // Syntax errors are the same whichever pass finds them.
    let errors = refused::<SearchFlights>(r#"{"origin":"CDG","passengers":7,"limit":}"#);
    assert!(errors.is_syntax(), "{errors}");
    assert_eq!(errors.len(), 1);
}

#[test]
fn honours_serde_defaults_and_optional_fields() {
    let args = SearchFlights::parse_arguments(
        r#"{"origin":"CDG","destination":"JFK","departureDate":"2026-12-01",
            "returnDate":null,"passengers":[{"age":1,"needsSeat":false},{"age":40}],
            "cabin":"premium_economy","limit":10}"#,
    )
    .unwrap();
    assert_eq!(args.return_date, None);
    assert_eq!(args.max_stops, None);
    assert!(!args.passengers[0].needs_seat);
    assert!(args.passengers[1].needs_seat, "default = \"yes\" applies");
    assert_eq!(args.passengers[1].checked_bags, 0);
    assert!(args.preferred_airlines.is_empty());
    assert!(!args.refundable_only);
}

// ---- strict JSON ----

#[test]
fn rejects_duplicate_keys() {
    let errors = refused::<GetWeather>(r#"{"city":"Paris","city":"Lyon","units":"celsius"}"#);
    assert_eq!(
        found(&errors),
        [("/city".to_owned(), Keyword::DuplicateKey)]
    );
    let errors = refused::<SearchFlights>(
        r#"{"origin":"CDG","destination":"JFK","departureDate":"2026-12-01","passengers":[{"age":1}],
            "cabin":"first","limit":1,"tags":{"k":"a","k":"b"}}"#,
    );
    assert_eq!(
        found(&errors),
        [("/tags/k".to_owned(), Keyword::DuplicateKey)]
    );
}

#[test]
fn rejects_trailing_garbage() {
    for raw in [
        r#"{"city":"Paris","units":"celsius"} x"#,
        r#"{"city":"Paris","units":"celsius"}{}"#,
        r#"{"city":"Paris","units":"celsius"},"#,
    ] {
        let errors = refused::<GetWeather>(raw);
        assert!(errors.is_syntax(), "{raw}: {errors}");
        assert!(
            errors.to_string().contains("trailing characters"),
            "{errors}"
        );
    }
    // Whitespace after the value is fine.
    assert!(GetWeather::parse_arguments("{\"city\":\"Paris\",\"units\":\"celsius\"} \n").is_ok());
}

#[test]
fn rejects_text_that_is_not_json() {
    for raw in ["", "{", "{'city': 'Paris'}", r#"{"city": "Paris",}"#, "nan"] {
        let errors = refused::<GetWeather>(raw);
        assert!(errors.is_syntax(), "{raw:?} gave {errors}");
        assert_eq!(errors.len(), 1);
    }
}

#[test]
fn refuses_a_root_that_is_not_an_object() {
    for (raw, got) in [
        ("[]", "array"),
        ("null", "null"),
        (r#""{}""#, "string \"{}\""),
    ] {
        let errors = refused::<GetWeather>(raw);
        assert_eq!(
            errors.to_string(),
            format!("- (root): expected object, got {got}")
        );
    }
}

// ---- numbers ----

#[test]
fn rejects_u64_max_plus_one() {
    let ok = Everything::parse_value(&everything(json!({"a_u64": u64::MAX}))).unwrap();
    assert_eq!(ok.a_u64, u64::MAX);
    let raw = everything_text("a_u64", "18446744073709551616");
    let errors = refused::<Everything>(&raw);
    assert_eq!(found(&errors), [("/a_u64".to_owned(), Keyword::Maximum)]);
    assert_eq!(
        errors.to_string(),
        "- /a_u64: must be <= 18446744073709551615; got 1.8446744073709552e+19"
    );
}

#[test]
fn integer_fields_take_integral_numbers_in_any_notation() {
    // JSON Schema's `integer` is any number without a fractional part.
    for (text, expected) in [
        ("1.0", 1),
        ("1e2", 100),
        ("-0.0", 0),
        ("2.5e1", 25),
        ("0e5", 0),
    ] {
        let parsed = Everything::parse_arguments(&everything_text("a_i16", text)).unwrap();
        assert_eq!(parsed.a_i16, expected, "{text}");
    }
    let errors = refused::<Everything>(&everything_text("a_u8", "1.5"));
    assert_eq!(errors.to_string(), "- /a_u8: expected integer, got 1.5");
    let errors = refused::<Everything>(&everything_text("a_u8", "-1e2"));
    assert_eq!(found(&errors), [("/a_u8".to_owned(), Keyword::Minimum)]);
}

#[test]
fn negative_zero_is_zero() {
    let parsed = Everything::parse_arguments(&everything_text("a_f64", "-0.0")).unwrap();
    assert_eq!(parsed.a_f64, 0.0);
    let errors = refused::<CreateInvoice>(r#"{"customerId":"c","amount":-0.0,"currency":"USD"}"#);
    assert_eq!(
        found(&errors),
        [("/amount".to_owned(), Keyword::ExclusiveMinimum)]
    );
}

#[test]
fn rejects_numbers_beyond_a_double() {
    let errors = refused::<Everything>(&everything_text("a_f64", "1e400"));
    assert!(errors.is_syntax(), "{errors}");
    assert!(
        errors.to_string().contains("number out of range"),
        "{errors}"
    );
    let errors = refused::<Everything>(&everything_text("a_f32", "1e39"));
    assert_eq!(found(&errors), [("/a_f32".to_owned(), Keyword::Maximum)]);
}

/// A factor strictly between 0 and 1, held as an `f32`.
#[derive(Tool, Debug)]
struct Scale {
    #[tool(range(exclusive_min = 0, exclusive_max = 1))]
    factor: f32,
}

/// The advertised schema's verdict on `instance`, by the `jsonschema` crate.
fn schema_accepts<T: Tool>(instance: &Value) -> bool {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(T::input_schema())
        .expect("the advertised schema compiles")
        .is_valid(instance)
}

#[test]
fn f32_bounds_hold_on_the_value_the_handler_receives() {
    // These round to exactly 0.0 and 1.0 as an f32, the bounds the field excludes.
    for (text, keyword) in [
        ("1e-46", Keyword::ExclusiveMinimum),
        ("0.99999999", Keyword::ExclusiveMaximum),
        ("0.99999998", Keyword::ExclusiveMaximum),
    ] {
        let raw = format!(r#"{{"factor":{text}}}"#);
        let errors = refused::<Scale>(&raw);
        assert_eq!(found(&errors), [("/factor".to_owned(), keyword)], "{text}");
        let instance: Value = serde_json::from_str(&raw).unwrap();
        assert!(!schema_accepts::<Scale>(&instance), "{text}: parity");
    }
    // The nearest f32 values inside the bounds, and numbers rounding onto them, are accepted.
    for text in ["1e-45", "7.1e-46", "0.99999994", "0.99999996", "0.5"] {
        let raw = format!(r#"{{"factor":{text}}}"#);
        let factor = Scale::parse_arguments(&raw).unwrap().factor;
        assert!(factor > 0.0 && factor < 1.0, "{text} gave {factor}");
        let instance: Value = serde_json::from_str(&raw).unwrap();
        assert!(schema_accepts::<Scale>(&instance), "{text}: parity");
    }
}

#[test]
fn f32_from_a_large_integer_is_the_value_serde_gives() {
    for text in [
        "1152921573326323713",
        "-1152921573326323713",
        "18446744073709551615",
    ] {
        let expected: f32 = serde_json::from_str(text).unwrap();
        let parsed = Everything::parse_arguments(&everything_text("a_f32", text)).unwrap();
        assert_eq!(parsed.a_f32.to_bits(), expected.to_bits(), "{text}");
        let value: Value = serde_json::from_str(&everything_text("a_f32", text)).unwrap();
        let parsed = Everything::parse_value(&value).unwrap();
        assert_eq!(parsed.a_f32.to_bits(), expected.to_bits(), "{text}");
    }
}

// ---- strings ----

#[test]
fn rejects_lone_surrogates() {
    let errors = refused::<GetWeather>(r#"{"city":"\ud800","units":"celsius"}"#);
    assert!(errors.is_syntax(), "{errors}");
    // A well-formed pair is one character.
    let ok = GetWeather::parse_arguments(r#"{"city":"\ud83d\ude00","units":"celsius"}"#).unwrap();
    assert_eq!(ok.city, "😀");
}

#[test]
fn counts_length_in_characters() {
    let errors = refused::<Everything>(&everything_text("list", "[]"));
    assert_eq!(
        errors.to_string(),
        "- /list: must have at least 1 item; got 0"
    );
    // "é" is two bytes, one character.
    assert!(GetWeather::parse_arguments(r#"{"city":"é","units":"celsius"}"#).is_ok());
}

#[test]
fn handles_a_ten_megabyte_string() {
    let city = "a".repeat(10 * 1024 * 1024);
    let raw = format!(r#"{{"city":"{city}","units":"celsius"}}"#);
    assert_eq!(
        GetWeather::parse_arguments(&raw).unwrap().city.len(),
        city.len()
    );
    let raw = format!(r#"{{"city":"Paris","units":"{city}"}}"#);
    let errors = refused::<GetWeather>(&raw);
    // The offending value is quoted back shortened.
    let line = errors.to_string();
    assert!(line.len() < 200, "{}", &line[..200.min(line.len())]);
    assert!(line.ends_with("aaa\"…"), "{line}");
}

/// Patterns whose direct compilation is beyond the regex engine's size limit, but which a
/// standard validator evaluates by counting characters.
#[derive(Tool, Debug)]
#[allow(dead_code)]
struct WidePatterns {
    #[tool(pattern = r"^\p{L}{1,300}$")]
    letters: String,
    #[tool(pattern = r"^.{1,10000}$")]
    line: String,
    #[tool(pattern = r"^[\p{L}\p{N} '-]{1,255}$")]
    name: String,
    #[tool(pattern = r"^\S{1,5000}$")]
    word: String,
    #[tool(pattern = r"^\p{L}{300}$")]
    exact: String,
    #[tool(pattern = r"((A 0\p{L}*){3,1000})$")]
    repeated: String,
}

#[test]
fn evaluates_every_pattern_the_derive_accepts() {
    let valid = json!({
        "letters": "Ω",
        "line": "x",
        "name": "Ωmega 9",
        "word": "Ω",
        "exact": "Ω".repeat(300),
        "repeated": "A 0ΩA 0A 0",
    });
    let parsed = WidePatterns::parse_value(&valid).unwrap();
    assert_eq!(parsed.letters, "Ω");
    assert!(schema_accepts::<WidePatterns>(&valid));

    let invalid = json!({
        "letters": "Ω1",
        "line": "",
        "name": "Ω!",
        "word": "a b",
        "exact": "Ω".repeat(299),
        "repeated": "A 0A 0",
    });
    let errors = WidePatterns::parse_value(&invalid).unwrap_err();
    let mut pointers = found(&errors);
    pointers.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        pointers,
        ["/exact", "/letters", "/line", "/name", "/repeated", "/word"]
            .map(|at| (at.to_owned(), Keyword::Pattern)),
        "{errors}"
    );
    assert!(
        !errors.to_string().contains("cannot be evaluated"),
        "{errors}"
    );
    assert!(!schema_accepts::<WidePatterns>(&invalid));
}

// ---- nesting ----

#[derive(Argument, Debug)]
#[allow(dead_code)]
struct Chain {
    next: Option<Box<Chain>>,
}

/// Walks a chain.
#[derive(Tool, Debug)]
#[allow(dead_code)]
struct WalkChain {
    chain: Chain,
}

#[test]
fn bounds_nesting_depth_without_overflowing_the_stack() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let errors = refused::<GetWeather>(&format!(r#"{{"city":{deep},"units":"celsius"}}"#));
    assert!(errors.is_syntax() || errors.len() == 1, "{errors}");
    let errors = refused::<WalkChain>(&format!(
        r#"{{"chain":{}null{}}}"#,
        r#"{"next":"#.repeat(100_000),
        "}".repeat(100_000)
    ));
    assert!(errors.is_syntax(), "{errors}");
    assert!(errors.to_string().contains("recursion limit"), "{errors}");

    // An already-parsed value is held to the same bound.
    // Built by moving, not with `json!`, which would copy the value recursively.
    let wrap = |name: &str, inner: Value| {
        let mut map = serde_json::Map::new();
        map.insert(name.to_owned(), inner);
        Value::Object(map)
    };
    let mut value = wrap("next", Value::Null);
    for _ in 0..100_000 {
        value = wrap("next", value);
    }
    let value = wrap("chain", value);
    let errors = WalkChain::parse_value(&value).unwrap_err();
    assert!(
        errors.to_string().contains("nesting deeper than 127"),
        "{errors}"
    );
    // Dropping a value this deep would recurse as deep; leave it to the process's end.
    std::mem::forget(value);
}

#[test]
fn accepts_nesting_up_to_the_limit() {
    let depth = 120;
    let raw = format!(
        r#"{{"chain":{}null{}}}"#,
        r#"{"next":"#.repeat(depth),
        "}".repeat(depth)
    );
    assert!(WalkChain::parse_arguments(&raw).is_ok());
    assert!(WalkChain::input_schema()["$defs"]["Chain"].is_object());
}

// ---- helpers ----

fn everything(overrides: Value) -> Value {
    let mut base = json!({
        "a_u8": 1, "a_u16": 1, "a_u32": 1, "a_u64": 1, "a_i8": -1, "a_i16": -1, "a_i32": -1,
        "a_i64": -1, "a_f32": 0.5, "a_f64": 0.25, "list": [1], "map": {"k": [true]}
    });
    if let (Value::Object(base), Value::Object(overrides)) = (&mut base, overrides) {
        base.extend(overrides);
    }
    base
}

/// The `Everything` arguments as text, with the field `name` written as `literal`.
fn everything_text(name: &str, literal: &str) -> String {
    let mut base = everything(json!({}));
    base.as_object_mut().unwrap().remove(name);
    let text = serde_json::to_string(&base).unwrap();
    format!("{{\"{name}\":{literal},{}", &text[1..])
}

/// Found by the `example_tools` fuzz target: the list of known fields was attached to the
/// first unknown field in reading order, which differs between text (document order) and a
/// parsed value (sorted keys), so the two entry points gave different messages.
#[test]
fn unknown_fields_get_the_same_messages_from_text_and_from_a_value() {
    let text = r#"{"rrency":5,"note":"hi"}"#;
    let messages = |errors: ArgumentErrors| {
        let mut messages: Vec<(String, String)> = errors
            .iter()
            .map(|v| (v.pointer().into_owned(), v.message().to_owned()))
            .collect();
        messages.sort();
        messages
    };
    let from_text = messages(GetWeather::parse_arguments(text).unwrap_err());
    let value: Value = serde_json::from_str(text).unwrap();
    let from_value = messages(GetWeather::parse_value(&value).unwrap_err());
    assert_eq!(from_text, from_value);
    // The hint goes on the unknown field whose name sorts first, whatever the order.
    assert!(
        from_text
            .iter()
            .any(|(pointer, message)| pointer == "/note" && message.contains("expected one of")),
        "{from_text:?}"
    );
}
