//! The tool both runtime measurements use (`benches/runtime.rs` and
//! `benches/examples/invoke_count.rs`): `create_invoice` with a no-op authorization check and
//! a no-op handler, behind a runtime whose policy allows everything, and a repair model that
//! answers at once.

use std::hint::black_box;
use std::sync::Arc;

use benches::INVOICE_VALID;
use examples::CreateInvoice;
use tool_core::model::ModelError;
use tool_core::{
    Argument, Context, Registry, Runtime, ToolDef,
    registry::{ToolError, ToolInfo},
    repair::{RepairModel, RepairRequest},
};

/// Invoice arguments with two violations (a string amount, an unknown currency).
pub(crate) const INVOICE_BROKEN: &str =
    r#"{"customerId":"cus_42","amount":"120.5","currency":"dollars"}"#;

/// Always answers with the valid arguments, recording nothing.
pub(crate) struct Fixed;

impl RepairModel for Fixed {
    fn repair(
        &self,
        _: &RepairRequest<'_>,
    ) -> impl std::future::Future<Output = Result<String, ModelError>> + Send {
        std::future::ready(Ok(INVOICE_VALID.to_owned()))
    }
}

#[derive(Argument, serde::Serialize)]
pub(crate) struct Ack {
    ok: bool,
}

async fn no_op(args: CreateInvoice, _cx: &Context) -> Result<Ack, ToolError> {
    Ok(Ack {
        ok: black_box(args).amount > 0.0,
    })
}

/// The registry holding the no-op `create_invoice`.
pub(crate) fn registry() -> Arc<Registry> {
    let mut registry = Registry::new();
    let registered =
        registry.register(ToolDef::new(no_op).authorize(|_: &CreateInvoice, _: &Context| Ok(())));
    assert!(registered.is_ok(), "the benchmark tool registers");
    Arc::new(registry)
}

/// A fresh runtime (a fresh call-id journal) over `registry`, with an allow-all policy.
pub(crate) fn runtime(registry: &Arc<Registry>) -> Runtime {
    Runtime::builder(Arc::clone(registry))
        .authorize(|_: &ToolInfo, _: &Context| Ok(()))
        .build()
}
