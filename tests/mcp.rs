//! MCP: the server on the wire (raw JSON-RPC lines over an in-memory pipe), the client importing
//! tools (from the server, and from a scripted server with broken schemas), both ends over a
//! child process, and the official Python and TypeScript SDK clients against the example server
//! (skipped, and said so, where an SDK is not installed, unless `REQUIRE_MCP_CLIENT=1`).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::sync::Arc;
use std::sync::OnceLock;
use std::time::Duration;

use examples::{CreateInvoice, GetWeather, create_invoice, get_weather};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use tokio::sync::mpsc;
use tool_core::mcp::{McpClient, McpError, McpImport, McpServer};
use tool_core::{
    Argument, Code, Context, Denied, Effect, Registry, Runtime, Tool, ToolDef,
    observe::Event,
    provenance::{Origin, Provenance},
    registry::{DynamicTool, RegistryError, ToolError, ToolInfo},
};

const WAIT: Duration = Duration::from_secs(20);

fn local() -> Context {
    Context::builder("local-user").build()
}

/// The example tools, as `examples/mcp_server.rs` registers them.
fn example_registry() -> Registry {
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(get_weather).effect(Effect::ReadOnly))
        .unwrap()
        .register(ToolDef::new(create_invoice))
        .unwrap();
    registry
}

fn example_server() -> McpServer {
    McpServer::new(Runtime::new(example_registry()), local)
}

/// The client end of an in-memory MCP connection, speaking raw JSON-RPC lines.
struct Wire {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    write: WriteHalf<DuplexStream>,
}

impl Wire {
    /// Serves `server` on one end of a pipe and completes the handshake on the other.
    async fn connect(server: McpServer) -> Wire {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        tokio::spawn(server.serve(theirs));
        let (read, write) = tokio::io::split(ours);
        let mut wire = Wire {
            lines: BufReader::new(read).lines(),
            write,
        };
        let init = wire
            .request(
                json!(0),
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": { "name": "wire-test", "version": "0" }
                }),
            )
            .await;
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
        wire.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await;
        wire
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.flush().await.unwrap();
    }

    /// Sends a request and returns the response with its id.
    async fn request(&mut self, id: Value, method: &str, params: Value) -> Value {
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        loop {
            let line = tokio::time::timeout(WAIT, self.lines.next_line())
                .await
                .expect("no reply in time")
                .unwrap()
                .expect("the server closed the connection");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("id") == Some(&id) {
                return message;
            }
        }
    }

    async fn call(&mut self, id: Value, tool: &str, arguments: Value) -> Value {
        self.request(
            id,
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        )
        .await
    }
}

#[tokio::test]
async fn lists_the_canonical_schemas_and_hints_from_the_effects() {
    let mut wire = Wire::connect(example_server()).await;
    let reply = wire.request(json!(1), "tools/list", json!({})).await;
    let tools = &reply["result"]["tools"];
    assert_eq!(
        reply["result"].get("nextCursor"),
        None,
        "one page holds both"
    );

    assert_eq!(tools[0]["name"], "get_weather");
    assert_eq!(tools[0]["description"], GetWeather::description());
    assert_eq!(&tools[0]["inputSchema"], GetWeather::input_schema());
    assert_eq!(tools[0]["outputSchema"]["type"], "object");
    assert_eq!(
        tools[0]["annotations"],
        json!({ "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true })
    );

    assert_eq!(tools[1]["name"], "create_invoice");
    assert_eq!(&tools[1]["inputSchema"], CreateInvoice::input_schema());
    assert_eq!(
        tools[1]["annotations"],
        json!({ "readOnlyHint": false, "destructiveHint": true, "idempotentHint": false })
    );
}

#[tokio::test]
async fn idempotent_tools_are_hinted_idempotent_and_destructive() {
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(create_invoice).effect(Effect::Idempotent))
        .unwrap();
    let server = McpServer::new(Runtime::new(registry), local);
    let annotations = server.tools()[0].annotations.clone().unwrap();
    assert_eq!(annotations.read_only_hint, Some(false));
    assert_eq!(annotations.idempotent_hint, Some(true));
    assert_eq!(annotations.destructive_hint, Some(true));
}

fn numbered_registry(count: usize) -> Registry {
    let mut registry = Registry::new();
    for i in 0..count {
        let tool = DynamicTool::new(format!("tool_{i}"), "A tool.", json!({ "type": "object" }));
        registry.register(ToolDef::dynamic(tool, echo)).unwrap();
    }
    registry
}

async fn echo(args: Value, _cx: &Context) -> Result<Value, ToolError> {
    Ok(args)
}

#[tokio::test]
async fn pages_follow_next_cursor_and_foreign_cursors_are_invalid_params() {
    let server = McpServer::new(Runtime::new(numbered_registry(5)), local).page_size(2);
    let mut wire = Wire::connect(server).await;
    let mut names = Vec::new();
    let mut cursors = Vec::new();
    let mut params = json!({});
    for id in 1.. {
        let reply = wire.request(json!(id), "tools/list", params).await;
        for tool in reply["result"]["tools"].as_array().unwrap() {
            names.push(tool["name"].as_str().unwrap().to_owned());
        }
        match reply["result"].get("nextCursor") {
            Some(cursor) => {
                cursors.push(cursor.clone());
                params = json!({ "cursor": cursor });
            }
            None => break,
        }
    }
    assert_eq!(names, ["tool_0", "tool_1", "tool_2", "tool_3", "tool_4"]);
    assert_eq!(cursors.len(), 2);

    for (id, cursor) in ["", "1", "5", "not-a-cursor", "-2"].into_iter().enumerate() {
        let reply = wire
            .request(json!(100 + id), "tools/list", json!({ "cursor": cursor }))
            .await;
        assert_eq!(reply["error"]["code"], -32602, "{cursor:?}: {reply}");
        assert_eq!(reply["error"]["message"], "Invalid cursor");
    }
}

#[tokio::test]
async fn a_valid_call_returns_structured_content_and_the_same_json_as_text() {
    let mut wire = Wire::connect(example_server()).await;
    let reply = wire
        .call(
            json!(1),
            "get_weather",
            json!({ "city": "Paris", "units": "celsius" }),
        )
        .await;
    let result = &reply["result"];
    assert_eq!(result["isError"], false);
    assert_eq!(
        result["structuredContent"],
        json!({ "city": "Paris", "temperature": 19.5, "units": "celsius" })
    );
    assert_eq!(result["content"][0]["type"], "text");
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, result["structuredContent"]);
}

