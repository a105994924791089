//! Quickstart: what a model is shown, and what happens to what it sends back.
//!
//! Run with `cargo run --example quickstart`. The tools are defined in `examples/src/lib.rs`:
//! each is a plain Rust struct with `#[derive(Tool)]`.

use std::time::Duration;

use examples::{CreateInvoice, GetWeather, SearchFlights, create_invoice, get_weather};
use tool_core::testing::ScriptedModel;
use tool_core::{
    Context, Denied, Effect, Outcome, Registry, Runtime, Tool, ToolDef,
    metrics::Metrics,
    registry::ToolInfo,
    repair::{RepairLoop, Repaired},
};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // 1. Advertise. Name, description and schema all come from the Rust type, so what the
    //    model is told is exactly what the parser below enforces.
    print_tool::<GetWeather>();
    print_tool::<CreateInvoice>();
    print_tool::<SearchFlights>();

    // 2. Validate. A model's arguments are untrusted text: parse them into the typed value,
    //    or get back every violation at once, each with a JSON Pointer to the field at fault.
    heading("Validating create_invoice arguments");
    let calls = [
        (
            "clean",
            r#"{"customerId":"cus_42","amount":120.5,"currency":"USD"}"#,
        ),
        (
            "broken",
            r#"{"customerId":"cus_42","amount":"120.5","currency":"dollars"}"#,
        ),
        ("not JSON", "Sure! I'll create that invoice."),
        ("wrong shape", r#"["cus_42", 120.5, "USD"]"#),
    ];
    for (label, raw) in calls {
        println!("\n{label}: {raw}");
        match CreateInvoice::parse_arguments(raw) {
            // The handler receives this typed value and never sees raw JSON.
            Ok(invoice) => println!("accepted:\n{invoice:#?}"),
            // Not JSON at all: no field-level check could run, so the one line says where
            // the text stopped being JSON rather than which field is wrong.
            Err(errors) if errors.is_syntax() => println!("refused, not JSON:\n{errors}"),
            // These lines are short and safe to send back to the model so it can repair
            // its call: one line per violation, all of them at once.
            Err(errors) => println!("refused, {} problem(s):\n{errors}", errors.len()),
        }
    }

    // 3. Run. The registry is the allow-list; the runtime takes each proposed call through
    //    resolve → input cap → validate → authorize → approve → limits → execute → output
    //    check, and returns exactly one outcome with a stable code.
    heading("Running calls through the runtime");
    let mut registry = Registry::new();
    let registered = registry
        .register(
            ToolDef::new(get_weather)
                .effect(Effect::ReadOnly)
                .timeout(Duration::from_millis(200)),
        )
        .and_then(|registry| registry.register(ToolDef::new(create_invoice)));
    if let Err(error) = registered {
        eprintln!("could not register the tools: {error}");
        return;
    }
    let runtime = Runtime::builder(registry)
        // Who may call what is decided on the trusted context, never on model output.
        .authorize(|tool: &ToolInfo, cx: &Context| {
            if tool.effect() != Effect::ReadOnly && cx.principal() == "guest" {
                return Err(Denied::new(format!(
                    "guest may only call read-only tools, not {}",
                    tool.name()
                )));
            }
            Ok(())
        })
        .build();
    let alice = Context::builder("alice").tenant("acme").build();
    let guest = Context::builder("guest").build();

    let calls = [
        (
            "call_1",
            "get_weather",
            r#"{"city":"Paris","units":"celsius"}"#,
            &alice,
        ),
        (
            "call_2",
            "get_wether",
            r#"{"city":"Paris","units":"celsius"}"#,
            &alice,
        ),
        (
            "call_3",
            "create_invoice",
            r#"{"customerId":"cus_42","amount":120.5,"currency":"EUR"}"#,
            &guest,
        ),
        (
            "call_4",
            "get_weather",
            r#"{"city":"Atlantis","units":"celsius"}"#,
            &alice,
        ),
        (
            "call_5",
            "create_invoice",
            r#"{"customerId":"cus_42","amount":120.5,"currency":"EUR"}"#,
            &alice,
        ),
    ];
    for (call_id, tool, raw, cx) in calls {
        println!("\n{call_id} {tool} as {}: {raw}", cx.principal());
        print_outcome(&runtime.invoke(call_id, tool, raw, cx).await);
    }

    // 4. Repair. A model that gets a call wrong is told exactly which fields were wrong and
    //    tries again, a bounded number of times (3 by default, the first included). The
    //    handler runs at most once, on valid arguments. A scripted model stands in for the
    //    provider here; it answers the repair requests in order.
    heading("Repairing calls");
    let mut registry = Registry::new();
    let registered = registry
        .register(ToolDef::new(get_weather).effect(Effect::ReadOnly))
        .and_then(|registry| registry.register(ToolDef::new(create_invoice)));
    if let Err(error) = registered {
        eprintln!("could not register the tools: {error}");
        return;
    }
    let model = ScriptedModel::new()
        .answer(r#"{"customerId":"cus_42","amount":120.5,"currency":"EUR"}"#)
        .answer(r#"{"customerId":"cus_42","amount":0,"currency":"EUR"}"#)
        .answer(r#"{"customerId":"cus_42","amount":-5.5,"currency":"EUR"}"#);
    let metrics = Metrics::new();
    let repair = RepairLoop::new(Runtime::new(registry), model).metrics(metrics.clone());
    let cx = Context::builder("alice").tenant("acme").build();

    // How many of the model's recorded requests have been shown, so each call shows its own.
    let mut shown = 0;

    println!("\nr1 get_weather, valid:");
    let result = repair
        .call(
            "r1",
            "get_weather",
            r#"{"city":"Paris","units":"celsius"}"#,
            &cx,
        )
        .await;
    print_requests("r1", repair.model(), &mut shown);
    print_repaired(&result);

    let prose = "Sure! Here are the arguments:\n```json\n{\"customerId\":\"cus_42\",\"amount\":\"120.5\",\"currency\":\"dollars\"}\n```";
    println!("\nr2 create_invoice, inside the model's prose:\n{prose}");
    let result = repair
        .call_free_text("r2", "create_invoice", prose, &cx)
        .await;
    print_requests("r2", repair.model(), &mut shown);
    print_repaired(&result);

    println!("\nr3 create_invoice, with an amount the model never fixes:");
    let result = repair
        .call(
            "r3",
            "create_invoice",
            r#"{"customerId":"cus_42","amount":-5,"currency":"EUR"}"#,
            &cx,
        )
        .await;
    print_requests("r3", repair.model(), &mut shown);
    print_repaired(&result);

    let overall = metrics.snapshot().overall;
    println!("\nmetrics:");
    println!(
        "  calls {}, first pass {}, repaired {}, failed {}, attempts {}",
        overall.calls, overall.first_pass, overall.repaired, overall.failed, overall.attempts
    );
    println!(
        "  first-pass rate {:.2}, repair rate {:.2}, failure rate {:.2}, {:.1} attempts per call",
        overall.first_pass_rate(),
        overall.repaired_rate(),
        overall.failure_rate(),
        overall.mean_attempts()
    );
}

/// What the repair loop sent the model while repairing `call_id`: the requests recorded since
/// the `shown` ones.
fn print_requests(call_id: &str, model: &ScriptedModel, shown: &mut usize) {
    let requests = model.requests();
    for request in requests.iter().skip(*shown) {
        println!(
            "\n(sent to the model about {call_id} {}, asking for attempt {} of {}):\n{}",
            request.tool, request.attempt, request.max_attempts, request.feedback
        );
    }
    *shown = requests.len();
}

fn print_repaired(result: &Repaired) {
    println!(
        "-> {:?} after {} attempt(s)",
        result.end(),
        result.attempts()
    );
    if let Some(arguments) = result.repaired_arguments() {
        println!("   ran with {arguments}");
    }
    print_outcome(result.outcome());
}

fn print_outcome(outcome: &Outcome) {
    match outcome.result() {
        Ok(output) => println!("-> ok: {output}"),
        Err(failure) => {
            // What the model is told, then (for the operator's log) what happened.
            println!("-> {}: {}", failure.code(), failure.message());
            if let Some(detail) = failure.detail() {
                println!("   operator detail [{}]: {detail}", outcome.id());
            }
        }
    }
}

fn print_tool<T: Tool>() {
    heading(T::NAME);
    println!("description: {}", T::description());
    // Serializing a `serde_json::Value` cannot fail, but the error is handled anyway
    // rather than unwrapped, as you would in a server.
    match serde_json::to_string_pretty(T::input_schema()) {
        Ok(schema) => println!("input schema:\n{schema}"),
        Err(error) => eprintln!("could not render the schema of {}: {error}", T::NAME),
    }
}

fn heading(title: &str) {
    println!("\n== {title} ==");
}
