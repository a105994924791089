//! `parse_arguments` and `parse_value` of the example tools (`get_weather`, `create_invoice`,
//! `search_flights`) on arbitrary text, checked against each other and against the `jsonschema`
//! crate on the advertised schema (the parity law).
//!
//! Input: the argument text, as a model would send it.

#![no_main]

use std::fmt::Debug;
use std::sync::OnceLock;

use examples::{CreateInvoice, GetWeather, SearchFlights};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tool_core::{ArgumentErrors, Tool};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(&data[..data.len().min(tool_fuzz::MAX_INPUT)]) else {
        return;
    };
    let value = serde_json::from_str::<Value>(text).ok();
    let duplicates = value.is_some() && tool_fuzz::has_duplicate_keys(text);
    check::<GetWeather>(text, value.as_ref(), duplicates, law::<GetWeather>());
    check::<CreateInvoice>(text, value.as_ref(), duplicates, law::<CreateInvoice>());
    check::<SearchFlights>(text, value.as_ref(), duplicates, law::<SearchFlights>());
});

fn law<T: Tool>() -> &'static jsonschema::Validator {
    // One validator per tool; `T` tells the statics apart.
    fn build<T: Tool>() -> jsonschema::Validator {
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(T::input_schema())
            .expect("the advertised schema compiles")
    }
    static WEATHER: OnceLock<jsonschema::Validator> = OnceLock::new();
    static INVOICE: OnceLock<jsonschema::Validator> = OnceLock::new();
    static FLIGHTS: OnceLock<jsonschema::Validator> = OnceLock::new();
    let cell = match T::NAME {
        "get_weather" => &WEATHER,
        "create_invoice" => &INVOICE,
        _ => &FLIGHTS,
    };
    cell.get_or_init(build::<T>)
}

fn check<T: Tool + PartialEq + Debug>(
    text: &str,
    value: Option<&Value>,
    duplicates: bool,
    law: &jsonschema::Validator,
) {
    let from_text = T::parse_arguments(text);
    if let Err(errors) = &from_text {
        well_formed(errors, text);
    }
    let Some(value) = value else {
        // Not JSON to serde_json: the strict parse refuses it too.
        assert!(
            from_text.is_err(),
            "{}: parse_arguments accepted text that is not JSON: {text:?}",
            T::NAME
        );
        return;
    };
    let from_value = T::parse_value(value);
    if let Err(errors) = &from_value {
        well_formed(errors, text);
    }
    let valid = law.is_valid(value);
    assert_eq!(
        from_value.is_ok(),
        valid,
        "{}: parse_value and jsonschema disagree on {value}: {:?}",
        T::NAME,
        from_value.as_ref().err().map(ToString::to_string)
    );
    if duplicates {
        assert!(
            from_text.is_err(),
            "{}: parse_arguments accepted a repeated key: {text:?}",
            T::NAME
        );
    } else {
        // A parsed object's keys are sorted and the text's are not, so violations may come in
        // another order: compare them as sets.
        let same = match (&from_text, &from_value) {
            (Ok(a), Ok(b)) => a == b,
            (Err(a), Err(b)) => sorted(a) == sorted(b),
            _ => false,
        };
        assert!(
            same,
            "{}: the text and value entry points differ on {text:?}\ntext: {from_text:?}\nvalue: {from_value:?}",
            T::NAME
        );
    }
}

fn sorted(errors: &ArgumentErrors) -> Vec<(String, String, String)> {
    let mut all: Vec<_> = errors
        .iter()
        .map(|v| (v.pointer().into_owned(), v.keyword().as_str().to_owned(), v.message().to_owned()))
        .collect();
    all.sort();
    all
}

/// What every refusal must look like: at least one violation, each at a JSON Pointer, each
/// message non-empty, and the whole rendering non-empty.
fn well_formed(errors: &ArgumentErrors, text: &str) {
    assert!(errors.iter().next().is_some(), "a refusal without violations: {text:?}");
    for violation in errors.iter() {
        let at = violation.instance_location();
        assert!(
            at.is_empty() || at.starts_with('/'),
            "not a JSON Pointer: {at:?}"
        );
        let _ = violation.keyword().as_str();
        assert!(!violation.to_string().is_empty());
    }
    assert!(!errors.to_string().is_empty());
}