#[tokio::test]
async fn the_request_id_is_the_call_id() {
    let mut wire = Wire::connect(example_server()).await;
    let arguments = json!({ "customerId": "cus_42", "amount": 1, "currency": "EUR" });
    let reply = wire
        .call(json!(42), "create_invoice", arguments.clone())
        .await;
    assert_eq!(reply["result"]["structuredContent"]["invoiceId"], "inv_42");
    let reply = wire
        .call(json!("req-7"), "create_invoice", arguments.clone())
        .await;
    assert_eq!(
        reply["result"]["structuredContent"]["invoiceId"],
        "inv_req-7"
    );

    // MCP forbids reusing a request id in a session; the call does not run twice.
    let reply = wire.call(json!(42), "create_invoice", arguments).await;
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert_eq!(reply["error"]["data"]["code"], "duplicate_call_id");
}

#[tokio::test]
async fn invalid_arguments_are_an_error_result_with_every_violation() {
    let mut wire = Wire::connect(example_server()).await;
    let reply = wire
        .call(
            json!(1),
            "create_invoice",
            json!({ "customerId": "cus_42", "amount": "120.5", "currency": "dollars" }),
        )
        .await;
    let result = &reply["result"];
    assert_eq!(result["isError"], true, "{reply}");
    assert_eq!(
        result["content"][0]["text"],
        "- /amount: expected number, got string \"120.5\"\n\
         - /currency: must be one of \"USD\", \"EUR\", \"GBP\"; got \"dollars\""
    );
    assert_eq!(
        result["_meta"],
        json!({ "tool-core/error": { "code": "invalid_arguments" } })
    );
    assert_eq!(result.get("structuredContent"), None, "{reply}");

    // Absent arguments are `{}`: every required field is missing.
    let reply = wire
        .request(json!(2), "tools/call", json!({ "name": "get_weather" }))
        .await;
    assert_eq!(
        reply["result"]["content"][0]["text"],
        "- /city: missing required field\n- /units: missing required field"
    );
}

