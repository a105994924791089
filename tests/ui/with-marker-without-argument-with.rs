use tool_core::Tool;

/// A type of another crate, as far as this file is concerned.
#[derive(Debug)]
pub struct Decimal(i64);

/// A marker that never said how to read a `Decimal`.
pub struct Money;

/// Pays an invoice.
#[derive(Tool, Debug)]
struct Pay {
    #[tool(with = Money)]
    amount: Decimal,
}

fn main() {}
