//! The HTTP models (`tool_core::http`, feature `http`) against the replay server
//! (`tests::replay`): one whole agent run per provider from recorded traffic, every request
//! checked (path, authentication, the messages and tools of the body); retries (429 with
//! `Retry-After`, 5xx, a stream dropped part-way, attempts running out); refused requests not
//! retried; bad responses (a malformed event, the wrong content type, a body over the cap,
//! a body that is not JSON) failing the step with no call run; the run's deadline and
//! cancellation ending a model call; the cost budget; and the API key in no output.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tests::replay::{
    Api, Exchange, Expect, ReplayServer, Reply, anthropic_answer, cassette, openai_chat_answer,
    recorded_reply, recorded_request,
};
use tool_core::agent::{Agent, Guard, Prices, RunEnd, RunReport};
use tool_core::http::{ApiKey, HttpModel, RetryPolicy};
use tool_core::model::Provider;
use tool_core::model::{Message, Usage};
use tool_core::providers::{RequestOptions, Target};
use tool_core::{
    Context, Registry, Runtime, ToolDef,
    registry::{DynamicTool, ToolError},
    repair::RepairPolicy,
};

/// Distinctive, so that a leak anywhere is found by a plain substring search.
const KEY: &str = "sk-replay-LEAKCHECK-5a0d2c7e91";

const CHAT_PATH: &str = "/v1/chat/completions";

/// One tool, `name`, answering `answer` and counting its runs.
fn runtime(
    name: &str,
    description: &str,
    schema: Value,
    answer: Value,
) -> (Runtime, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let handler = move |_: Value, _: &Context| {
        counter.fetch_add(1, Ordering::SeqCst);
        let answer = answer.clone();
        async move { Ok::<Value, ToolError>(answer) }
    };
    let mut registry = Registry::new();
    registry
        .register(ToolDef::dynamic(
            DynamicTool::new(name, description, schema),
            handler,
        ))
        .unwrap();
    (Runtime::new(registry), runs)
}

/// `get_weather` of the recorded Anthropic streams, taking a `location`.
fn location_runtime() -> (Runtime, Arc<AtomicUsize>) {
    runtime(
        "get_weather",
        "The weather.",
        json!({"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}),
        json!({"sky": "sunny"}),
    )
}

/// `get_weather` of the recorded `openai-chat/strict-tool.sse.txt`.
fn weather_runtime() -> (Runtime, Arc<AtomicUsize>) {
    runtime(
        "get_weather",
        "The weather in a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"}, "state": {"type": "string"}},
               "required": ["city", "state"], "additionalProperties": false}),
        json!({"temperature": 18}),
    )
}

fn fast_retries(attempts: u32) -> RetryPolicy {
    RetryPolicy::new(attempts).base_delay(Duration::from_millis(10))
}

fn model(provider: Provider, name: &str, server: &ReplayServer, base: &str) -> HttpModel {
    HttpModel::new(provider, name)
        .unwrap()
        .base_url(server.url(base))
        .api_key(ApiKey::new(KEY))
        .retry(fast_retries(3))
}

fn chat(server: &ReplayServer) -> HttpModel {
    model(Provider::OpenAiChat, "gpt-4o", server, "/v1")
}

fn user(text: &str) -> Vec<Message> {
    vec![Message::User { text: text.into() }]
}

/// An agent of at most 4 steps on `runtime` and `model`, asked `question`.
async fn run(runtime: Runtime, model: HttpModel, question: &str) -> RunReport {
    Agent::new(runtime, model)
        .max_steps(4)
        .run(user(question), &cx())
        .await
}

fn cx() -> Context {
    Context::builder("tester")
        .timeout(Duration::from_secs(30))
        .build()
}

fn strict_tool_stream() -> Vec<u8> {
    tests::read_data("providers/openai-chat/strict-tool.sse.txt").into_bytes()
}

fn chat_expect() -> Expect {
    Expect::post(Api::OpenAi, CHAT_PATH, KEY)
}

/// The recorded weather call, then an answer.
fn weather_then_answer() -> Vec<Exchange> {
    vec![
        Exchange::new(chat_expect(), Reply::Sse(strict_tool_stream())),
        Exchange::new(
            chat_expect(),
            Reply::Sse(openai_chat_answer("18 degrees.", 100, 5)),
        ),
    ]
}

fn assert_no_problems(server: &ReplayServer) {
    assert_eq!(server.problems(), Vec::<String>::new());
    assert_eq!(server.remaining(), 0, "the script was not played out");
}

/// The recorded `tools`, less the empty descriptions the recording's client sent: a tool
/// without a description is advertised without the field.
fn recorded_tools(tools: &Value) -> Value {
    let mut tools = tools.clone();
    let strip = |tool: &mut Value| {
        if let Some(map) = tool.as_object_mut()
            && map.get("description") == Some(&json!(""))
        {
            map.remove("description");
        }
    };
    for tool in tools.as_array_mut().into_iter().flatten() {
        strip(tool);
        if let Some(function) = tool.get_mut("function") {
            strip(function);
        }
    }
    tools
}

fn failure(report: &RunReport) -> &str {
    match &report.end {
        RunEnd::ModelFailed(error) => error,
        other => panic!("expected the model to fail, the run ended {other:?}"),
    }
}

#[tokio::test]
async fn openai_chat_recorded_run_round_trips() {
    let recorded = cassette("providers/openai-chat/call-then-answer.cassette.yaml");
    let first = recorded_request(&recorded, 0);
    let second = recorded_request(&recorded, 1);
    let script = vec![
        Exchange::new(
            chat_expect()
                .equal("/messages", first["messages"].clone())
                .equal("/tools", recorded_tools(&first["tools"]))
                .equal("/model", json!("gpt-4.1-mini"))
                .equal("/stream", json!(false)),
            recorded_reply(&recorded, 0),
        ),
        Exchange::new(
            chat_expect()
                .equal("/messages", second["messages"].clone())
                .equal("/tools", recorded_tools(&second["tools"])),
            recorded_reply(&recorded, 1),
        ),
    ];
    let server = ReplayServer::start(script).await;
    let schema = first["tools"][0]["function"]["parameters"].clone();
    let (runtime, runs) = runtime("get_temperature", "", schema, json!(20.0));
    let model = model(Provider::OpenAiChat, "gpt-4.1-mini", &server, "/v1")
        .streaming(false)
        .target(Target::OpenAiChatStrict)
        .options(
            RequestOptions::new()
                .system("You are a helpful assistant.")
                .setting("n", json!(1))
                .setting("tool_choice", json!("auto")),
        );
    let report = run(runtime, model, "What is the temperature in Tokyo?").await;
    assert_no_problems(&server);
    assert_eq!(report.end, RunEnd::Answered);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let Some(Message::Assistant { text, .. }) = report.transcript.last() else {
        panic!("no answer");
    };
    assert_eq!(
        text.as_deref(),
        Some("The temperature in Tokyo is currently 20.0 degrees Celsius.")
    );
    // Token counts of both recorded responses.
    let recorded_usage = |i: usize| {
        let usage = &recorded["interactions"][i]["response"]["parsed_body"]["usage"];
        (
            usage["prompt_tokens"].as_u64().unwrap(),
            usage["completion_tokens"].as_u64().unwrap(),
        )
    };
    let (a, b) = (recorded_usage(0), recorded_usage(1));
    assert_eq!(
        report.usage,
        Usage {
            input_tokens: a.0 + b.0,
            output_tokens: a.1 + b.1
        }
    );
}