/// The official TypeScript SDK client refused every refusal of `create_invoice`: the error
/// result carried `structuredContent: {"error": ...}`, which is not an instance of the tool's
/// advertised `outputSchema`, so the client threw and the model never saw the violations.
#[tokio::test]
async fn every_result_matches_the_advertised_output_schema() {
    let runtime = Runtime::builder(example_registry())
        .max_input_bytes(8 * 1024)
        .build();
    let mut wire = Wire::connect(McpServer::new(runtime, local)).await;
    let listing = wire.request(json!(0), "tools/list", json!({})).await;
    let calls = [
        (
            "get_weather",
            json!({ "city": "Paris", "units": "celsius" }),
        ),
        ("get_weather", json!({})),
        (
            "get_weather",
            json!({ "city": "x".repeat(10_000), "units": "celsius" }),
        ),
        (
            "create_invoice",
            json!({ "customerId": "cus_42", "amount": 1, "currency": "EUR" }),
        ),
        (
            "create_invoice",
            json!({ "customerId": "cus_42", "amount": "120.5", "currency": "dollars" }),
        ),
        (
            "create_invoice",
            json!({ "customerId": "cus_closed", "amount": 1, "currency": "EUR" }),
        ),
    ];
    let mut errors = 0;
    for (id, (tool, arguments)) in (1..).zip(calls) {
        let advertised = listing["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|advertised| advertised["name"] == tool)
            .unwrap();
        let schema = jsonschema::validator_for(&advertised["outputSchema"]).unwrap();
        let reply = wire.call(json!(id), tool, arguments).await;
        let result = &reply["result"];
        if let Some(structured) = result.get("structuredContent") {
            assert!(schema.is_valid(structured), "{tool}: {reply}");
        }
        if result["isError"] == true {
            errors += 1;
            assert_eq!(result.get("structuredContent"), None, "{tool}: {reply}");
            assert!(
                result["content"][0]["text"]
                    .as_str()
                    .is_some_and(|text| !text.is_empty()),
                "{tool}: {reply}"
            );
        }
    }
    assert_eq!(errors, 4);
}

#[tokio::test]
async fn an_unknown_tool_is_invalid_params() {
    let mut wire = Wire::connect(example_server()).await;
    let reply = wire.call(json!(1), "get_wether", json!({})).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert_eq!(reply["error"]["message"], "Unknown tool: get_wether");
    assert_eq!(reply["error"]["data"]["code"], "unknown_tool");
}

#[tokio::test]
async fn arguments_over_the_cap_are_an_error_result() {
    let runtime = Runtime::builder(example_registry())
        .max_input_bytes(256)
        .build();
    let mut wire = Wire::connect(McpServer::new(runtime, local)).await;
    let city = "x".repeat(300);
    let reply = wire
        .call(
            json!(1),
            "get_weather",
            json!({ "city": city, "units": "celsius" }),
        )
        .await;
    let result = &reply["result"];
    assert_eq!(result["isError"], true, "{reply}");
    assert_eq!(
        result["_meta"]["tool-core/error"]["code"],
        "input_too_large"
    );
    assert_eq!(
        result["content"][0]["text"],
        "arguments are over the limit of 256 bytes; send less data"
    );
}

#[tokio::test]
async fn the_context_comes_from_the_application_and_detail_stays_home() {
    let runtime = Runtime::builder(example_registry())
        .authorize(|tool: &ToolInfo, cx: &Context| match cx.principal() {
            "guest" if tool.effect() != Effect::ReadOnly => {
                Err(Denied::new("guest tried a write through mcp"))
            }
            _ => Ok(()),
        })
        .build();
    let server = McpServer::new(runtime, || Context::builder("guest").build());
    let mut wire = Wire::connect(server).await;
    let reply = wire
        .call(
            json!(1),
            "create_invoice",
            json!({ "customerId": "cus_42", "amount": 1, "currency": "EUR" }),
        )
        .await;
    let result = &reply["result"];
    assert_eq!(result["isError"], true);
    assert_eq!(result["_meta"]["tool-core/error"]["code"], "unauthorized");
    let line = reply.to_string();
    assert!(
        line.contains("not authorized to call `create_invoice`"),
        "{line}"
    );
    assert!(
        !line.contains("guest tried"),
        "operator detail leaked: {line}"
    );

    let reply = wire
        .call(
            json!(2),
            "get_weather",
            json!({ "city": "Oslo", "units": "celsius" }),
        )
        .await;
    assert_eq!(reply["result"]["isError"], false);
}

#[tokio::test]
async fn an_output_schema_that_is_not_an_object_is_not_advertised() {
    let tool = DynamicTool::new("list", "Lists.", json!({ "type": "object" }))
        .output_schema(json!({ "type": "array" }));
    let mut registry = Registry::new();
    registry
        .register(ToolDef::dynamic(tool, |_: Value, _: &Context| async {
            Ok::<_, ToolError>(json!([1, 2]))
        }))
        .unwrap();
    let mut wire = Wire::connect(McpServer::new(Runtime::new(registry), local)).await;
    let reply = wire.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(
        reply["result"]["tools"][0].get("outputSchema"),
        None,
        "{reply}"
    );
    // The output is still checked and sent as text; `structuredContent` must be an object.
    let reply = wire.call(json!(2), "list", json!({})).await;
    assert_eq!(reply["result"]["content"][0]["text"], "[1,2]");
    assert_eq!(reply["result"].get("structuredContent"), None);
}

#[tokio::test]
async fn a_cancelled_request_cancels_the_call() {
    let never = DynamicTool::new("never", "Never ends.", json!({ "type": "object" }));
    let mut registry = Registry::new();
    registry
        .register(
            ToolDef::dynamic(never, |_: Value, _: &Context| async {
                std::future::pending::<Result<Value, ToolError>>().await
            })
            .effect(Effect::ReadOnly),
        )
        .unwrap();
    let (sender, mut codes) = mpsc::unbounded_channel();
    let runtime = Runtime::builder(registry)
        .observer(move |event: Event<'_>| {
            if let Event::Outcome(outcome) = event {
                let _ = sender.send(outcome.code());
            }
        })
        .build();
    let mut wire = Wire::connect(McpServer::new(runtime, local)).await;
    wire.send(json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "never", "arguments": {} }
    }))
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    wire.send(json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": { "requestId": 1, "reason": "the user gave up" }
    }))
    .await;
    let code = tokio::time::timeout(WAIT, codes.recv()).await.unwrap();
    assert_eq!(code, Some(Some(Code::Cancelled)));
}

// --- A tool whose arguments are a union ---

/// Edits one line of the open file.
#[derive(Tool, Debug, Clone, PartialEq)]
#[serde(tag = "op")]
enum Edit {
    /// Inserts a line.
    Insert { line: u32, text: String },
    /// Deletes a line.
    Delete { line: u32 },
}

/// What an edit did.
#[derive(Argument, Serialize, Debug)]
struct Edited {
    summary: String,
}

async fn edit(args: Edit, _cx: &Context) -> Result<Edited, ToolError> {
    let summary = match args {
        Edit::Insert { line, text } => format!("inserted {text:?} at line {line}"),
        Edit::Delete { line } => format!("deleted line {line}"),
    };
    Ok(Edited { summary })
}

/// The example tools and `edit`.
fn union_server() -> McpServer {
    let mut registry = example_registry();
    registry.register(ToolDef::new(edit)).unwrap();
    McpServer::new(Runtime::new(registry), local)
}

