//! A model that writes its tool calls as text (a plain completion endpoint, or a server without
//! a tool-call parser), run in the agent loop: a Hermes-style parallel call, then a Python-syntax
//! call whose bad argument the repair loop fixes, then the answer.
//!
//! Run with `cargo run --example text_model`. The model is scripted: no model is asked, its
//! replies are the texts written in this file, and the run says so first. Put the adapter for
//! your completion endpoint where `ScriptedTurns` is.

use examples::get_weather;
use tool_core::agent::Agent;
use tool_core::model::{Message, Turn};
use tool_core::testing::{ScriptedModel, ScriptedTurns};
use tool_core::text_calls::{TextCallStream, TextModel};
use tool_core::{Code, Context, Effect, Registry, Runtime, ToolDef, repair::RepairPolicy};

const PARALLEL: &str = "I'll check both cities at once.
<tool_call>
{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"units\": \"celsius\"}}
</tool_call>
<tool_call>
{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\", \"units\": \"celsius\"}}
</tool_call>";

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if let Err(error) = run().await {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut registry = Registry::new();
    registry.register(ToolDef::new(get_weather).effect(Effect::ReadOnly))?;

    println!(
        "The model here is scripted: its replies are written in examples/text_model.rs. \
         Put your completion endpoint's adapter where `ScriptedTurns` is.\n"
    );

    // Streamed, each call is ready as soon as its closing tag arrives.
    println!("== the first reply, streamed in 16-byte chunks ==");
    let mut stream = TextCallStream::new(None);
    for (i, chunk) in PARALLEL.as_bytes().chunks(16).enumerate() {
        for call in stream.push(chunk)? {
            println!(
                "chunk {i:>2}: call ready: {}({})",
                call.name(),
                call.arguments()
            );
        }
    }
    let reply = stream.finish()?;
    println!("prose: {:?}", reply.prose().collect::<Vec<_>>());

    // The model's replies, as text. The dialect of each is told by its markers.
    let model = TextModel::new(
        ScriptedTurns::new()
            .turn(Turn::answer(PARALLEL))
            .turn(Turn::answer("[get_weather('Rome', units='kelvin')]"))
            .turn(Turn::answer("Paris, Oslo and Rome are all mild today.")),
        None,
    );
    // What the model answers when told its arguments were wrong.
    let repairs = ScriptedModel::new().answer(r#"{"city": "Rome", "units": "celsius"}"#);
    let agent = Agent::new(Runtime::new(registry), model).repair(repairs, RepairPolicy::new(2)?);

    println!("\n== the run ==");
    let start = vec![Message::User {
        text: "How warm is it in Paris, Oslo and Rome?".into(),
    }];
    let report = agent.run(start, &Context::builder("alice").build()).await;
    for message in &report.transcript {
        match message {
            Message::User { text } => println!("user: {text}"),
            Message::Assistant { text, calls, .. } => {
                if let Some(text) = text {
                    println!("model says: {text}");
                }
                for call in calls {
                    println!(
                        "model calls {} {} {}",
                        call.call_id(),
                        call.name(),
                        call.arguments_text()
                    );
                }
            }
            Message::Tool(result) => {
                if let Some(repaired) = &result.repaired_arguments {
                    println!("  (repaired to {repaired})");
                }
                println!(
                    "  -> {}: {} {}",
                    result.call_id,
                    result.code.map_or("ok", Code::as_str),
                    result.content
                );
            }
        }
    }
    for request in agent.repair_model().requests() {
        println!(
            "\n(repair asked for attempt {} of {}):\n{}",
            request.attempt, request.max_attempts, request.feedback
        );
    }
    println!("\nended: {:?} after {} steps", report.end, report.steps);
    Ok(())
}