#[tokio::test]
async fn openai_chat_streamed_run_sends_the_result_back() {
    let call_id = "call_CTf1nWJLqSeRgDqaCG27xZ74";
    let script = vec![
        Exchange::new(
            chat_expect()
                .equal("/stream", json!(true))
                .equal("/stream_options", json!({"include_usage": true}))
                .equal("/model", json!("gpt-4o"))
                .equal("/messages", json!([{"role": "user", "content": "Weather in SF?"}]))
                .equal("/tools/0/function/name", json!("get_weather")),
            Reply::Sse(strict_tool_stream()),
        ),
        Exchange::new(
            chat_expect()
                .equal("/messages/1/tool_calls/0/id", json!(call_id))
                .equal(
                    "/messages/1/tool_calls/0/function/arguments",
                    json!(r#"{"city":"San Francisco","state":"CA"}"#),
                )
                .equal(
                    "/messages/2",
                    json!({"role": "tool", "tool_call_id": call_id, "content": r#"{"temperature":18}"#}),
                ),
            Reply::Sse(openai_chat_answer("18 degrees.", 100, 5)),
        ),
    ];
    let server = ReplayServer::start(script).await;
    let (runtime, runs) = weather_runtime();
    let report = run(runtime, chat(&server), "Weather in SF?").await;
    assert_no_problems(&server);
    assert_eq!(report.end, RunEnd::Answered);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // The recorded stream's usage chunk (after finish_reason, before [DONE]).
    let Message::Assistant { usage, .. } = &report.transcript[1] else {
        panic!("no call turn");
    };
    assert_eq!(
        *usage,
        Usage {
            input_tokens: 48,
            output_tokens: 19
        }
    );
    assert_eq!(report.usage.total(), 67 + 105);
}

#[tokio::test]
async fn openai_responses_recorded_stream_round_trips() {
    let recorded = cassette("providers/openai-responses/streamed-call-then-text.cassette.yaml");
    let first = recorded_request(&recorded, 0).clone();
    let script = vec![
        Exchange::new(
            Expect::post(Api::OpenAi, "/v1/responses", KEY)
                .equal("/input", first["input"].clone())
                .equal("/tools", recorded_tools(&first["tools"]))
                .equal("/instructions", json!(""))
                .equal("/stream", json!(true)),
            recorded_reply(&recorded, 0),
        ),
        Exchange::new(
            Expect::post(Api::OpenAi, "/v1/responses", KEY)
                .equal("/tools", recorded_tools(&first["tools"]))
                .check("answers the call by its call_id", |body| {
                    let input = body["input"].as_array().cloned().unwrap_or_default();
                    let call = input.iter().find(|i| i["type"] == "function_call");
                    let output = input.iter().find(|i| i["type"] == "function_call_output");
                    match (call, output) {
                        (Some(call), Some(output))
                            if call["call_id"] == output["call_id"]
                                && call["arguments"] == r#"{"country":"France"}"#
                                && output["output"] == r#""Paris""# =>
                        {
                            Ok(())
                        }
                        _ => Err(format!("no matching call and output in {input:?}")),
                    }
                }),
            recorded_reply(&recorded, 1),
        ),
    ];
    let server = ReplayServer::start(script).await;
    let schema = first["tools"][0]["parameters"].clone();
    let (runtime, runs) = runtime("get_capital", "", schema, json!("Paris"));
    let model = model(Provider::OpenAiResponses, "gpt-4o", &server, "/v1")
        .target(Target::OpenAiResponsesStrict)
        .options(
            RequestOptions::new()
                .system("")
                .setting("tool_choice", json!("auto")),
        );
    let report = run(runtime, model, "What is the capital of France?").await;
    assert_no_problems(&server);
    assert_eq!(report.end, RunEnd::Answered);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let Some(Message::Assistant { text, .. }) = report.transcript.last() else {
        panic!("no answer");
    };
    assert_eq!(text.as_deref(), Some("The capital of France is Paris."));
    assert!(report.usage.input_tokens > 0 && report.usage.output_tokens > 0);
    // The call turn keeps its output items for the next request.
    let Message::Assistant { provider, .. } = &report.transcript[1] else {
        panic!("no call turn");
    };
    assert!(provider.is_some());
}

#[tokio::test]
async fn anthropic_recorded_run_round_trips() {
    let recorded = cassette("providers/anthropic/four-parallel-tool-use.cassette.yaml");
    let first = recorded_request(&recorded, 0).clone();
    let second = recorded_request(&recorded, 1).clone();
    let expect = || Expect::post(Api::Anthropic, "/v1/messages", KEY);
    let ids = |body: &Value| -> Vec<Value> {
        body["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == "tool_result")
            .map(|b| json!([b["tool_use_id"], b["is_error"]]))
            .collect()
    };
    let recorded_ids = ids(&second["messages"][2]);
    assert_eq!(recorded_ids.len(), 4);
    let script = vec![
        Exchange::new(
            expect()
                .equal("/messages", first["messages"].clone())
                .equal("/tools", first["tools"].clone())
                .equal("/system", first["system"].clone())
                .equal("/max_tokens", json!(4096))
                .equal("/stream", json!(false)),
            recorded_reply(&recorded, 0),
        ),
        Exchange::new(
            expect()
                .equal("/messages/0", second["messages"][0].clone())
                // The assistant turn goes back exactly as Anthropic sent it.
                .equal("/messages/1", second["messages"][1].clone())
                .equal("/messages/2/role", json!("user"))
                .check("answers the four calls in order", move |body| {
                    let sent = ids(&body["messages"][2]);
                    (sent == recorded_ids)
                        .then_some(())
                        .ok_or_else(|| format!("results are {sent:?}"))
                }),
            recorded_reply(&recorded, 1),
        ),
    ];
    let server = ReplayServer::start(script).await;
    let schema = first["tools"][0]["input_schema"].clone();
    let description = first["tools"][0]["description"]
        .as_str()
        .unwrap()
        .to_owned();
    let (runtime, runs) = runtime(
        "retrieve_entity_info",
        &description,
        schema,
        json!("a family member"),
    );
    let model = model(Provider::Anthropic, "claude-haiku-4-5", &server, "/v1")
        .streaming(false)
        .options(
            RequestOptions::new()
                .system(first["system"].as_str().unwrap())
                .setting("tool_choice", json!({"type": "auto"})),
        );
    let report = Agent::new(runtime, model)
        .max_steps(4)
        .run(
            user(first["messages"][0]["content"][0]["text"].as_str().unwrap()),
            &cx(),
        )
        .await;
    assert_no_problems(&server);
    assert_eq!(report.end, RunEnd::Answered);
    assert_eq!(runs.load(Ordering::SeqCst), 4);
    assert_eq!(report.steps, 2);
    assert!(report.usage.input_tokens > 0 && report.usage.output_tokens > 0);
}

#[tokio::test]
async fn anthropic_recorded_stream_then_answer() {
    let expect = || Expect::post(Api::Anthropic, "/v1/messages", KEY);
    let call_id = "toolu_01NRLabsLyVHZPKxbKvkfSMn";
    let script = vec![
        Exchange::new(
            expect()
                .equal("/stream", json!(true))
                .equal("/model", json!("claude-sonnet-4")),
            Reply::Sse(
                tests::read_data("providers/anthropic/text-then-tool-use.sse.txt").into_bytes(),
            ),
        ),
        Exchange::new(
            expect()
                .equal("/messages/1/role", json!("assistant"))
                .equal("/messages/1/content/1/id", json!(call_id))
                .equal("/messages/1/content/1/input", json!({"location": "Paris"}))
                // Fields Anthropic sent with the block go back with it.
                .equal("/messages/1/content/1/caller", json!({"type": "direct"}))
                .equal("/messages/2/content/0/tool_use_id", json!(call_id))
                .equal("/messages/2/content/0/is_error", json!(false)),
            Reply::Sse(anthropic_answer("Sunny in Paris.", 500, 7)),
        ),
    ];
    let server = ReplayServer::start(script).await;
    let (runtime, runs) = location_runtime();
    let model = model(Provider::Anthropic, "claude-sonnet-4", &server, "/v1");
    let report = run(runtime, model, "Weather in Paris?").await;
    assert_no_problems(&server);
    assert_eq!(report.end, RunEnd::Answered);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let Message::Assistant { usage, text, .. } = &report.transcript[1] else {
        panic!("no call turn");
    };
    assert!(text.is_some());
    // message_start's input tokens, message_delta's (cumulative) output tokens.
    assert_eq!(
        *usage,
        Usage {
            input_tokens: 377,
            output_tokens: 65
        }
    );
    assert_eq!(report.usage.total(), 377 + 65 + 507);
}

/// The same model over HTTP repairs refused arguments: it is asked with the schema, the refused
/// arguments and the field-level feedback, and the JSON object in its answer is tried again.
#[tokio::test]
async fn the_model_over_http_repairs_refused_arguments() {
    let call_id = "call_CTf1nWJLqSeRgDqaCG27xZ74";
    let script = vec![
        // The recorded call names `state`, which this tool does not have.
        Exchange::new(chat_expect(), Reply::Sse(strict_tool_stream())),
        Exchange::new(
            chat_expect()
                .check("no tool settings", |body| match body.get("tool_choice") {
                    None => Ok(()),
                    Some(choice) => Err(format!("tool_choice is {choice}")),
                })
                .check("offers no tools", |body| match body.get("tools") {
                    None => Ok(()),
                    Some(tools) if tools.as_array().is_some_and(Vec::is_empty) => Ok(()),
                    Some(tools) => Err(format!("are {tools}")),
                })
                .check("asks for a repair", |body| {
                    let last = body["messages"].as_array().and_then(|m| m.last());
                    let text = last.and_then(|m| m["content"].as_str()).unwrap_or_default();
                    (text.contains("`get_weather` was refused")
                        && text.contains("\"units\"")
                        && text.contains("/state: unknown field")
                        && text.contains(r#"{"city":"San Francisco","state":"CA"}"#))
                    .then_some(())
                    .ok_or_else(|| format!("the message is {text:?}"))
                }),
            Reply::Sse(openai_chat_answer(
                "Sorry. Corrected:\n```json\n{\"city\": \"San Francisco\", \"units\": \"celsius\"}\n```",
                80,
                14,
            )),
        ),
        Exchange::new(
            chat_expect().equal("/messages/2/tool_call_id", json!(call_id)),
            Reply::Sse(openai_chat_answer("18 degrees in San Francisco.", 100, 7)),
        ),
    ];
    let server = ReplayServer::start(script).await;
    let (runtime, runs) = runtime(
        "get_weather",
        "The weather in a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"},
               "units": {"enum": ["celsius", "fahrenheit"]}},
               "required": ["city", "units"], "additionalProperties": false}),
        json!({"temperature": 18}),
    );
    // An agent that requires a call each step: the setting must not reach the repair request,
    // which offers no tools.
    let model =
        chat(&server).options(RequestOptions::new().setting("tool_choice", json!("required")));
    let report = Agent::new(runtime, model.clone())
        .repair(model, RepairPolicy::new(2).unwrap())
        .max_steps(3)
        .run(user("Weather in SF?"), &cx())
        .await;
    assert_no_problems(&server);
    assert_eq!(report.end, RunEnd::Answered, "{:?}", report.transcript);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let repaired = report.transcript.iter().find_map(|m| match m {
        Message::Tool(result) => result.repaired_arguments.clone(),
        _ => None,
    });
    assert_eq!(
        repaired.as_deref(),
        Some(r#"{"city": "San Francisco", "units": "celsius"}"#)
    );
    // The repair's tokens (80 in, 14 out) count in the run's usage with the turns'.
    let turns: u64 = report
        .transcript
        .iter()
        .filter_map(|m| match m {
            Message::Assistant { usage, .. } => Some(usage.total()),
            _ => None,
        })
        .sum();
    assert_eq!(report.usage.total(), turns + 80 + 14);
}

/// Anthropic counts prompt tokens served from or written to its cache apart from
/// `input_tokens`; the turn's input count holds all three, streamed or whole.
#[tokio::test]
async fn anthropic_cache_tokens_count_as_input() {
    let sse = String::from_utf8(anthropic_answer("Hi.", 12, 7))
        .unwrap()
        .replace(
            r#""input_tokens":12"#,
            r#""input_tokens":12,"cache_creation_input_tokens":300,"cache_read_input_tokens":2000"#,
        );
    assert!(sse.contains("cache_read_input_tokens"), "{sse}");
    let expect = || Expect::post(Api::Anthropic, "/v1/messages", KEY);
    let whole = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "text", "text": "Hi."}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 12, "cache_creation_input_tokens": 300,
            "cache_read_input_tokens": 2000, "output_tokens": 7}});
    let script = vec![
        Exchange::new(expect(), Reply::Sse(sse.into_bytes())),
        Exchange::new(expect(), Reply::Json(whole)),
    ];
    let server = ReplayServer::start(script).await;
    for streaming in [true, false] {
        let (runtime, _) = weather_runtime();
        let model =
            model(Provider::Anthropic, "claude-sonnet-4", &server, "/v1").streaming(streaming);
        let report = run(runtime, model, "Hi").await;
        assert_eq!(report.end, RunEnd::Answered, "streaming {streaming}");
        assert_eq!(
            report.usage,
            Usage {
                input_tokens: 2312,
                output_tokens: 7
            },
            "streaming {streaming}"
        );
    }
    assert_no_problems(&server);
}