/// Claude Code and other Anthropic-backed clients refuse a tool whose `inputSchema` has a
/// `oneOf` at the root, which is what an internally tagged enum's canonical schema has.
#[tokio::test]
async fn a_root_union_is_listed_as_one_object_with_the_tags_as_a_string_enum() {
    let canonical = Edit::input_schema();
    assert!(canonical["oneOf"].is_array(), "{canonical}");
    let mut wire = Wire::connect(union_server()).await;
    let reply = wire.request(json!(1), "tools/list", json!({})).await;
    let listed = &reply["result"]["tools"][2];
    assert_eq!(listed["name"], "edit", "{reply}");
    let schema = &listed["inputSchema"];
    for keyword in ["oneOf", "anyOf", "allOf"] {
        assert_eq!(schema.get(keyword), None, "{schema}");
    }
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["$schema"], canonical["$schema"]);
    assert_eq!(
        schema["properties"]["op"],
        json!({ "type": "string", "enum": ["Insert", "Delete"] })
    );
    assert_eq!(schema["required"], json!(["op", "line"]));
    assert_eq!(schema["additionalProperties"], false);
    // Below the root, every schema is the canonical one as written.
    assert_eq!(
        schema["properties"]["line"],
        canonical["oneOf"][1]["properties"]["line"]
    );
    assert_eq!(
        schema["properties"]["line"],
        canonical["oneOf"][0]["properties"]["line"]
    );
    assert_eq!(
        schema["properties"]["text"],
        canonical["oneOf"][0]["properties"]["text"]
    );
    assert_eq!(
        schema["properties"].as_object().unwrap().len(),
        3,
        "{schema}"
    );
    // What the advertised schema admits includes every call the canonical one admits.
    let advertised = jsonschema::validator_for(schema).unwrap();
    for call in [
        json!({ "op": "Insert", "line": 3, "text": "x" }),
        json!({ "op": "Delete", "line": 4 }),
    ] {
        assert!(jsonschema::is_valid(canonical, &call), "{call}");
        assert!(advertised.is_valid(&call), "{call}");
    }
}

#[tokio::test]
async fn calls_to_a_merged_union_are_checked_against_the_canonical_schema() {
    let mut wire = Wire::connect(union_server()).await;
    let reply = wire
        .call(json!(1), "edit", json!({ "op": "Delete", "line": 4 }))
        .await;
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    assert_eq!(
        reply["result"]["structuredContent"],
        json!({ "summary": "deleted line 4" })
    );

    // The advertised object no longer says that an Insert needs `text`; the contract does.
    let reply = wire
        .call(json!(2), "edit", json!({ "op": "Insert", "line": 4 }))
        .await;
    let result = &reply["result"];
    assert_eq!(result["isError"], true, "{reply}");
    assert_eq!(
        result["_meta"]["tool-core/error"]["code"],
        "invalid_arguments"
    );
    assert_eq!(
        result["content"][0]["text"],
        "- /text: missing required field"
    );

    let reply = wire
        .call(json!(3), "edit", json!({ "op": "Move", "line": 4 }))
        .await;
    let result = &reply["result"];
    assert_eq!(result["isError"], true, "{reply}");
    assert_eq!(
        result["content"][0]["text"],
        "- /op: must be one of \"Insert\", \"Delete\"; got \"Move\""
    );
}

#[test]
fn only_tools_with_a_root_union_change_and_their_losses_are_reported() {
    let server = union_server();
    let tools = server.tools();
    // Byte for byte what the registry holds.
    for (tool, canonical) in [
        (&tools[0], GetWeather::input_schema()),
        (&tools[1], CreateInvoice::input_schema()),
    ] {
        assert_eq!(
            serde_json::to_string(&*tool.input_schema).unwrap(),
            serde_json::to_string(canonical).unwrap(),
            "{}",
            tool.name
        );
    }
    let losses: Vec<(&str, String)> = server
        .losses()
        .map(|(tool, loss)| (tool, loss.to_string()))
        .collect();
    assert!(losses.iter().all(|(tool, _)| *tool == "edit"), "{losses:?}");
    assert_eq!(
        losses[0].1,
        "oneOf at (root) is not shown to MCP clients \
         (the root cannot be a union: its branches are merged into one object)"
    );
    // Insert's `text` is required only in its branch.
    assert!(
        losses.iter().any(|(_, loss)| loss
            == "required at (root) is not shown to MCP clients \
                (required only in this branch: sent as optional)"),
        "{losses:?}"
    );
    let pointers: Vec<&str> = server.losses().map(|(_, loss)| loss.pointer()).collect();
    assert!(pointers.contains(&"/oneOf/0"), "{pointers:?}");
    assert!(
        McpServer::new(Runtime::new(example_registry()), local)
            .losses()
            .next()
            .is_none()
    );
}

fn dynamic_server(schema: Value) -> McpServer {
    let mut registry = Registry::new();
    registry
        .register(ToolDef::dynamic(
            DynamicTool::new("pick", "Picks.", schema),
            echo,
        ))
        .unwrap();
    McpServer::new(Runtime::new(registry), local)
}

