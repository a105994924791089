//! An agent scenario with a repair, a refusal, an approval and a replay, shared by the tests
//! of the spans (`gen_ai.rs`) and of their export (`phoenix.rs`).

use std::sync::Arc;
use std::time::Duration;

use examples::{create_invoice, get_weather};
use tool_core::agent::{Agent, RunEnd, RunReport};
use tool_core::approval::{Approvals, PendingApproval};
use tool_core::ledger::MemoryLedger;
use tool_core::model::{Message, Turn};
use tool_core::repair::RepairPolicy;
use tool_core::testing::{ScriptedModel, ScriptedTurns};
use tool_core::{Context, Registry, Runtime, ToolCall, ToolDef};

/// A value in the arguments that must never leave the process unless content capture is on.
pub(crate) const SECRET: &str = "SECRET-CITY-7";
/// The name of a tool the model invents; it is the model's to choose, so it is content too.
pub(crate) const INVENTED: &str = "SECRET-TOOL-9";
const KEY: &[u8] = b"an example key of at least 32 bytes!";
const INVOICE: &str = r#"{"customerId":"cus_42","amount":120.5,"currency":"EUR"}"#;

fn broken() -> String {
    format!(r#"{{"city":"{SECRET}","units":"kelvin"}}"#)
}

fn fixed() -> String {
    format!(r#"{{"city":"{SECRET}","units":"celsius"}}"#)
}

fn user() -> Context {
    Context::builder("alice").build()
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(get_weather))
        .unwrap()
        .register(ToolDef::new(create_invoice).requires_approval())
        .unwrap();
    registry
}

/// Two runs over one ledger. The first: `w1` (`get_weather`) is refused, repaired on attempt
/// 2 and runs; `i1` (`create_invoice`) is approved by a receipt given beforehand and runs;
/// `x1` names a tool that does not exist and is refused; then the model answers. The second,
/// after a restart (a new runtime, the same ledger): `w1` is proposed again and answered from
/// the ledger.
pub(crate) async fn run() -> (RunReport, RunReport) {
    let ledger = Arc::new(MemoryLedger::new());
    let registry = Arc::new(registry());
    let approvals = Arc::new(Approvals::new(KEY, &registry).unwrap());
    let runtime = |approvals: &Arc<Approvals>| {
        Runtime::builder(Arc::clone(&registry))
            .ledger(Arc::clone(&ledger))
            .approver(approvals.verifier())
            .build()
    };
    let first_runtime = runtime(&approvals);
    let pending = PendingApproval {
        call_id: "i1".into(),
        tool: "create_invoice".into(),
        arguments: INVOICE.into(),
        principal: "alice".into(),
    };
    let receipt = approvals
        .approve(
            &first_runtime,
            &pending,
            "manager-bob",
            Duration::from_secs(600),
        )
        .unwrap();
    approvals.submit(receipt);

    let model = ScriptedTurns::new()
        .turn(
            Turn::calls([
                ToolCall::new("w1", "get_weather", broken()),
                ToolCall::new("i1", "create_invoice", INVOICE),
                ToolCall::new("x1", INVENTED, "{}"),
            ])
            .with_usage(120, 30),
        )
        .turn(Turn::answer("It is 19.5 °C; the invoice is created.").with_usage(200, 12));
    let agent = Agent::new(first_runtime, model)
        .repair(
            ScriptedModel::new().answer(fixed()),
            RepairPolicy::default(),
        )
        .approvals(Arc::clone(&approvals))
        .max_steps(4);
    let start = vec![Message::User {
        text: format!("Weather in {SECRET}, then invoice cus_42."),
    }];
    let first = agent.run(start.clone(), &user()).await;
    assert_eq!(first.end, RunEnd::Answered, "{first:?}");

    let model = ScriptedTurns::new()
        .turn(Turn::calls([ToolCall::new("w1", "get_weather", fixed())]).with_usage(50, 8))
        .turn(Turn::answer("Same as before.").with_usage(60, 5));
    let agent = Agent::new(runtime(&approvals), model).max_steps(4);
    let second = agent.run(start, &user()).await;
    assert_eq!(second.end, RunEnd::Answered, "{second:?}");
    assert!(second.outcomes[0].is_replay(), "{second:?}");
    (first, second)
}
