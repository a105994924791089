//! Tool calls authorized by Cedar policies: a policy file validated against the tools'
//! contracts when the runtime is built, a principal allowed, another denied by a `forbid`, a
//! rule scoped to the resource the call acts on, and the startup error of a policy with a typo.
//!
//! `cargo run -p examples --example policies --features cedar`

use serde_json::{Value, json};
use tool_core::authz::OwnedRequest;
use tool_core::authz::cedar::CedarPolicies;
use tool_core::registry::ToolError;
use tool_core::{Argument, Context, Effect, Registry, Runtime, Tool, ToolDef};

/// Refunds a payment of an account.
#[derive(Tool, Debug)]
struct Refund {
    /// The account the payment was made from.
    #[tool(resource = "Account")]
    account: String,
    /// The amount to refund.
    amount: f64,
}

/// Reads the balance of an account.
#[derive(Tool, Debug)]
struct Balance {
    #[tool(resource = "Account")]
    account: String,
}

#[derive(Argument, serde::Serialize)]
struct Receipt {
    ok: bool,
}

async fn refund(_: Refund, _: &Context) -> Result<Receipt, ToolError> {
    Ok(Receipt { ok: true })
}

async fn balance(_: Balance, _: &Context) -> Result<Receipt, ToolError> {
    Ok(Receipt { ok: true })
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.register(ToolDef::new(refund)).expect("refund");
    registry
        .register(ToolDef::new(balance).effect(Effect::ReadOnly))
        .expect("balance");
    registry
}

/// The application's directory: each user's role and each account's owner.
async fn directory(request: OwnedRequest) -> Result<Vec<Value>, String> {
    let principal = request.context.principal().to_owned();
    let role = if principal == "ivan" {
        "intern"
    } else {
        "staff"
    };
    let mut entities = vec![json!({
        "uid": { "type": "User", "id": principal },
        "attrs": { "role": role },
        "parents": [],
    })];
    if let Some(account) = &request.resource {
        let owner = account.id().strip_prefix("acc_").unwrap_or("nobody");
        entities.push(json!({
            "uid": { "type": "Account", "id": account.id() },
            "attrs": { "owner": { "__entity": { "type": "User", "id": owner } } },
            "parents": [],
        }));
    }
    Ok(entities)
}

fn entity_types() -> Value {
    json!({
        "User": { "shape": { "type": "Record", "attributes": { "role": { "type": "String" } } } },
        "Account": { "shape": { "type": "Record", "attributes": {
            "owner": { "type": "Entity", "name": "User" } } } },
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let policies = CedarPolicies::builder(&registry())
        .entity_types(entity_types())
        .entities(directory)
        .policies(include_str!("policies.cedar"))
        .build()
        .unwrap_or_else(|error| panic!("{error}"));
    let runtime = Runtime::builder(registry()).authorize(policies).build();

    let calls = [
        (
            "alice",
            "refund",
            r#"{"account":"acc_alice","amount":120.5}"#,
        ),
        ("alice", "refund", r#"{"account":"acc_bob","amount":120.5}"#),
        ("alice", "refund", r#"{"account":"acc_alice","amount":900}"#),
        ("ivan", "refund", r#"{"account":"acc_ivan","amount":10}"#),
        ("ivan", "balance", r#"{"account":"acc_alice"}"#),
    ];
    for (i, (principal, tool, arguments)) in calls.into_iter().enumerate() {
        let cx = Context::builder(principal).build();
        let outcome = runtime
            .invoke(&format!("call_{i}"), tool, arguments, &cx)
            .await;
        match outcome.failure() {
            None => println!("{principal:>5} {tool:<8} {arguments:<45} allowed"),
            Some(failure) => println!(
                "{principal:>5} {tool:<8} {arguments:<45} refused: {}",
                failure.detail().unwrap_or_default()
            ),
        }
    }

    // A typo in an attribute name stops the application at startup, not at the first call.
    let typo = r#"
        @id("refund-small")
        permit(principal, action == Action::"refund", resource)
        when { context has amont && context.amont.lessThan(decimal("10.0")) };
    "#;
    let error = CedarPolicies::builder(&registry())
        .entity_types(entity_types())
        .policies(typo)
        .build()
        .expect_err("the typo is found when the policies are built");
    println!("\nat startup, with a typo:\n{error}");
}