#[test]
fn references_into_the_root_defs_are_sent_as_written() {
    let schema = json!({
        "type": "object",
        "oneOf": [
            { "properties": { "kind": { "const": "a" }, "at": { "$ref": "#/$defs/Point" } },
              "required": ["kind", "at"] },
            { "properties": { "kind": { "const": "b" }, "to": { "$ref": "#/$defs/Point" } },
              "required": ["kind"] }
        ],
        "$defs": { "Point": { "type": "object", "properties": { "x": { "type": "integer" } } } }
    });
    let server = dynamic_server(schema.clone());
    let sent = Value::Object((*server.tools()[0].input_schema).clone());
    assert_eq!(sent["properties"]["at"], json!({ "$ref": "#/$defs/Point" }));
    assert_eq!(sent["$defs"], schema["$defs"]);
    assert_eq!(sent.get("oneOf"), None, "{sent}");
    assert_eq!(sent["required"], json!(["kind"]));
    assert!(jsonschema::validator_for(&sent).is_ok(), "{sent}");
}

/// Moving a branch's properties to the root would leave a `$ref` into the union dangling:
/// such a schema gets its references resolved instead.
#[test]
fn references_into_the_union_are_resolved_rather_than_left_dangling() {
    let schema = json!({
        "type": "object",
        "oneOf": [
            { "properties": { "kind": { "const": "a" }, "n": { "type": "integer", "minimum": 1 } },
              "required": ["kind", "n"] },
            { "properties": { "kind": { "const": "b" }, "m": { "$ref": "#/oneOf/0/properties/n" } },
              "required": ["kind", "m"] }
        ]
    });
    let server = dynamic_server(schema);
    let sent = Value::Object((*server.tools()[0].input_schema).clone());
    assert_eq!(sent.get("oneOf"), None, "{sent}");
    assert_eq!(
        sent["properties"]["m"],
        json!({ "type": "integer", "minimum": 1 }),
        "{sent}"
    );
    assert!(!sent.to_string().contains("$ref"), "{sent}");
    assert!(jsonschema::validator_for(&sent).is_ok(), "{sent}");
}

// --- The client side, against the server in memory ---

async fn connected(server: McpServer) -> McpClient {
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    tokio::spawn(server.serve(theirs));
    McpClient::connect(ours).await.unwrap()
}

#[tokio::test]
async fn imported_tools_run_through_the_local_pipeline() {
    let client = connected(example_server()).await;
    let mut registry = Registry::new();
    let imported = client
        .register_tools(&mut registry, &McpImport::new().prefix("demo."))
        .await
        .unwrap();
    assert_eq!(
        imported.registered(),
        ["demo.get_weather", "demo.create_invoice"]
    );
    assert!(imported.skipped().is_empty());
    let info = registry.get("demo.get_weather").unwrap();
    assert_eq!(info.input_schema(), GetWeather::input_schema());
    assert!(info.output_schema().is_some());

    let runtime = Runtime::new(registry);
    let outcome = runtime
        .invoke(
            "c1",
            "demo.get_weather",
            r#"{"city":"Paris","units":"celsius"}"#,
            &local(),
        )
        .await;
    assert_eq!(
        outcome.output().unwrap().to_value(),
        json!({ "city": "Paris", "temperature": 19.5, "units": "celsius" })
    );

    // Refused here, before anything is sent, with the same field-level feedback.
    let outcome = runtime
        .invoke(
            "c2",
            "demo.create_invoice",
            r#"{"customerId":"cus_42","amount":"120.5","currency":"USD"}"#,
            &local(),
        )
        .await;
    let failure = outcome.failure().unwrap();
    assert_eq!(failure.code(), Code::InvalidArguments);
    assert!(failure.message().starts_with("- /amount: "), "{failure}");

    // The server's tool error reaches the model as its public message.
    let outcome = runtime
        .invoke(
            "c3",
            "demo.create_invoice",
            r#"{"customerId":"cus_closed","amount":1,"currency":"USD"}"#,
            &local(),
        )
        .await;
    let failure = outcome.failure().unwrap();
    assert_eq!(failure.code(), Code::ExecutionFailed);
    assert!(
        failure
            .message()
            .starts_with("that customer account is closed (reference "),
        "{failure}"
    );
    client.close().await.unwrap();
}

#[tokio::test]
async fn annotations_decide_the_effect_only_for_tools_the_application_trusts() {
    let client = connected(example_server()).await;
    let mut registry = Registry::new();
    client
        .register_tools(&mut registry, &McpImport::new())
        .await
        .unwrap();
    assert_eq!(
        registry.get("get_weather").unwrap().effect(),
        Effect::NonIdempotent
    );

    let mut registry = Registry::new();
    let import = McpImport::new()
        .trust_hints("get_weather")
        .configure(|name, def| match name {
            "create_invoice" => def.requires_approval(),
            _ => def,
        });
    client.register_tools(&mut registry, &import).await.unwrap();
    assert_eq!(
        registry.get("get_weather").unwrap().effect(),
        Effect::ReadOnly
    );
    let invoice = registry.get("create_invoice").unwrap();
    assert_eq!(invoice.effect(), Effect::NonIdempotent);
    assert!(invoice.requires_approval());
}