/// The wrap-up turn after a guard: the tools stay declared (Anthropic refuses a conversation
/// with `tool_use` blocks and no tools) and calls are forbidden, in each provider's words.
#[tokio::test]
async fn the_wrap_up_turn_declares_the_tools_and_forbids_calls() {
    let anthropic =
        |server: &ReplayServer| model(Provider::Anthropic, "claude-sonnet-4", server, "/v1");
    let anthropic_expect = || Expect::post(Api::Anthropic, "/v1/messages", KEY);
    let script = vec![
        Exchange::new(
            anthropic_expect().check("no tool choice", |body| match body.get("tool_choice") {
                None => Ok(()),
                Some(choice) => Err(format!("is {choice}")),
            }),
            Reply::Sse(
                tests::read_data("providers/anthropic/text-then-tool-use.sse.txt").into_bytes(),
            ),
        ),
        Exchange::new(
            anthropic_expect()
                .equal("/tool_choice", json!({"type": "none"}))
                .equal("/tools/0/name", json!("get_weather"))
                .equal("/messages/2/content/0/type", json!("tool_result")),
            Reply::Sse(anthropic_answer("Sunny in Paris.", 500, 7)),
        ),
    ];
    let server = ReplayServer::start(script).await;
    let (runtime, runs) = location_runtime();
    let report = Agent::new(runtime, anthropic(&server))
        .max_steps(1)
        .wrap_up(true)
        .run(user("Weather in Paris?"), &cx())
        .await;
    assert_no_problems(&server);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert!(
        matches!(report.end, RunEnd::Guard(Guard::MaxSteps(1))),
        "{:?}",
        report.end
    );
    let Some(Message::Assistant { text, .. }) = report.transcript.last() else {
        panic!("no wrap-up turn: {:?}", report.transcript);
    };
    assert_eq!(text.as_deref(), Some("Sunny in Paris."));

    // OpenAI Chat: `tool_choice: "none"`, the tools still listed.
    let script = vec![
        Exchange::new(chat_expect(), Reply::Sse(strict_tool_stream())),
        Exchange::new(
            chat_expect()
                .equal("/tool_choice", json!("none"))
                .check("the tools listed", |body| match body["tools"].as_array() {
                    Some(tools) if !tools.is_empty() => Ok(()),
                    _ => Err(format!("are {}", body["tools"])),
                }),
            Reply::Sse(openai_chat_answer("18 degrees.", 100, 5)),
        ),
    ];
    let server = ReplayServer::start(script).await;
    let (runtime, _) = weather_runtime();
    let report = Agent::new(runtime, chat(&server))
        .max_steps(1)
        .wrap_up(true)
        .run(user("Weather in SF?"), &cx())
        .await;
    assert_no_problems(&server);
    assert!(matches!(report.end, RunEnd::Guard(Guard::MaxSteps(1))));
}

