use serde_json::Value;
use tool_core::Tool;
use tool_core::contract::{ArgumentSchema, ArgumentWith};

/// A type of another crate, as far as this file is concerned.
#[derive(Debug)]
pub struct Decimal(i64);

pub struct Money;

impl ArgumentWith<Decimal> for Money {
    fn schema() -> ArgumentSchema {
        ArgumentSchema::integer()
    }

    fn convert(value: &Value) -> Result<Decimal, String> {
        value.as_i64().map(Decimal).ok_or_else(|| "not an integer".to_owned())
    }
}

/// Constraints belong in the marker's schema.
#[derive(Tool, Debug)]
struct Constrained {
    #[tool(with = Money, range(min = 0))]
    amount: Decimal,
}

/// One source for the schema.
#[derive(Tool, Debug)]
struct Both {
    #[tool(with = Money, schemars)]
    amount: Decimal,
}

/// serde's `with` changes what serde reads, not the schema.
#[derive(Tool, Debug)]
struct SerdeWith {
    #[serde(with = "money")]
    amount: Decimal,
}

/// `with` names a type.
#[derive(Tool, Debug)]
struct NotAType {
    #[tool(with = "Money")]
    amount: Decimal,
}

fn main() {}