#[tokio::test]
async fn imported_outputs_are_untrusted_and_named_by_their_server_unless_trusted() {
    let client = connected(example_server()).await;
    let server = client.server_info().unwrap().name;
    let mut registry = Registry::new();
    client
        .register_tools(&mut registry, &McpImport::new().trust_output("get_weather"))
        .await
        .unwrap();
    let weather = registry.get("get_weather").unwrap();
    assert_eq!(weather.origin(), &Origin::Mcp(server.clone()));
    assert!(weather.trusted_output());
    let invoice = registry.get("create_invoice").unwrap();
    assert_eq!(
        invoice.provenance(),
        Provenance {
            origin: Origin::Mcp(server),
            trusted: false
        }
    );

    let mut registry = Registry::new();
    client
        .register_tools(&mut registry, &McpImport::new().server_name("billing"))
        .await
        .unwrap();
    let weather = registry.get("get_weather").unwrap();
    assert_eq!(weather.origin(), &Origin::Mcp("billing".into()));
    assert!(!weather.trusted_output());
    client.close().await.unwrap();
}

#[tokio::test]
async fn calls_after_close_fail_without_a_panic() {
    let client = connected(example_server()).await;
    let mut registry = Registry::new();
    client
        .register_tools(&mut registry, &McpImport::new())
        .await
        .unwrap();
    client.close().await.unwrap();
    let outcome = Runtime::new(registry)
        .invoke(
            "c1",
            "get_weather",
            r#"{"city":"Paris","units":"celsius"}"#,
            &local(),
        )
        .await;
    let failure = outcome.failure().unwrap();
    assert_eq!(failure.code(), Code::ExecutionFailed);
    assert!(
        failure.detail().unwrap().contains("tools/call"),
        "{failure:?}"
    );
}

/// A server nobody here wrote, reduced to a script: answers `initialize`, and `tools/list` with
/// the given pages (the cursor of page `n` is `"p<n>"`).
fn scripted_server(pages: Vec<Value>) -> DuplexStream {
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let (read, mut write) = tokio::io::split(theirs);
        let mut lines = BufReader::new(read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let request: Value = serde_json::from_str(&line).unwrap();
            let Some(id) = request.get("id") else {
                continue;
            };
            let result = match request["method"].as_str() {
                Some("initialize") => json!({
                    "protocolVersion": request["params"]["protocolVersion"],
                    "capabilities": { "tools": {} },
                    "serverInfo": { "name": "scripted", "version": "1" }
                }),
                Some("tools/list") => {
                    let page = request["params"]["cursor"]
                        .as_str()
                        .and_then(|c| c.strip_prefix('p'))
                        .and_then(|n| n.parse::<usize>().ok())
                        .unwrap_or(0);
                    pages[page.min(pages.len() - 1)].clone()
                }
                _ => json!({}),
            };
            let reply = json!({ "jsonrpc": "2.0", "id": id, "result": result });
            let mut text = reply.to_string();
            text.push('\n');
            if write.write_all(text.as_bytes()).await.is_err() {
                break;
            }
        }
    });
    ours
}

#[tokio::test]
async fn tools_whose_schemas_do_not_compile_are_skipped_and_reported() {
    let page = json!({ "tools": [
        { "name": "good", "inputSchema": { "type": "object" },
          "annotations": { "readOnlyHint": true } },
        { "name": "typo", "inputSchema": { "type": "object", "properties": { "n": { "type": "strnig" } } } },
        { "name": "dialect", "inputSchema": { "$schema": "https://example.com/custom", "type": "object" } },
        { "name": "bad name", "inputSchema": { "type": "object" } },
        { "name": "good", "inputSchema": { "type": "object" } }
    ]});
    let client = McpClient::connect(scripted_server(vec![page]))
        .await
        .unwrap();
    let mut registry = Registry::new();
    let imported = client
        .register_tools(&mut registry, &McpImport::new())
        .await
        .unwrap();
    assert_eq!(imported.registered(), ["good"]);
    let skipped: Vec<(&str, &RegistryError)> = imported
        .skipped()
        .iter()
        .map(|skipped| (skipped.name(), skipped.error()))
        .collect();
    assert_eq!(skipped.len(), 4, "{skipped:?}");
    assert!(matches!(
        skipped[0],
        ("typo", RegistryError::InvalidSchema { which: "input", .. })
    ));
    assert!(matches!(
        skipped[1],
        ("dialect", RegistryError::UnsupportedDialect { .. })
    ));
    assert!(matches!(
        skipped[2],
        ("bad name", RegistryError::InvalidName { .. })
    ));
    assert!(matches!(
        skipped[3],
        ("good", RegistryError::DuplicateName { .. })
    ));
    assert!(
        imported.skipped()[0]
            .to_string()
            .starts_with("`typo`: the input schema of `typo` does not compile"),
        "{}",
        imported.skipped()[0]
    );
    // The server's readOnlyHint was not trusted.
    assert_eq!(
        registry.get("good").unwrap().effect(),
        Effect::NonIdempotent
    );
}

#[tokio::test]
async fn an_output_schema_that_does_not_compile_is_reported() {
    let page = json!({ "tools": [
        { "name": "bad_output", "inputSchema": { "type": "object" },
          "outputSchema": { "type": "object", "properties": { "x": { "minimum": "zero" } } } }
    ]});
    let client = McpClient::connect(scripted_server(vec![page]))
        .await
        .unwrap();
    let imported = client
        .register_tools(&mut Registry::new(), &McpImport::new())
        .await
        .unwrap();
    assert!(matches!(
        imported.skipped()[0].error(),
        RegistryError::InvalidSchema {
            which: "output",
            ..
        }
    ));
}

