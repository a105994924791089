//! Quickstart: what a model is shown, and what happens to what it sends back.
//!
//! Run with `cargo run --example quickstart`. The tools are defined in `examples/src/lib.rs`:
//! each is a plain Rust struct with `#[derive(Tool)]`.

use examples::{CreateInvoice, GetWeather, SearchFlights};
use tool_core::Tool;

fn main() {
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