#[tokio::test]
async fn gemini_recorded_stream_round_trips() {
    let recorded =
        cassette("providers/gemini/streamed-call-with-signature-then-answer.cassette.yaml");
    let first = recorded_request(&recorded, 0).clone();
    let path = "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse";
    let expect = || Expect::post(Api::Gemini, path, KEY);
    let script = vec![
        Exchange::new(
            expect()
                .equal("/contents", first["contents"].clone())
                .equal("/generationConfig", first["generationConfig"].clone())
                .equal("/tools/0/functionDeclarations/0/name", json!("get_country")),
            recorded_reply(&recorded, 0),
        ),
        Exchange::new(
            expect()
                .equal("/contents/0", first["contents"][0].clone())
                .equal("/contents/1/role", json!("model"))
                .equal(
                    "/contents/1/parts/0/functionCall/name",
                    json!("get_country"),
                )
                .check("sends the signature back on its part", |body| {
                    let signature = &body["contents"][1]["parts"][0]["thoughtSignature"];
                    signature
                        .as_str()
                        .is_some_and(|s| s.starts_with("EpwICpkIAXLI2nxlU6gsWZaZHRYk"))
                        .then_some(())
                        .ok_or_else(|| format!("signature is {signature}"))
                })
                .equal("/contents/2/role", json!("user"))
                .equal(
                    "/contents/2/parts/0/functionResponse/name",
                    json!("get_country"),
                ),
            recorded_reply(&recorded, 1),
        ),
    ];
    let server = ReplayServer::start(script).await;
    let schema = json!({"type": "object", "properties": {}, "additionalProperties": false});
    let (runtime, runs) = runtime("get_country", "", schema, json!("Mexico"));
    let model = model(Provider::Gemini, "gemini-3-pro-preview", &server, "/v1beta").options(
        RequestOptions::new().setting("generationConfig", json!({"responseModalities": ["TEXT"]})),
    );
    let report = Agent::new(runtime, model)
        .max_steps(4)
        .run(
            user("What is the capital of the user country? Call the tool"),
            &cx(),
        )
        .await;
    assert_no_problems(&server);
    assert_eq!(report.end, RunEnd::Answered);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let Some(Message::Assistant { text, .. }) = report.transcript.last() else {
        panic!("no answer");
    };
    assert!(
        text.as_deref()
            .is_some_and(|t| t.starts_with("The capital of Mexico")),
        "{text:?}"
    );
    // The first step's usage: 29 prompt tokens, 10 candidate and 202 thinking tokens.
    let Message::Assistant { usage, .. } = &report.transcript[1] else {
        panic!("no call turn");
    };
    assert_eq!(
        *usage,
        Usage {
            input_tokens: 29,
            output_tokens: 212
        }
    );
}