#[tokio::test]
async fn a_listing_that_never_ends_is_an_error() {
    let looping = json!({ "tools": [], "nextCursor": "p0" });
    let client = McpClient::connect(scripted_server(vec![looping]))
        .await
        .unwrap();
    let error = client.list_tools().await.unwrap_err();
    assert!(matches!(error, McpError::EndlessListing { .. }), "{error}");
}

// --- Both ends across a process boundary ---

/// The example server binary, built once per run of this test binary.
fn example_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        if let Some(path) = std::env::var_os("MCP_SERVER_BIN") {
            return PathBuf::from(path);
        }
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
        let output = StdCommand::new(cargo)
            .args([
                "build",
                "--quiet",
                "--example",
                "mcp_server",
                "--features",
                "examples/mcp",
                "--message-format=json",
            ])
            .arg("--manifest-path")
            .arg(&manifest)
            .output()
            .expect("cargo runs");
        assert!(
            output.status.success(),
            "building the example failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|message| message["target"]["name"] == "mcp_server")
            .find_map(|message| message["executable"].as_str().map(PathBuf::from))
            .expect("cargo names the example's executable")
    })
}

#[tokio::test]
async fn rust_client_and_rust_server_over_stdio() {
    let mut command = tokio::process::Command::new(example_binary());
    command.arg("--with-private-ref");
    let client = McpClient::spawn(command).await.unwrap();
    assert_eq!(client.server_info().unwrap().name, "tool-core-example");

    let mut registry = Registry::new();
    let import = McpImport::new().trust_hints("get_weather");
    let imported = client.register_tools(&mut registry, &import).await.unwrap();
    // Three pages of one tool each; the third tool's schema points at a document only the
    // server has, so it cannot be compiled here.
    assert_eq!(imported.registered(), ["get_weather", "create_invoice"]);
    let skipped = &imported.skipped()[0];
    assert_eq!(skipped.name(), "check_stock");
    let RegistryError::InvalidSchema { which, reason, .. } = skipped.error() else {
        panic!("{skipped}");
    };
    assert_eq!(*which, "input");
    assert!(
        reason.contains("https://schemas.example.com/sku.json"),
        "{reason}"
    );
    assert_eq!(
        registry.get("get_weather").unwrap().effect(),
        Effect::ReadOnly
    );

    let runtime = Runtime::new(registry);
    let outcome = runtime
        .invoke(
            "c1",
            "get_weather",
            r#"{"city":"Lyon","units":"celsius"}"#,
            &local(),
        )
        .await;
    assert_eq!(
        outcome.output().unwrap().to_value(),
        json!({ "city": "Lyon", "temperature": 18.5, "units": "celsius" })
    );
    let outcome = runtime
        .invoke(
            "c2",
            "create_invoice",
            r#"{"customerId":"","amount":-1,"currency":"USD"}"#,
            &local(),
        )
        .await;
    let mut pointers: Vec<String> = outcome
        .failure()
        .unwrap()
        .errors()
        .unwrap()
        .iter()
        .map(|v| v.pointer().into_owned())
        .collect();
    pointers.sort();
    assert_eq!(pointers, ["/amount", "/customerId"]);
    client.close().await.unwrap();
}

// --- The official SDK clients against the example server ---

/// A check of the example server by an official MCP SDK's client: a script in `tests/mcp/` that
/// launches the server over stdio, prints one line per check and exits 0 when all pass.
struct ClientCheck {
    /// Which SDK, for messages.
    sdk: &'static str,
    /// What runs the script.
    program: &'static str,
    /// The script, from the repository root.
    script: &'static str,
    /// How to install the SDK, from the repository root.
    install: &'static str,
}

const PYTHON_CHECK: ClientCheck = ClientCheck {
    sdk: "the MCP Python SDK",
    program: "python3",
    script: "tests/mcp/client_check.py",
    install: "python3 -m pip install \"mcp>=1.12\"",
};

const TYPESCRIPT_CHECK: ClientCheck = ClientCheck {
    sdk: "the MCP TypeScript SDK",
    program: "node",
    script: "tests/mcp/client_check.mjs",
    install: "npm ci --prefix tests/mcp",
};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

impl ClientCheck {
    /// Whether the SDK loads, or why not. The script itself answers (`--probe` imports what the
    /// check imports, from where the check runs), so nothing that merely shares the SDK's name
    /// (such as the folder `tests/mcp/`, a namespace package `mcp` to a python3 started in
    /// `tests/`) passes for it. `options` go to the program before the script.
    fn probe(&self, options: &[&str]) -> Result<(), String> {
        let probe = StdCommand::new(self.program)
            .args(options)
            .args([self.script, "--probe"])
            .current_dir(repository())
            .output()
            .map_err(|error| format!("{} could not be run ({error})", self.program))?;
        if probe.status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&probe.stderr);
        Err(match stderr.trim().lines().last() {
            Some(last) => last.to_owned(),
            None => format!(
                "`{} {} --probe` ended with {}",
                self.program, self.script, probe.status
            ),
        })
    }

    /// Runs the check against the example server. Without the SDK the check is skipped, and says
    /// so on the terminal, unless `REQUIRE_MCP_CLIENT=1` (as in CI) makes that a failure.
    fn run(&self) {
        if let Err(reason) = self.probe(&[]) {
            assert!(
                std::env::var_os("REQUIRE_MCP_CLIENT").is_none_or(|v| v != "1"),
                "REQUIRE_MCP_CLIENT=1 but {} is missing: {reason}",
                self.sdk
            );
            let reason = reason.strip_prefix("client_check: ").unwrap_or(&reason);
            let install = if reason.contains(self.install) {
                String::new()
            } else {
                format!("; to run it: {}", self.install)
            };
            // Straight to stderr: libtest captures `eprintln!` of a passing test.
            let _ = writeln!(
                std::io::stderr(),
                "skipped: the check of the example MCP server with {}: {reason}{install} \
                 (REQUIRE_MCP_CLIENT=1 makes a missing SDK a failure)",
                self.sdk,
            );
            return;
        }
        let output = StdCommand::new(self.program)
            .arg(self.script)
            .current_dir(repository())
            .env("MCP_SERVER_BIN", example_binary())
            .env("MCP_CHECK_TIMEOUT", "120")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{} failed:\n{stdout}\n{}",
            self.script,
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            stdout.contains("client_check: all checks passed"),
            "{stdout}"
        );
        println!("{stdout}");
    }
}

