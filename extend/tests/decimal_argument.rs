//! `rust_decimal::Decimal`, a type this crate does not own, as a tool argument: a marker type
//! implements `ArgumentWith<Decimal>`, the field is marked `#[tool(with = ...)]`, and the
//! handler receives the `Decimal` itself.

use std::str::FromStr;

use rust_decimal::Decimal;
use serde_json::{Value, json};
use tool_core::contract::{ArgumentSchema, ArgumentWith, Keyword};
use tool_core::registry::ToolError;
use tool_core::{Argument, Code, Context, Registry, Runtime, Tool, ToolDef};

/// An amount of money from 0.01 to 10000 with at most two decimal places, written as a
/// string: a JSON number cannot say "two decimal places" (`multipleOf: 0.01` fails on
/// binary fractions such as 0.07), so the pattern says all of it.
struct Money;

/// The whole contract of `Money`: the range and the places are in the pattern, so every
/// string it admits converts.
const MONEY: &str =
    r"^(?:0\.(?:0[1-9]|[1-9][0-9]?)|[1-9][0-9]{0,3}(?:\.[0-9]{1,2})?|10000(?:\.00?)?)$";

impl ArgumentWith<Decimal> for Money {
    fn schema() -> ArgumentSchema {
        ArgumentSchema::string()
            .pattern(MONEY)
            .max_length(8)
            .description("An amount from 0.01 to 10000, at most 2 decimal places, as \"19.99\"")
    }

    fn convert(value: &Value) -> Result<Decimal, String> {
        let text = value.as_str().unwrap_or_default();
        Decimal::from_str(text).map_err(|error| error.to_string())
    }

    fn to_json(value: &Decimal) -> Option<Value> {
        Some(Value::String(value.to_string()))
    }
}

/// A rate as a JSON number, from 0 up to (not including) 1: bounds the library checks
/// itself. The conversion must take every number in that range, however it is written:
/// the shortest text keeps `0.2` exact, and a number too small for its text to parse (`1e-300`)
/// rounds to the nearest `Decimal`.
struct Rate;

impl ArgumentWith<Decimal> for Rate {
    fn schema() -> ArgumentSchema {
        ArgumentSchema::number().minimum(0).exclusive_maximum(1)
    }

    fn convert(value: &Value) -> Result<Decimal, String> {
        let Value::Number(number) = value else {
            return Err("not a number".to_owned());
        };
        let text = number.to_string();
        Decimal::from_str(&text)
            .or_else(|_| Decimal::try_from(number.as_f64().unwrap_or_default()))
            .map_err(|error| error.to_string())
    }
}

/// Pays an invoice.
#[derive(Tool, Debug)]
struct Pay {
    /// The invoice to pay.
    #[tool(length(min = 1))]
    invoice: String,
    /// How much to pay.
    #[tool(with = Money)]
    amount: Decimal,
    /// The tax rate to add, if any.
    #[tool(with = Rate)]
    tax: Option<Decimal>,
}

/// What `pay` returns.
#[derive(Argument, serde::Serialize)]
struct Paid {
    total: String,
}

// The handler's signature names `Decimal` itself: no newtype to unwrap.
async fn pay(args: Pay, _: &Context) -> Result<Paid, ToolError> {
    let amount: Decimal = args.amount;
    let total = amount + amount * args.tax.unwrap_or_default();
    Ok(Paid {
        total: total.round_dp(2).to_string(),
    })
}

fn runtime() -> Runtime {
    let mut registry = Registry::new();
    registry.register(ToolDef::new(pay)).unwrap();
    Runtime::builder(registry).build()
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(future)
}

fn violations(raw: &str) -> Vec<(String, Keyword)> {
    Pay::parse_arguments(raw)
        .unwrap_err()
        .iter()
        .map(|violation| (violation.pointer().into_owned(), violation.keyword()))
        .collect()
}

