use tool_core::{Argument, Tool};

#[derive(Argument, Debug)]
struct Account {
    id: String,
}

/// Refunds payments of several accounts.
#[derive(Tool, Debug)]
struct RefundMany {
    #[tool(resource = "Account")]
    accounts: Vec<String>,
}

/// Refunds a payment of an account given whole.
#[derive(Tool, Debug)]
struct RefundWhole {
    #[tool(resource = "Account")]
    account: Account,
}

/// Takes a float as an id.
#[derive(Tool, Debug)]
struct ByFloat {
    #[tool(resource = "Account")]
    account: f64,
}

fn main() {}