#[tokio::test]
async fn rate_limited_request_waits_for_retry_after_then_succeeds() {
    let mut script = vec![Exchange::new(chat_expect(), Reply::rate_limited("1"))];
    script.extend(weather_then_answer());
    let server = ReplayServer::start(script).await;
    let (runtime, runs) = weather_runtime();
    let started = Instant::now();
    let report = run(runtime, chat(&server), "Weather in SF?").await;
    assert_no_problems(&server);
    assert_eq!(report.end, RunEnd::Answered);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(server.received().len(), 3);
    // The backoff alone would have waited 10 ms at most.
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn retry_after_may_be_an_http_date() {
    let at = std::time::SystemTime::now() + Duration::from_secs(2);
    let mut script = vec![Exchange::new(
        chat_expect(),
        Reply::rate_limited(&httpdate::fmt_http_date(at)),
    )];
    script.extend(weather_then_answer());
    let server = ReplayServer::start(script).await;
    let (runtime, _) = weather_runtime();
    let started = Instant::now();
    let report = run(runtime, chat(&server), "Weather in SF?").await;
    assert_no_problems(&server);
    assert_eq!(report.end, RunEnd::Answered);
    // The date has whole seconds: at least one of the two is left when the 429 arrives.
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn an_error_event_mid_stream_is_retried() {
    // Anthropic reports overload inside a stream that has begun.
    let overloaded = "event: message_start\ndata: {\"type\": \"message_start\", \"message\": {\"id\": \"msg_1\", \"content\": [], \"usage\": {\"input_tokens\": 3, \"output_tokens\": 1}}}\n\n\
        event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n";
    let expect = || Expect::post(Api::Anthropic, "/v1/messages", KEY);
    let server = ReplayServer::start(vec![
        Exchange::new(expect(), Reply::Sse(overloaded.as_bytes().to_vec())),
        Exchange::new(expect(), Reply::Sse(anthropic_answer("Hello.", 3, 2))),
    ])
    .await;
    let (runtime, _) = weather_runtime();
    let claude = model(Provider::Anthropic, "claude", &server, "/v1");
    let report = Agent::new(runtime, claude)
        .max_steps(2)
        .run(user("Hi"), &cx())
        .await;
    assert_no_problems(&server);
    assert_eq!(report.end, RunEnd::Answered);
    assert_eq!(
        report.usage,
        Usage {
            input_tokens: 3,
            output_tokens: 2
        }
    );

    // When every attempt is overloaded, the provider's message is the error.
    let server = ReplayServer::start(
        (0..2)
            .map(|_| Exchange::new(expect(), Reply::Sse(overloaded.as_bytes().to_vec())))
            .collect(),
    )
    .await;
    let (runtime, _) = weather_runtime();
    let claude = model(Provider::Anthropic, "claude", &server, "/v1").retry(fast_retries(2));
    let report = Agent::new(runtime, claude)
        .max_steps(2)
        .run(user("Hi"), &cx())
        .await;
    let error = failure(&report);
    assert!(
        error.contains("gave up after 2 attempts") && error.contains("Overloaded"),
        "{error}"
    );
}

/// An error event that names a request error (not an overload, a rate limit or a server
/// error) fails the step at once: another attempt would meet it again.
#[tokio::test]
async fn an_error_event_that_refuses_the_request_is_not_retried() {
    let cases = [
        (
            Provider::Anthropic,
            Api::Anthropic,
            "/v1/messages",
            "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"invalid_request_error\", \"message\": \"prompt is too long\"}}\n\n",
            "invalid_request_error",
        ),
        (
            Provider::OpenAiResponses,
            Api::OpenAi,
            "/v1/responses",
            "event: response.failed\ndata: {\"type\": \"response.failed\", \"response\": {\"error\": {\"code\": \"invalid_prompt\", \"message\": \"flagged\"}}}\n\n",
            "invalid_prompt",
        ),
    ];
    for (provider, api, path, body, kind) in cases {
        let server = ReplayServer::start(vec![Exchange::new(
            Expect::post(api, path, KEY),
            Reply::Sse(body.as_bytes().to_vec()),
        )])
        .await;
        let (runtime, _) = weather_runtime();
        let report = run(runtime, model(provider, "m", &server, "/v1"), "Hi").await;
        let error = failure(&report);
        assert!(
            error.contains(&format!("refused the request ({kind})")) && !error.contains("gave up"),
            "{provider:?}: {error}"
        );
        assert_eq!(server.received().len(), 1, "{provider:?}: not retried");
    }
}

#[tokio::test]
async fn a_model_without_a_key_sends_no_authentication() {
    let server =
        ReplayServer::start(vec![Exchange::new(chat_expect(), Reply::Sse(Vec::new()))]).await;
    let (runtime, _) = weather_runtime();
    let model = chat(&server).without_api_key();
    let report = Agent::new(runtime, model)
        .max_steps(1)
        .run(user("Hi"), &cx())
        .await;
    failure(&report);
    assert_eq!(server.problems().len(), 1);
    assert!(
        server.problems()[0].contains("header authorization is missing"),
        "{:?}",
        server.problems()
    );
}

#[tokio::test]
async fn retry_after_is_capped() {
    let mut script = vec![Exchange::new(chat_expect(), Reply::rate_limited("3600"))];
    script.extend(weather_then_answer());
    let server = ReplayServer::start(script).await;
    let (runtime, _) = weather_runtime();
    let model = chat(&server).retry(fast_retries(3).max_retry_after(Duration::from_millis(50)));
    let started = Instant::now();
    let report = run(runtime, model, "Weather in SF?").await;
    assert_eq!(report.end, RunEnd::Answered);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn server_errors_and_dropped_streams_are_retried() {
    let stream = strict_tool_stream();
    let half = stream[..stream.len() / 2].to_vec();
    let mut script = vec![
        Exchange::new(chat_expect(), Reply::error(500, "internal error")),
        Exchange::new(chat_expect(), Reply::error(503, "overloaded")),
        Exchange::new(chat_expect(), Reply::Dropped(half)),
    ];
    script.extend(weather_then_answer());
    let server = ReplayServer::start(script).await;
    let (runtime, runs) = weather_runtime();
    let report = run(
        runtime,
        chat(&server).retry(fast_retries(4)),
        "Weather in SF?",
    )
    .await;
    assert_no_problems(&server);
    assert_eq!(report.end, RunEnd::Answered);
    // The call of the dropped stream was never run; the one of the whole stream once.
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(server.received().len(), 5);
}

#[tokio::test]
async fn a_stream_closed_before_its_end_is_retried() {
    // The whole recorded stream but its last events: the connection closes cleanly, before
    // the finish_reason and [DONE].
    let stream = String::from_utf8(strict_tool_stream()).unwrap();
    let cut = stream.find("\"finish_reason\":\"tool_calls\"").unwrap();
    let cut = stream[..cut].rfind("data:").unwrap();
    let mut script = vec![Exchange::new(
        chat_expect(),
        Reply::Sse(stream.as_bytes()[..cut].to_vec()),
    )];
    script.extend(weather_then_answer());
    let server = ReplayServer::start(script).await;
    let (runtime, runs) = weather_runtime();
    let report = run(runtime, chat(&server), "Weather?").await;
    assert_no_problems(&server);
    assert_eq!(report.end, RunEnd::Answered);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn attempts_are_bounded() {
    let script = (0..3)
        .map(|_| Exchange::new(chat_expect(), Reply::error(502, "bad gateway")))
        .collect();
    let server = ReplayServer::start(script).await;
    let (runtime, runs) = weather_runtime();
    let report = run(runtime, chat(&server).retry(fast_retries(3)), "Weather?").await;
    assert_no_problems(&server);
    let error = failure(&report);
    assert!(error.contains("gave up after 3 attempts"), "{error}");
    assert!(
        error.contains("502") && error.contains("bad gateway"),
        "{error}"
    );
    assert_eq!(server.received().len(), 3);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn total_wait_is_bounded() {
    let script = (0..2)
        .map(|_| Exchange::new(chat_expect(), Reply::rate_limited("2")))
        .collect();
    let server = ReplayServer::start(script).await;
    let (runtime, _) = weather_runtime();
    let policy = fast_retries(10).max_total_wait(Duration::from_secs(3));
    let started = Instant::now();
    let report = run(runtime, chat(&server).retry(policy), "Weather?").await;
    let error = failure(&report);
    assert!(
        error.contains("gave up after 2 attempts") && error.contains("429"),
        "{error}"
    );
    assert_eq!(server.received().len(), 2);
    assert!(started.elapsed() < Duration::from_secs(4));
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    for status in [400, 401, 403, 404] {
        let script = vec![Exchange::new(
            chat_expect(),
            Reply::error(status, "The model `gpt-9` does not exist"),
        )];
        let server = ReplayServer::start(script).await;
        let (runtime, _) = weather_runtime();
        let report = run(runtime, chat(&server), "Hi").await;
        let error = failure(&report);
        assert!(error.starts_with("OpenAI Chat: HTTP "), "{error}");
        assert!(error.contains(&status.to_string()), "{error}");
        assert!(
            error.contains("The model `gpt-9` does not exist"),
            "{error}"
        );
        assert!(!error.contains("attempts"), "{error}");
        assert_eq!(server.received().len(), 1, "status {status} was retried");
    }
}

#[tokio::test]
async fn a_base_url_that_is_no_url_fails_at_once() {
    let model = HttpModel::new(Provider::OpenAiChat, "gpt-4o")
        .unwrap()
        .base_url("not a url")
        .api_key(ApiKey::new(KEY))
        .retry(RetryPolicy::new(4).base_delay(Duration::from_secs(5)));
    let (runtime, _) = weather_runtime();
    let started = Instant::now();
    let report = Agent::new(runtime, model)
        .max_steps(1)
        .run(user("Hi"), &cx())
        .await;
    let error = failure(&report);
    assert!(
        error.starts_with("OpenAI Chat: cannot send a request to not a url/chat/completions"),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn tls_to_a_server_without_it_fails_cleanly() {
    // The client's TLS is set up and used: the handshake meets a plain HTTP server.
    let server = ReplayServer::start(Vec::new()).await;
    let url = format!("https://{}/v1", server.addr());
    let model = HttpModel::new(Provider::OpenAiChat, "gpt-4o")
        .unwrap()
        .base_url(url)
        .api_key(ApiKey::new(KEY))
        .retry(RetryPolicy::never());
    let (runtime, _) = weather_runtime();
    let report = Agent::new(runtime, model)
        .max_steps(1)
        .run(user("Hi"), &cx())
        .await;
    let error = failure(&report);
    assert!(
        error.starts_with("OpenAI Chat: the request failed: could not connect"),
        "{error}"
    );
    // rustls's word for a plain HTTP answer to its hello.
    assert!(error.contains("corrupt message"), "{error}");
    assert!(!error.contains(KEY));
}

#[tokio::test]
async fn a_long_error_body_is_cut_short() {
    let body = "x".repeat(100_000);
    let script = vec![Exchange::new(
        chat_expect(),
        Reply::Raw {
            status: 400,
            content_type: "text/plain".into(),
            headers: vec![],
            body: body.into_bytes(),
        },
    )];
    let server = ReplayServer::start(script).await;
    let (runtime, _) = weather_runtime();
    let report = run(runtime, chat(&server), "Hi").await;
    let error = failure(&report);
    assert!(error.len() < 1000, "{} bytes", error.len());
}

/// Runs the weather agent against one reply and returns the failure; no call may have run.
async fn fails_without_running(reply: Reply, model: impl FnOnce(HttpModel) -> HttpModel) -> String {
    let server = ReplayServer::start(vec![Exchange::new(chat_expect(), reply)]).await;
    let (runtime, runs) = weather_runtime();
    let report = run(runtime, model(chat(&server)), "Weather?").await;
    assert_no_problems(&server);
    assert_eq!(runs.load(Ordering::SeqCst), 0, "a call ran");
    assert_eq!(server.received().len(), 1, "the request was retried");
    failure(&report).to_owned()
}

#[tokio::test]
async fn a_malformed_event_fails_the_step_and_runs_no_call() {
    // The whole call has arrived (finish_reason included) when the malformed event comes.
    let stream = String::from_utf8(strict_tool_stream()).unwrap();
    let done = stream.find("data: [DONE]").unwrap();
    let broken = format!(
        "{}data: {{\"choices\": [{{\"index\": 0,\n\n{}",
        &stream[..done],
        &stream[done..]
    );
    let error = fails_without_running(Reply::Sse(broken.into_bytes()), |m| m).await;
    assert!(
        error.starts_with("OpenAI Chat: malformed stream event:"),
        "{error}"
    );
}

#[tokio::test]
async fn an_event_that_breaks_the_protocol_fails_the_step() {
    let body = tests::read_data("providers/anthropic/synthetic-spliced-message-start.chunks.txt");
    let sse: String = body
        .lines()
        .map(|line| format!("data: {line}\n\n"))
        .collect();
    let server = ReplayServer::start(vec![Exchange::new(
        Expect::post(Api::Anthropic, "/v1/messages", KEY),
        Reply::Sse(sse.into_bytes()),
    )])
    .await;
    let (runtime, runs) = weather_runtime();
    let model = model(Provider::Anthropic, "claude", &server, "/v1");
    let report = run(runtime, model, "Hi").await;
    let error = failure(&report);
    assert!(error.contains("stream protocol error"), "{error}");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_wrong_content_type_fails_the_step() {
    let reply = Reply::Raw {
        status: 200,
        content_type: "text/html".into(),
        headers: vec![],
        body: b"<html>captive portal</html>".to_vec(),
    };
    let error = fails_without_running(reply, |m| m).await;
    assert!(
        error.contains("expected a text/event-stream response, got content type text/html"),
        "{error}"
    );
}

#[tokio::test]
async fn a_body_over_the_cap_fails_the_step() {
    let error = fails_without_running(Reply::Sse(strict_tool_stream()), |m| {
        m.max_response_bytes(1000)
    })
    .await;
    assert!(error.contains("larger than 1000 bytes"), "{error}");
    let big = Reply::Json(json!({"choices": [], "padding": "x".repeat(5000)}));
    let error = fails_without_running(big, |m| m.streaming(false).max_response_bytes(1000)).await;
    assert!(error.contains("larger than 1000 bytes"), "{error}");
}

#[tokio::test]
async fn a_body_that_is_not_json_fails_the_step() {
    let reply = Reply::Raw {
        status: 200,
        content_type: "application/json".into(),
        headers: vec![],
        body: b"{\"choices\": [".to_vec(),
    };
    let error = fails_without_running(reply, |m| m.streaming(false)).await;
    assert!(error.contains("the response is not JSON"), "{error}");
}

#[tokio::test]
async fn a_call_over_the_argument_cap_fails_the_step() {
    let error =
        fails_without_running(Reply::Sse(strict_tool_stream()), |m| m.max_call_bytes(8)).await;
    assert!(error.contains("exceed 8 bytes"), "{error}");
}

/// A stream that goes silent is given up after the idle timeout and retried; every attempt
/// silent, the step fails saying so.
#[tokio::test]
async fn a_silent_stream_is_given_up_after_the_idle_timeout() {
    let server = ReplayServer::start(
        (0..2)
            .map(|_| {
                Exchange::new(
                    chat_expect(),
                    Reply::Stall(b"data: {\"choices\": []}\n\n".to_vec()),
                )
            })
            .collect(),
    )
    .await;
    let (runtime, _) = weather_runtime();
    let model = chat(&server)
        .idle_timeout(Duration::from_millis(100))
        .retry(fast_retries(2));
    let report = run(runtime, model, "Hi").await;
    let error = failure(&report);
    assert!(
        error.contains("gave up after 2 attempts") && error.contains("sent nothing for 100 ms"),
        "{error}"
    );
    assert_eq!(server.received().len(), 2);
}

/// A redirect is not followed: it would carry the key to another host.
#[tokio::test]
async fn a_redirect_is_an_error_and_the_key_stays_home() {
    let elsewhere = ReplayServer::start(Vec::new()).await;
    let location = elsewhere.url("/v1/messages");
    let server = ReplayServer::start(vec![Exchange::new(
        Expect::post(Api::Anthropic, "/v1/messages", KEY),
        Reply::Raw {
            status: 307,
            content_type: "text/plain".to_owned(),
            headers: vec![("location".to_owned(), location)],
            body: b"moved".to_vec(),
        },
    )])
    .await;
    let (runtime, _) = weather_runtime();
    let report = run(
        runtime,
        model(Provider::Anthropic, "m", &server, "/v1"),
        "Hi",
    )
    .await;
    let error = failure(&report);
    assert!(error.contains("HTTP 307"), "{error}");
    assert_eq!(server.received().len(), 1, "not retried");
    assert!(elsewhere.received().is_empty(), "the redirect was followed");
}

/// OpenAI Chat sends an error as a chunk with an `error` member (vLLM and proxies follow it
/// with `[DONE]`): the attempt ends there and is retried, never returned as a finished turn.
#[tokio::test]
async fn an_error_chunk_in_a_chat_stream_ends_the_attempt() {
    let broken = "data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"Part\"}, \"finish_reason\": null}]}\n\n\
        data: {\"error\": {\"message\": \"upstream overloaded\", \"type\": \"server_error\"}}\n\n\
        data: [DONE]\n\n";
    let server = ReplayServer::start(vec![
        Exchange::new(chat_expect(), Reply::Sse(broken.as_bytes().to_vec())),
        Exchange::new(
            chat_expect(),
            Reply::Sse(openai_chat_answer("Whole answer.", 10, 3)),
        ),
    ])
    .await;
    let (runtime, _) = weather_runtime();
    let report = run(runtime, chat(&server), "Hi").await;
    assert_no_problems(&server);
    assert_eq!(report.end, RunEnd::Answered);
    let Some(Message::Assistant { text, .. }) = report.transcript.last() else {
        panic!("{:?}", report.transcript);
    };
    assert_eq!(text.as_deref(), Some("Whole answer."));
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn the_runs_deadline_ends_a_stalled_model_call() {
    let server = ReplayServer::start(vec![Exchange::new(
        chat_expect(),
        Reply::Stall(b"data: {\"choices\": []}\n\n".to_vec()),
    )])
    .await;
    let (runtime, _) = weather_runtime();
    let cx = Context::builder("tester")
        .timeout(Duration::from_millis(300))
        .build();
    let started = Instant::now();
    let report = Agent::new(runtime, chat(&server))
        .max_steps(4)
        .run(user("Hi"), &cx)
        .await;
    assert_eq!(report.end, RunEnd::Guard(Guard::Deadline));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn cancelling_the_run_ends_a_stalled_model_call() {
    let server =
        ReplayServer::start(vec![Exchange::new(chat_expect(), Reply::Stall(Vec::new()))]).await;
    let (runtime, _) = weather_runtime();
    let cx = cx();
    let token = cx.cancellation().clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        token.cancel();
    });
    let started = Instant::now();
    let report = Agent::new(runtime, chat(&server))
        .max_steps(4)
        .run(user("Hi"), &cx)
        .await;
    assert_eq!(report.end, RunEnd::Guard(Guard::Cancelled));
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn a_request_past_its_own_timeout_is_retried_then_fails() {
    let script = (0..2)
        .map(|_| Exchange::new(chat_expect(), Reply::Stall(Vec::new())))
        .collect();
    let server = ReplayServer::start(script).await;
    let (runtime, _) = weather_runtime();
    let model = chat(&server)
        .timeout(Duration::from_millis(200))
        .retry(fast_retries(2));
    let report = run(runtime, model, "Hi").await;
    let error = failure(&report);
    assert!(
        error.contains("gave up after 2 attempts: the request timed out after 200 ms"),
        "{error}"
    );
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn the_cost_budget_stops_the_run() {
    // The recorded call turn reports its tokens; priced at 1 per million input and output
    // tokens, they cost more than the 50-micro budget, so no second step starts.
    let server = ReplayServer::start(vec![Exchange::new(
        chat_expect(),
        Reply::Sse(strict_tool_stream()),
    )])
    .await;
    let (runtime, runs) = weather_runtime();
    let prices = Prices::per_million(1.0, 1.0);
    let report = Agent::new(runtime, chat(&server))
        .max_steps(4)
        .cost_budget(50, prices)
        .run(user("Weather?"), &cx())
        .await;
    assert_no_problems(&server);
    assert_eq!(report.steps, 1);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let spent = prices.cost_micros(report.usage);
    assert!(spent >= 50, "{:?}", report.usage);
    assert_eq!(
        report.end,
        RunEnd::Guard(Guard::CostBudget {
            limit_micros: 50,
            spent_micros: spent
        })
    );

    // Under a budget it does not reach, the same run answers.
    let server = ReplayServer::start(weather_then_answer()).await;
    let (runtime, _) = weather_runtime();
    let report = Agent::new(runtime, chat(&server))
        .max_steps(4)
        .cost_budget(1_000_000, prices)
        .run(user("Weather?"), &cx())
        .await;
    assert_eq!(report.end, RunEnd::Answered);
}

#[tokio::test]
async fn the_api_key_is_never_shown() {
    let model = chat(&ReplayServer::start(Vec::new()).await);
    assert!(!format!("{model:?}").contains(KEY));
    assert!(!format!("{:?}", ApiKey::new(KEY)).contains(KEY));

    // A provider that echoes the key in its error, a failed connection, a malformed stream.
    let echo = Reply::error(401, &format!("Incorrect API key provided: {KEY}."));
    let server = ReplayServer::start(vec![
        Exchange::new(chat_expect(), Reply::Sse(strict_tool_stream())),
        Exchange::new(chat_expect(), echo),
    ])
    .await;
    let (runtime, _) = weather_runtime();
    let agent = Agent::new(runtime, chat(&server)).max_steps(4);
    let report = agent.run(user("Weather?"), &cx()).await;
    let error = failure(&report);
    assert!(
        error.contains("Incorrect API key provided: [redacted]"),
        "{error}"
    );
    let transcript = serde_json::to_string(&report.transcript).unwrap();
    let mut outputs = vec![
        error.to_owned(),
        format!("{:?}", report),
        transcript,
        format!("{:?}", agent.model()),
    ];

    let closed = HttpModel::new(Provider::OpenAiChat, "gpt-4o")
        .unwrap()
        .base_url("http://127.0.0.1:9/v1")
        .api_key(ApiKey::new(KEY))
        .retry(RetryPolicy::never());
    let (runtime, _) = weather_runtime();
    let report = Agent::new(runtime, closed)
        .max_steps(1)
        .run(user("Hi"), &cx())
        .await;
    outputs.push(failure(&report).to_owned());
    outputs.push(format!("{report:?}"));

    for provider in Provider::ALL {
        let server = ReplayServer::start(vec![]).await;
        let model = HttpModel::new(provider, "m")
            .unwrap()
            .base_url(server.url("/v1"))
            .api_key(ApiKey::new(KEY))
            .retry(RetryPolicy::never());
        outputs.push(format!("{model:?}"));
        let (runtime, _) = weather_runtime();
        let report = Agent::new(runtime, model)
            .max_steps(1)
            .run(user("Hi"), &cx())
            .await;
        outputs.push(format!("{report:?}"));
    }
    for output in &outputs {
        assert!(!output.contains(KEY), "the key leaked into: {output}");
        assert!(
            !output.contains("LEAKCHECK"),
            "part of the key leaked into: {output}"
        );
    }
}

#[tokio::test]
async fn each_provider_authenticates_its_own_way() {
    for provider in Provider::ALL {
        let (api, path) = match provider {
            Provider::OpenAiChat => (Api::OpenAi, "/v1/chat/completions".to_owned()),
            Provider::OpenAiResponses => (Api::OpenAi, "/v1/responses".to_owned()),
            Provider::Anthropic => (Api::Anthropic, "/v1/messages".to_owned()),
            _ => (
                Api::Gemini,
                "/v1/models/m:streamGenerateContent?alt=sse".to_owned(),
            ),
        };
        // A wrong key is caught by the server's check.
        let server = ReplayServer::start(vec![Exchange::new(
            Expect::post(api, &path, "another-key"),
            Reply::Sse(Vec::new()),
        )])
        .await;
        let (runtime, _) = weather_runtime();
        let model = model(provider, "m", &server, "/v1");
        let report = Agent::new(runtime, model)
            .max_steps(1)
            .run(user("Hi"), &cx())
            .await;
        failure(&report);
        let problems = server.problems();
        assert_eq!(problems.len(), 1, "{provider:?}: {problems:?}");
        assert!(
            problems[0].contains("has the wrong value"),
            "{provider:?}: {problems:?}"
        );
        assert!(!problems[0].contains("path"), "{provider:?}: {problems:?}");
    }
}

#[tokio::test]
async fn a_restarted_agent_with_a_durable_ledger_runs_the_same_id_less_gemini_turn_again() {
    // Gemini sends no call id. Two processes, one after the other, share a ledger and each
    // reads the same recorded turn: the second call is a new call, not the first's replay.
    let recorded =
        cassette("providers/gemini/streamed-call-with-signature-then-answer.cassette.yaml");
    let path = "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse";
    let ledger = Arc::new(tool_core::ledger::MemoryLedger::new());
    let runs = Arc::new(AtomicUsize::new(0));
    let mut ids = Vec::new();
    for _process in 0..2 {
        let script = (0..2)
            .map(|i| {
                Exchange::new(
                    Expect::post(Api::Gemini, path, KEY),
                    recorded_reply(&recorded, i),
                )
            })
            .collect();
        let server = ReplayServer::start(script).await;
        let counter = Arc::clone(&runs);
        let handler = move |_: Value, _: &Context| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<Value, ToolError>(json!("Mexico")) }
        };
        let mut registry = Registry::new();
        let schema = json!({"type": "object", "properties": {}, "additionalProperties": false});
        registry
            .register(ToolDef::dynamic(
                DynamicTool::new("get_country", "", schema),
                handler,
            ))
            .unwrap();
        let runtime = Runtime::builder(registry)
            .ledger(Arc::clone(&ledger))
            .build();
        let model = model(Provider::Gemini, "gemini-3-pro-preview", &server, "/v1beta");
        let report = Agent::new(runtime, model)
            .max_steps(4)
            .run(user("Call the tool"), &cx())
            .await;
        assert_no_problems(&server);
        assert_eq!(report.end, RunEnd::Answered);
        let Some(Message::Assistant { calls, .. }) = report.transcript.get(1) else {
            panic!("no call turn: {:?}", report.transcript);
        };
        ids.push(calls[0].call_id().to_owned());
        assert!(report.outcomes.iter().all(|o| !o.is_replay()));
    }
    assert_ne!(ids[0], ids[1]);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

/// A Chat Completions stream with one `search` call under `id`.
fn chat_call(id: &str, query: &str) -> Vec<u8> {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-replay", "object": "chat.completion.chunk", "created": 0,
               "model": "replay", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let arguments = json!({ "q": query }).to_string();
    let mut body = String::new();
    for event in [
        chunk(
            json!({"role": "assistant", "tool_calls": [{"index": 0, "id": id, "type": "function",
                   "function": {"name": "search", "arguments": arguments}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
    ] {
        body.push_str(&format!("data: {event}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
}

#[tokio::test]
async fn an_id_an_earlier_turn_used_is_replaced_and_each_result_goes_back_under_it() {
    // A server that reuses one id turn after turn: the second call is a call of its own (not
    // a duplicate refused), and both results carry the id the server gave.
    let tool_call_ids = |body: &Value| -> Vec<Value> {
        body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["tool_call_id"].clone())
            .collect()
    };
    let answered = move |count: usize| {
        move |body: &Value| {
            let ids = tool_call_ids(body);
            (ids == vec![json!("call_R3use1t"); count])
                .then_some(())
                .ok_or_else(|| format!("tool_call_ids {ids:?}"))
        }
    };
    let script = vec![
        Exchange::new(chat_expect(), Reply::Sse(chat_call("call_R3use1t", "a"))),
        Exchange::new(
            chat_expect().check("answers the first call", answered(1)),
            Reply::Sse(chat_call("call_R3use1t", "b")),
        ),
        Exchange::new(
            chat_expect().check("answers both calls", answered(2)),
            Reply::Sse(openai_chat_answer("Done.", 10, 2)),
        ),
    ];
    let server = ReplayServer::start(script).await;
    let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
    let (runtime, runs) = runtime("search", "", schema, json!({"hits": 1}));
    let report = run(runtime, chat(&server), "Search twice.").await;
    assert_no_problems(&server);
    assert_eq!(report.end, RunEnd::Answered);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    let calls: Vec<&tool_core::ToolCall> = report
        .transcript
        .iter()
        .filter_map(|m| match m {
            Message::Assistant { calls, .. } => calls.first(),
            _ => None,
        })
        .collect();
    assert_eq!(calls[0].call_id(), "call_R3use1t");
    assert_ne!(calls[1].call_id(), "call_R3use1t");
    assert_eq!(calls[1].provider_call_id(), Some("call_R3use1t"));
}