#[test]
fn the_advertised_schema_is_the_one_the_markers_build() {
    let schema = Pay::input_schema();
    assert_eq!(
        schema["properties"]["amount"],
        json!({
            "type": "string",
            "maxLength": 8,
            "pattern": MONEY,
            "description": "How much to pay.",
        }),
    );
    assert_eq!(
        schema["properties"]["tax"],
        json!({
            "type": ["number", "null"],
            "minimum": 0,
            "exclusiveMaximum": 1,
            "description": "The tax rate to add, if any.",
        }),
    );
    assert_eq!(schema["required"], json!(["invoice", "amount"]));
}

#[test]
fn a_valid_call_reaches_the_handler_with_a_decimal() {
    let cx = Context::builder("alice").build();
    let raw = r#"{"invoice": "inv_7", "amount": "19.99", "tax": 0.2}"#;
    let outcome = block_on(runtime().invoke("call_1", "pay", raw, &cx));
    assert_eq!(
        outcome.output().map(|output| output.as_str()),
        Some(r#"{"total":"23.99"}"#),
        "{outcome:?}",
    );

    let parsed = Pay::parse_arguments(r#"{"invoice": "inv_7", "amount": "10000"}"#).unwrap();
    assert_eq!(parsed.amount, Decimal::from(10_000));
    assert_eq!(parsed.tax, None);
}

#[test]
fn a_refused_call_reports_every_violation_at_its_pointer() {
    let raw = r#"{"invoice": "", "amount": "12345.678", "tax": 1.5}"#;
    assert_eq!(
        violations(raw),
        [
            ("/invoice".to_owned(), Keyword::MinLength),
            ("/amount".to_owned(), Keyword::MaxLength),
            ("/amount".to_owned(), Keyword::Pattern),
            ("/tax".to_owned(), Keyword::ExclusiveMaximum),
        ],
    );
    assert_eq!(
        violations(r#"{"invoice": "a", "amount": 19.99, "tax": "0.2"}"#),
        [
            ("/amount".to_owned(), Keyword::Type),
            ("/tax".to_owned(), Keyword::Type),
        ],
    );

    // The runtime refuses the call the same way, without running the handler.
    let cx = Context::builder("alice").build();
    let outcome = block_on(runtime().invoke("call_2", "pay", raw, &cx));
    assert_eq!(outcome.code(), Some(Code::InvalidArguments));
}

/// The parity law for these fields: the tool accepts exactly what a standard validator
/// accepts against the advertised schema.
#[test]
fn the_tool_accepts_what_the_advertised_schema_accepts() {
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(Pay::input_schema())
        .unwrap();
    let amounts = [
        json!("0.01"),
        json!("0.1"),
        json!("0.00"),
        json!("0"),
        json!("1"),
        json!("19.99"),
        json!("19.999"),
        json!("9999.99"),
        json!("10000"),
        json!("10000.00"),
        json!("10000.01"),
        json!("01"),
        json!("-5"),
        json!("1e3"),
        json!(" 1"),
        json!(5),
        json!(null),
    ];
    let taxes = [
        None,
        Some(json!(0)),
        Some(json!(0.25)),
        Some(json!(0.999_999)),
        Some(json!(1)),
        Some(json!(-0.0)),
        Some(json!(-0.01)),
        Some(json!(1e-300)),
        Some(json!(null)),
        Some(json!("0.2")),
    ];
    let mut agreed = 0;
    for amount in &amounts {
        for tax in &taxes {
            let mut args = json!({ "invoice": "inv", "amount": amount });
            if let Some(tax) = tax {
                args["tax"] = tax.clone();
            }
            let schema_says = validator.is_valid(&args);
            let tool_says = Pay::parse_arguments(&args.to_string()).is_ok();
            assert_eq!(schema_says, tool_says, "{args}");
            agreed += 1;
        }
    }
    assert_eq!(agreed, amounts.len() * taxes.len());
}