/// The probe once ran `python3 -c "import mcp"` with `tests/` as its working directory, where the
/// folder `tests/mcp/` imports as an empty namespace package: the check ran instead of being
/// skipped, and failed on `No module named 'anyio'`. `python3 -S` sees no site-packages, so it
/// stands for a python3 without the SDK even where the SDK is installed.
#[test]
fn the_python_probe_is_not_fooled_by_the_tests_mcp_folder() {
    let probe = PYTHON_CHECK.probe(&["-S"]);
    assert!(probe.is_err(), "python3 -S passed the probe");
}

#[test]
fn the_schemas_the_client_checks_expect_are_the_rust_types() {
    let path = repository().join("tests/mcp/expected_schemas.json");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(
        file,
        json!({
            "get_weather": GetWeather::input_schema(),
            "create_invoice": CreateInvoice::input_schema(),
        })
    );
}

#[test]
fn the_official_python_sdk_accepts_the_example_server() {
    PYTHON_CHECK.run();
}

#[test]
fn the_official_typescript_sdk_accepts_the_example_server() {
    TYPESCRIPT_CHECK.run();
}

#[tokio::test]
async fn with_a_ledger_request_ids_are_claimed_per_session() {
    use tool_core::ledger::MemoryLedger;
    let ledger = Arc::new(MemoryLedger::new());
    let server = || {
        let runtime = Runtime::builder(example_registry())
            .ledger(Arc::clone(&ledger))
            .build();
        McpServer::new(runtime, local)
    };
    let arguments = json!({ "customerId": "cus_42", "amount": 1, "currency": "EUR" });
    let mut first = Wire::connect(server()).await;
    let reply = first
        .call(json!(1), "create_invoice", arguments.clone())
        .await;
    assert_eq!(reply["result"]["structuredContent"]["invoiceId"], "inv_1");
    // Resent in the session: answered from the ledger; with other arguments: refused.
    let again = first
        .call(json!(1), "create_invoice", arguments.clone())
        .await;
    assert_eq!(again["result"], reply["result"]);
    let other = json!({ "customerId": "cus_7", "amount": 1, "currency": "EUR" });
    let conflict = first.call(json!(1), "create_invoice", other.clone()).await;
    assert_eq!(conflict["error"]["code"], -32600, "{conflict}");
    assert_eq!(conflict["error"]["data"]["code"], "call_id_conflict");

    // Another session numbers its requests from 1 too: its request 1 is another call.
    let mut second = Wire::connect(server()).await;
    let reply = second.call(json!(1), "create_invoice", other).await;
    assert_eq!(
        reply["result"]["structuredContent"]["invoiceId"], "inv_1",
        "{reply}"
    );
    assert!(reply["result"]["isError"] != json!(true), "{reply}");
}

fn listed(reply: &Value) -> Vec<String> {
    reply["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn tools_list_shows_each_principal_only_what_its_policies_show() {
    let runtime = Runtime::builder(example_registry())
        .authorize(|tool: &ToolInfo, cx: &Context| match cx.principal() {
            "guest" if tool.effect() != Effect::ReadOnly => Err(Denied::new("guests only read")),
            _ => Ok(()),
        })
        .build();
    let guest = McpServer::new(runtime.clone(), || Context::builder("guest").build()).page_size(1);
    let admin = McpServer::new(runtime, || Context::builder("admin").build()).page_size(1);

    let mut wire = Wire::connect(admin).await;
    let first = wire.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(listed(&first), ["get_weather"]);
    let cursor = first["result"]["nextCursor"].clone();
    let second = wire
        .request(json!(2), "tools/list", json!({ "cursor": cursor }))
        .await;
    assert_eq!(listed(&second), ["create_invoice"]);

    let mut wire = Wire::connect(guest).await;
    let reply = wire.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(listed(&reply), ["get_weather"]);
    assert_eq!(reply["result"].get("nextCursor"), None, "{reply}");
    // Called anyway, the hidden tool is refused by the policies, not run.
    let reply = wire
        .call(
            json!(2),
            "create_invoice",
            json!({ "customerId": "cus_42", "amount": 1, "currency": "EUR" }),
        )
        .await;
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert_eq!(
        reply["result"]["_meta"]["tool-core/error"]["code"],
        "unauthorized"
    );
}
