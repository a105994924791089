//! Provider adapters: every recorded provider fixture parsed into calls (ids, names, arguments,
//! order asserted), outcomes encoded back, the example tools lowered to every target with
//! their expected losses, OpenAI strict nulls undone, provider limits, and name maps.
//!
//! The fixtures are real provider recordings vendored in `tests/data/providers` (their sources
//! and licences are in `tests/data/README.md`); a missing one fails its test. YAML cassettes are
//! read with `serde_norway` (a maintained fork of `serde_yaml`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use examples::{CreateInvoice, GetWeather, SearchFlights};
use proptest::prelude::*;
use serde_json::{Value, json};
use tool_core::model::{Message, Provider, ProviderState, ToolResult, Turn};
use tool_core::providers::{
    self, AdvertiseError, LimitError, LossKind, LowerError, NameMap, NameRule, RequestError,
    RequestOptions, StreamError, Target, ToolSpec, advertise, anthropic, gemini, json_lines,
    openai_chat, openai_responses, sse_events,
};
use tool_core::{CallArguments, ToolCall};
use tool_core::{
    Code, Context, Outcome, Registry, Runtime, Tool, ToolDef,
    registry::{DynamicTool, ToolError},
};

fn fixtures() -> PathBuf {
    tests::data("providers")
}

#[track_caller]
fn read(root: &Path, file: &str) -> String {
    let path = root.join(file);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read fixture {}: {error}", path.display()))
}

/// The JSON data of each SSE event, `[DONE]` left out.
fn sse_json(body: &str) -> Vec<Value> {
    sse_events(body)
        .into_iter()
        .filter_map(|event| event.json())
        .map(Result::unwrap)
        .collect()
}

fn cassette(root: &Path, file: &str) -> Value {
    serde_norway::from_str(&read(root, file)).unwrap()
}

fn ids(calls: &[ToolCall]) -> Vec<&str> {
    calls.iter().map(ToolCall::call_id).collect()
}

/// An id made by the library: `call_` and 96 random bits as hex.
fn is_made_here(id: &str) -> bool {
    id.strip_prefix("call_")
        .is_some_and(|hex| hex.len() == 24 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn names(calls: &[ToolCall]) -> Vec<&str> {
    calls.iter().map(ToolCall::name).collect()
}

fn arguments(calls: &[ToolCall]) -> Vec<Value> {
    calls.iter().map(|c| c.arguments_value().unwrap()).collect()
}

fn none() -> NameMap {
    NameMap::default()
}

// ---- OpenAI Chat --------------------------------------------------------------------------

#[test]
fn openai_chat_parallel_stream_yields_two_calls_in_index_order() {
    let root = fixtures();
    let chunks = sse_json(&read(&root, "openai-chat/parallel-tool-calls.sse.txt"));
    assert_eq!(chunks.len(), 25);
    let calls = openai_chat::Stream::collect(&none(), &chunks).unwrap();
    assert_eq!(
        ids(&calls),
        [
            "call_JMW1whyEaYG438VE1OIflxA2",
            "call_DNYTawLBoN8fj3KN6qU9N1Ou"
        ]
    );
    assert_eq!(names(&calls), ["GetWeatherArgs", "get_stock_price"]);
    assert_eq!(
        arguments(&calls),
        [
            json!({"city": "Edinburgh", "country": "GB", "units": "c"}),
            json!({"ticker": "AAPL", "exchange": "NASDAQ"})
        ]
    );
    assert!(matches!(calls[0].raw_arguments(), CallArguments::Text(_)));
}

#[test]
fn openai_chat_stream_yields_nothing_before_finish_reason() {
    let root = fixtures();
    let chunks = sse_json(&read(&root, "openai-chat/parallel-tool-calls.sse.txt"));
    let finish = chunks
        .iter()
        .position(|c| c["choices"][0]["finish_reason"] == "tool_calls")
        .unwrap();
    let mut stream = openai_chat::Stream::new(&none());
    for chunk in &chunks[..finish] {
        // The first call's arguments are complete JSON long before this point.
        assert!(stream.push(chunk).unwrap().is_empty());
    }
    assert_eq!(stream.push(&chunks[finish]).unwrap().len(), 2);
    // A stream cut before finish_reason yields nothing and says so.
    let mut cut = openai_chat::Stream::new(&none());
    for chunk in &chunks[..finish] {
        cut.push(chunk).unwrap();
    }
    let error = cut.finish().unwrap_err();
    assert!(
        matches!(&error, StreamError::Truncated { call_id, .. } if call_id == "call_JMW1whyEaYG438VE1OIflxA2"),
        "{error}"
    );
}

#[test]
fn openai_chat_stream_over_the_byte_cap_is_input_too_large() {
    let root = fixtures();
    let chunks = sse_json(&read(&root, "openai-chat/parallel-tool-calls.sse.txt"));
    let mut stream = openai_chat::Stream::new(&none()).max_call_bytes(16);
    let error = chunks.iter().find_map(|c| stream.push(c).err()).unwrap();
    assert_eq!(error.code(), Some(Code::InputTooLarge));
    assert!(matches!(error, StreamError::TooLarge { limit: 16, .. }));
}

#[test]
fn openai_chat_strict_and_non_strict_streams() {
    let root = fixtures();
    let strict = openai_chat::Stream::collect(
        &none(),
        &sse_json(&read(&root, "openai-chat/strict-tool.sse.txt")),
    )
    .unwrap();
    assert_eq!(ids(&strict), ["call_CTf1nWJLqSeRgDqaCG27xZ74"]);
    assert_eq!(names(&strict), ["get_weather"]);
    assert_eq!(
        arguments(&strict),
        [json!({"city": "San Francisco", "state": "CA"})]
    );
    // The arguments validate against the strict schema the request used.
    let schema = json!({
        "type": "object",
        "properties": { "city": { "type": "string" }, "state": { "type": "string" } },
        "required": ["city", "state"],
        "additionalProperties": false
    });
    let runtime = runtime_with(&[("get_weather", schema)]);
    runtime
        .check(strict[0].name(), strict[0].arguments())
        .unwrap();

    let loose = openai_chat::Stream::collect(
        &none(),
        &sse_json(&read(&root, "openai-chat/non-strict-tool.sse.txt")),
    )
    .unwrap();
    assert_eq!(ids(&loose), ["call_4XzlGBLtUe9dy3GVNV4jhq7h"]);
    assert_eq!(arguments(&loose), [json!({"city": "New York City"})]);
}

#[test]
fn openai_chat_whole_response() {
    let body = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
        "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "docs__search", "arguments": "{\"q\":\"x\"}"}},
            {"id": "call_b", "type": "function", "function": {"name": "other", "arguments": ""}}
        ]}}], "usage": {"total_tokens": 1}});
    let names = NameMap::new(NameRule::OpenAi, ["docs.search"]).unwrap();
    let calls = openai_chat::parse_response(&body, &names).unwrap();
    assert_eq!(ids(&calls), ["call_a", "call_b"]);
    assert_eq!(self::names(&calls), ["docs.search", "other"]); // unknown names pass through
    assert_eq!(calls[0].provider_name(), "docs__search");
    assert_eq!(arguments(&calls)[1], json!({}));
}

// ---- OpenAI Responses ---------------------------------------------------------------------

#[test]
fn openai_responses_stream_uses_call_id_and_done_arguments() {
    let root = fixtures();
    let events = json_lines(&read(
        &root,
        "openai-responses/single-strict-call-gpt-5.1.chunks.txt",
    ))
    .unwrap();
    assert_eq!(events.len(), 12);
    let joined: String = events
        .iter()
        .filter(|e| e["type"] == "response.function_call_arguments.delta")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    let done = events
        .iter()
        .find(|e| e["type"] == "response.function_call_arguments.done")
        .unwrap();
    assert_eq!(joined, done["arguments"]);
    let calls = openai_responses::Stream::collect(&none(), &events).unwrap();
    assert_eq!(ids(&calls), ["call_2FQdm3Br7Qb35YUBSkDR7kue"]);
    assert_eq!(names(&calls), ["get_weather"]);
    assert_eq!(arguments(&calls), [json!({"city": "Beijing"})]);
}

/// With several calls open when a Responses stream ends, the error names the one opened
/// first, every time (it was an arbitrary one of them, the first a hash map gave).
#[test]
fn openai_responses_truncation_names_the_first_open_call() {
    let added = |i: usize| {
        json!({
            "type": "response.output_item.added",
            "output_index": i,
            "item": {"type": "function_call", "id": format!("fc_{i}"), "call_id": format!("call_{i}"), "name": "get_weather", "arguments": ""}
        })
    };
    let events: Vec<Value> = (0..8).map(added).collect();
    for ending in ["finish", "response.incomplete"] {
        let mut stream = openai_responses::Stream::new(&none());
        for event in &events {
            assert!(stream.push(event).unwrap().is_empty());
        }
        let error = match ending {
            "finish" => stream.finish().unwrap_err(),
            _ => stream
                .push(&json!({"type": "response.incomplete"}))
                .unwrap_err(),
        };
        assert!(
            matches!(&error, StreamError::Truncated { call_id, .. } if call_id == "call_0"),
            "{ending}: {error:?}"
        );
    }
}

#[tokio::test]
async fn openai_responses_parallel_calls_then_outputs_in_call_order() {
    let root = fixtures();
    let cassette = cassette(
        &root,
        "openai-responses/parallel-calls-then-outputs.cassette.yaml",
    );
    let first = &cassette["interactions"][0]["response"]["parsed_body"];
    let calls = openai_responses::parse_response(first, &none()).unwrap();
    assert_eq!(
        ids(&calls),
        [
            "call_LWVp74L5HaH2KNvgVz9PJsrj",
            "call_YnRAWeTyxI91m5uNa5bxXwVO"
        ]
    );
    assert_eq!(names(&calls), ["get_location", "get_location"]);
    assert_eq!(
        arguments(&calls),
        [json!({"loc_name": "Londos"}), json!({"loc_name": "London"})]
    );

    async fn locate(args: Value, _: &Context) -> Result<Value, ToolError> {
        match args["loc_name"].as_str() {
            Some("London") => Ok(json!({"lat": 51, "lng": 0})),
            _ => Err(ToolError::public(
                "Wrong location, I only know about \"London\".",
            )),
        }
    }
    let schema = first["tools"][0]["parameters"].clone();
    let mut registry = Registry::new();
    registry
        .register(ToolDef::dynamic(
            DynamicTool::new("get_location", "", schema),
            locate,
        ))
        .unwrap();
    let runtime = Runtime::new(registry);
    let outcomes = invoke_all(&runtime, &calls).await;
    let items = openai_responses::output_items(&calls, &outcomes).unwrap();

    // The recorded follow-up answers the same call ids in the same order.
    let recorded: Vec<&Value> = cassette["interactions"][1]["request"]["parsed_body"]["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item["type"] == "function_call_output")
        .collect();
    let call_ids = |items: &[&Value]| {
        items
            .iter()
            .map(|i| i["call_id"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        call_ids(&items.iter().collect::<Vec<_>>()),
        call_ids(&recorded)
    );
    assert!(
        items[0]["output"]
            .as_str()
            .unwrap()
            .starts_with("execution_failed: Wrong location")
    );
    let london: Value = serde_json::from_str(items[1]["output"].as_str().unwrap()).unwrap();
    let recorded_london: Value =
        serde_json::from_str(recorded[1]["output"].as_str().unwrap()).unwrap();
    assert_eq!(london, recorded_london);
    // The second response is text only.
    let second = &cassette["interactions"][1]["response"]["parsed_body"];
    assert!(
        openai_responses::parse_response(second, &none())
            .unwrap()
            .is_empty()
    );
}

#[test]
fn openai_responses_streamed_call_then_text() {
    let root = fixtures();
    let cassette = cassette(
        &root,
        "openai-responses/streamed-call-then-text.cassette.yaml",
    );
    let body = |i: usize| {
        cassette["interactions"][i]["response"]["body"]["string"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    for i in 0..2 {
        for event in sse_events(&body(i)) {
            let data: Value = serde_json::from_str(&event.data).unwrap();
            assert_eq!(event.event.as_deref(), data["type"].as_str());
        }
    }
    let calls = openai_responses::Stream::collect(&none(), &sse_json(&body(0))).unwrap();
    assert_eq!(ids(&calls), ["call_kL0PCQV7M2WMoVX8V8OtYSAL"]);
    assert_eq!(names(&calls), ["get_capital"]);
    assert_eq!(arguments(&calls), [json!({"country": "France"})]);

    let mut stream = openai_responses::Stream::new(&none());
    for event in sse_json(&body(1)) {
        assert!(stream.push(&event).unwrap().is_empty());
    }
    assert_eq!(stream.text(), "The capital of France is Paris.");
    stream.finish().unwrap();
}

#[tokio::test]
async fn openai_responses_parallel_wrapper_is_never_dispatched() {
    let root = fixtures();
    // This hand-written file is not all valid JSON: its `response.created` and
    // `response.completed` lines each lack a closing brace. Those lines are skipped (and
    // counted), as a client would drop events it cannot read.
    let text = read(
        &root,
        "openai-responses/synthetic-parallel-wrapper.chunks.txt",
    );
    let (events, broken): (Vec<_>, Vec<_>) = text
        .lines()
        .map(serde_json::from_str::<Value>)
        .partition(Result::is_ok);
    assert_eq!(broken.len(), 2);
    let events: Vec<Value> = events.into_iter().map(Result::unwrap).collect();
    let calls = openai_responses::Stream::collect(&none(), &events).unwrap();
    assert_eq!(ids(&calls), ["call_parallel"]);
    assert_eq!(names(&calls), ["parallel"]);
    let open = json!({"type": "object"});
    let runtime = runtime_with(&[("weather", open.clone()), ("cityAttractions", open)]);
    let outcome = runtime
        .invoke(
            calls[0].call_id(),
            calls[0].name(),
            calls[0].arguments(),
            &Context::builder("t").build(),
        )
        .await;
    assert_eq!(outcome.code(), Some(Code::UnknownTool));
}

#[test]
fn openai_responses_nested_defs_are_refused_and_root_defs_inlined() {
    let root = fixtures();
    let error: Value = serde_json::from_str(&read(
        &root,
        "openai-responses/error-ref-to-missing-root-defs.json",
    ))
    .unwrap();
    assert_eq!(error["error"]["code"], "invalid_json_schema");
    assert_eq!(error["error"]["param"], "text.format.schema");
    let success: Value =
        serde_json::from_str(&read(&root, "openai-responses/success-root-defs.json")).unwrap();
    let schema = success["text"]["format"]["schema"].clone();
    assert!(schema["$defs"]["Shared"].is_object());

    // With root $defs the lowering resolves the reference and nothing nested reaches OpenAI.
    let advertised = advertise(
        [ToolSpec::new("respond", "", &schema)],
        Target::OpenAiResponsesStrict,
    )
    .unwrap();
    let lowered = advertised.tools()[0].schema().to_string();
    assert!(
        !lowered.contains("$ref") && !lowered.contains("$defs"),
        "{lowered}"
    );
    let output: Value =
        serde_json::from_str(success["output"][0]["content"][0]["text"].as_str().unwrap()).unwrap();
    runtime_with(&[("respond", schema.clone())])
        .check("respond", &output)
        .unwrap();

    // The schema of the 400: $defs nested under items, the $ref pointing at the root. Refused
    // here, naming the same reference the API named.
    let mut nested = schema.clone();
    let defs = nested.as_object_mut().unwrap().remove("$defs").unwrap();
    nested["properties"]["elements"]["items"]["$defs"] = defs;
    let refused = advertise(
        [ToolSpec::new("respond", "", &nested)],
        Target::OpenAiResponsesStrict,
    )
    .unwrap_err();
    let AdvertiseError::Refused {
        error: LowerError::UnresolvedRef { reference, .. },
        ..
    } = refused
    else {
        panic!("{refused}")
    };
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&reference)
    );
}

// ---- Anthropic ----------------------------------------------------------------------------

#[test]
fn anthropic_text_then_tool_use() {
    let root = fixtures();
    let events = sse_json(&read(&root, "anthropic/text-then-tool-use.sse.txt"));
    let mut stream = anthropic::Stream::new(&none());
    let mut calls = Vec::new();
    for event in &events {
        let done = stream.push(event).unwrap();
        if !done.is_empty() {
            assert_eq!(event["type"], "content_block_stop"); // only when the block stops
        }
        calls.extend(done);
    }
    assert_eq!(
        stream.text(),
        "I'll check the current weather in Paris for you."
    );
    assert_eq!(stream.stop_reason(), Some("tool_use"));
    stream.finish().unwrap();
    assert_eq!(ids(&calls), ["toolu_01NRLabsLyVHZPKxbKvkfSMn"]);
    assert_eq!(names(&calls), ["get_weather"]);
    assert_eq!(arguments(&calls), [json!({"location": "Paris"})]);
}

#[test]
fn anthropic_truncated_input_is_reported_not_yielded() {
    let root = fixtures();
    let events = sse_json(&read(
        &root,
        "anthropic/truncated-tool-input-max-tokens.sse.txt",
    ));
    let mut stream = anthropic::Stream::new(&none());
    let mut error = None;
    for event in &events {
        match stream.push(event) {
            Ok(calls) => assert!(calls.is_empty()),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    let Some(StreamError::Truncated {
        reason,
        call_id,
        name,
        partial,
    }) = error
    else {
        panic!("{error:?}")
    };
    assert_eq!(
        (reason.as_str(), call_id.as_str(), name.as_str()),
        ("max_tokens", "toolu_01EKqbqmZrGRXy18eN7m9kvY", "make_file")
    );
    assert!(
        partial.starts_with("{\"filename\": \"taxes.txt") && partial.ends_with("\"Filing taxes")
    );
}

#[tokio::test]
async fn anthropic_four_parallel_calls_answered_in_one_message() {
    let root = fixtures();
    let cassette = cassette(&root, "anthropic/four-parallel-tool-use.cassette.yaml");
    let response = &cassette["interactions"][0]["response"]["parsed_body"];
    let calls = anthropic::parse_response(response, &none()).unwrap();
    assert_eq!(names(&calls), ["retrieve_entity_info"; 4]);
    assert_eq!(
        arguments(&calls),
        ["Alice", "Bob", "Charlie", "Daisy"].map(|name| json!({"name": name}))
    );
    assert_eq!(ids(&calls).into_iter().collect::<BTreeSet<_>>().len(), 4);

    async fn info(args: Value, _: &Context) -> Result<Value, ToolError> {
        Ok(json!(format!(
            "about {}",
            args["name"].as_str().unwrap_or_default()
        )))
    }
    let schema =
        cassette["interactions"][0]["request"]["parsed_body"]["tools"][0]["input_schema"].clone();
    let mut registry = Registry::new();
    registry
        .register(ToolDef::dynamic(
            DynamicTool::new("retrieve_entity_info", "", schema),
            info,
        ))
        .unwrap();
    let runtime = Runtime::new(registry);
    let mut outcomes = invoke_all(&runtime, &calls).await;
    outcomes.reverse(); // the encoder orders by call, whatever order outcomes come in
    let message = anthropic::tool_results(&calls, &outcomes).unwrap();

    let recorded = &cassette["interactions"][1]["request"]["parsed_body"]["messages"][2];
    assert_eq!(message["role"], recorded["role"]);
    let ids_of = |m: &Value| {
        m["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["tool_use_id"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids_of(&message), ids_of(recorded));
    for block in message["content"].as_array().unwrap() {
        assert_eq!(block["type"], "tool_result");
        assert_eq!(block["is_error"], false);
    }
    assert_eq!(message["content"][3]["content"], "\"about Daisy\"");
    assert!(
        anthropic::parse_response(
            &cassette["interactions"][1]["response"]["parsed_body"],
            &none()
        )
        .unwrap()
        .is_empty()
    );
}

#[test]
fn anthropic_no_args_tool_is_an_empty_object() {
    let root = fixtures();
    let events = json_lines(&read(&root, "anthropic/no-args-tool.chunks.txt")).unwrap();
    let calls = anthropic::Stream::collect(&none(), &events).unwrap();
    assert_eq!(ids(&calls), ["toolu_01QE1WLsSVp5hy5Q3GmGTmjP"]);
    assert_eq!(names(&calls), ["updateIssueList"]);
    assert_eq!(calls[0].raw_arguments(), &CallArguments::Json(json!({})));
}

#[test]
fn anthropic_root_union_gets_an_object_type() {
    let root = fixtures();
    let error: Value =
        serde_json::from_str(&read(&root, "anthropic/error-root-union-schema.json")).unwrap();
    assert_eq!(error["error"]["type"], "invalid_request_error");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("tools.0.custom.input_schema.type")
    );
    // The 400's cause cannot happen here: every lowering gives the root a type.
    let union = json!({"anyOf": [
        {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    ]});
    for target in [Target::Anthropic, Target::AnthropicStrict] {
        let advertised = advertise([ToolSpec::new("find", "", &union)], target).unwrap();
        assert_eq!(
            advertised.to_json()[0]["input_schema"]["type"],
            "object",
            "{target}"
        );
    }
    let not_object = json!({"type": "string"});
    let refused = advertise([ToolSpec::new("x", "", &not_object)], Target::Anthropic).unwrap_err();
    assert!(matches!(
        refused,
        AdvertiseError::Refused {
            error: LowerError::RootNotObject { .. },
            ..
        }
    ));
}

#[test]
fn anthropic_spliced_message_start_is_a_protocol_error() {
    let root = fixtures();
    let events = json_lines(&read(
        &root,
        "anthropic/synthetic-spliced-message-start.chunks.txt",
    ))
    .unwrap();
    let mut stream = anthropic::Stream::new(&none());
    let mut yielded = Vec::new();
    let error = events.iter().find_map(|event| match stream.push(event) {
        Ok(calls) => {
            yielded.extend(calls);
            None
        }
        Err(error) => Some(error),
    });
    assert!(
        matches!(error, Some(StreamError::Protocol { .. })),
        "{error:?}"
    );
    assert!(yielded.is_empty());
}

// ---- Gemini -------------------------------------------------------------------------------

#[test]
fn gemini_vertex_partial_args_two_calls() {
    let root = fixtures();
    let chunks = json_lines(&read(
        &root,
        "gemini/vertex-partial-args-two-calls.chunks.txt",
    ))
    .unwrap();
    let calls = gemini::Stream::collect(&none(), &chunks).unwrap();
    assert_eq!(names(&calls), ["getWeather", "getWeather"]);
    assert_eq!(
        arguments(&calls),
        [
            json!({"location": "Boston"}),
            json!({"location": "San Francisco"})
        ]
    );
    assert!(
        calls[0]
            .thought_signature()
            .is_some_and(|s| s.starts_with("CiMBjz1r"))
    );
    assert_eq!(calls[1].thought_signature(), None);
    assert!(calls.iter().all(|c| !c.has_provider_id()));
    assert!(ids(&calls).iter().all(|id| is_made_here(id)), "{calls:?}");
    assert_ne!(calls[0].call_id(), calls[1].call_id());
}

#[test]
fn gemini_vertex_no_args_then_partial_args() {
    let root = fixtures();
    let chunks = json_lines(&read(
        &root,
        "gemini/vertex-no-args-then-partial-args.chunks.txt",
    ))
    .unwrap();
    let mut stream = gemini::Stream::new(&none());
    let mut calls = Vec::new();
    for chunk in &chunks {
        calls.extend(stream.push(chunk).unwrap());
    }
    assert_eq!(stream.text(), ""); // the thought part is not answer text
    stream.finish().unwrap();
    assert_eq!(
        names(&calls),
        ["read_theme", "read_screen", "read_screen", "read_screen"]
    );
    assert_eq!(
        arguments(&calls),
        [
            json!({}),
            json!({"id": "A"}),
            json!({"id": "B"}),
            json!({"id": "C"})
        ]
    );
    assert!(calls[0].thought_signature().is_some());
}

#[test]
fn gemini_whole_call_with_signature() {
    let root = fixtures();
    let chunks = json_lines(&read(&root, "gemini/whole-call-with-signature.chunks.txt")).unwrap();
    let calls = gemini::Stream::collect(&none(), &chunks).unwrap();
    assert_eq!(names(&calls), ["weather"]);
    assert_eq!(arguments(&calls), [json!({"location": "San Francisco"})]);
    assert!(is_made_here(calls[0].call_id()), "{calls:?}");
    assert_eq!(calls[0].provider_call_id(), None);
    assert!(
        calls[0]
            .thought_signature()
            .is_some_and(|s| s.starts_with("EqUCCqIC"))
    );
    // The same chunk read as a whole response gives the same call, under another id made here.
    let whole = gemini::parse_response(&chunks[0], &none()).unwrap();
    assert_eq!(arguments(&whole), arguments(&calls));
    assert_eq!(whole[0].thought_signature(), calls[0].thought_signature());
    assert!(is_made_here(whole[0].call_id()));
    assert_ne!(whole[0].call_id(), calls[0].call_id());
}

#[tokio::test]
async fn gemini_results_carry_ids_only_when_the_call_had_one() {
    let calls = gemini::parse_response(
        &json!({"candidates": [{"content": {"parts": [
            {"functionCall": {"id": "fc_1", "name": "admin.lookup", "args": {"q": "a"}}},
            {"functionCall": {"name": "admin.lookup", "args": {"q": 1}}}
        ]}}]}),
        &NameMap::new(NameRule::Gemini, ["admin.lookup"]).unwrap(),
    )
    .unwrap();
    let schema =
        json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
    let runtime = runtime_with(&[("admin.lookup", schema)]);
    let outcomes = invoke_all(&runtime, &calls).await;
    let turn = gemini::function_responses(&calls, &outcomes).unwrap();
    let parts = turn["parts"].as_array().unwrap();
    assert_eq!(parts[0]["functionResponse"]["id"], "fc_1");
    assert_eq!(
        parts[0]["functionResponse"]["response"]["output"],
        json!({"echo": {"q": "a"}})
    );
    assert!(parts[1]["functionResponse"].get("id").is_none());
    assert_eq!(parts[1]["functionResponse"]["name"], "admin.lookup");
    assert_eq!(
        parts[1]["functionResponse"]["response"]["error"]["code"],
        "invalid_arguments"
    );
}

// ---- The next request from a transcript -----------------------------------------------------

fn result(call_id: &str, tool: &str, code: Option<Code>, content: &str) -> Message {
    Message::Tool(ToolResult {
        call_id: call_id.to_owned(),
        tool: tool.to_owned(),
        code,
        content: content.to_owned(),
        repaired_arguments: None,
        provenance: Default::default(),
    })
}

fn user(text: &str) -> Message {
    Message::User {
        text: text.to_owned(),
    }
}

fn assistant(turn: Turn) -> Message {
    Message::Assistant {
        text: turn.text,
        calls: turn.calls,
        usage: turn.usage,
        provider: turn.provider,
    }
}

/// The tools of a recorded request, registered and advertised to `target`.
fn advertised(tools: &[(&str, &str, Value)], target: Target) -> providers::Advertised {
    let mut registry = Registry::new();
    for (name, description, schema) in tools {
        registry
            .register(ToolDef::dynamic(
                DynamicTool::new(*name, *description, schema.clone()),
                echo,
            ))
            .unwrap();
    }
    advertise(registry.tools(), target).unwrap()
}

/// `options` with every top-level field of `recorded` except those the builder writes.
fn settings_of(recorded: &Value, written: &[&str]) -> RequestOptions {
    let mut options = RequestOptions::new();
    for (key, value) in recorded.as_object().unwrap() {
        if !written.contains(&key.as_str()) {
            options = options.setting(key.clone(), value.clone());
        }
    }
    options
}

/// Removes the field at `pointer` (its parent must exist): a difference the test names.
#[track_caller]
fn remove(value: &mut Value, pointer: &str) -> Value {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    value
        .pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .and_then(|object| object.remove(key))
        .unwrap_or_else(|| panic!("{pointer} is not in the recording"))
}

#[test]
fn openai_responses_events_named_by_output_index_only_find_their_call() {
    let root = fixtures();
    let events = json_lines(&read(
        &root,
        "openai-responses/single-strict-call-gpt-5.1.chunks.txt",
    ))
    .unwrap();
    // The recorded stream with `item_id` taken out of the argument events: they name their
    // call by `output_index` alone, as the API reference allows.
    let by_index: Vec<Value> = events
        .iter()
        .cloned()
        .map(|mut event| {
            if event["type"]
                .as_str()
                .is_some_and(|t| t.starts_with("response.function_call_arguments."))
            {
                event.as_object_mut().unwrap().remove("item_id");
            }
            event
        })
        .collect();
    let calls = openai_responses::Stream::collect(&none(), &by_index).unwrap();
    assert_eq!(ids(&calls), ["call_2FQdm3Br7Qb35YUBSkDR7kue"]);
    assert_eq!(arguments(&calls), [json!({"city": "Beijing"})]);

    // Named by neither, or by an id and an index of two different items: an error, not a guess.
    let added = |id: &str, index: u64| {
        json!({"type": "response.output_item.added", "output_index": index,
               "item": {"type": "function_call", "id": id, "call_id": format!("call_{id}"), "name": "f", "arguments": ""}})
    };
    let delta = |fields: Value| {
        let mut event = json!({"type": "response.function_call_arguments.delta", "delta": "{"});
        event
            .as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        event
    };
    for (fields, expected) in [
        (json!({}), "neither"),
        (
            json!({"item_id": "fc_a", "output_index": 1}),
            "two different items",
        ),
        (
            json!({"item_id": "fc_b", "output_index": 0}),
            "two different items",
        ),
        (
            json!({"item_id": "fc_c", "output_index": 0}),
            "two different items",
        ),
    ] {
        let mut stream = openai_responses::Stream::new(&none());
        stream.push(&added("fc_a", 0)).unwrap();
        stream.push(&added("fc_b", 1)).unwrap();
        let error = stream.push(&delta(fields.clone())).unwrap_err();
        assert!(
            matches!(&error, StreamError::Protocol { reason } if reason.contains(expected)),
            "{fields}: {error:?}"
        );
    }
    // The matching pair, and each key alone, find the call.
    for fields in [
        json!({"item_id": "fc_b", "output_index": 1}),
        json!({"item_id": "fc_b"}),
        json!({"output_index": 1}),
    ] {
        let mut stream = openai_responses::Stream::new(&none());
        stream.push(&added("fc_a", 0)).unwrap();
        stream.push(&added("fc_b", 1)).unwrap();
        stream.push(&delta(fields.clone())).unwrap();
        let mut done = delta(fields);
        done["type"] = json!("response.function_call_arguments.done");
        done["arguments"] = json!("{\"x\":1}");
        assert_eq!(ids(&stream.push(&done).unwrap()), ["call_fc_b"]);
    }
}

#[test]
fn anthropic_next_request_equals_the_recorded_one() {
    let root = fixtures();
    let cassette = cassette(&root, "anthropic/four-parallel-tool-use.cassette.yaml");
    let first = &cassette["interactions"][0];
    let recorded = &cassette["interactions"][1]["request"]["parsed_body"];
    let tool = &first["request"]["parsed_body"]["tools"][0];
    let tools = advertised(
        &[(
            "retrieve_entity_info",
            tool["description"].as_str().unwrap(),
            tool["input_schema"].clone(),
        )],
        Target::Anthropic,
    );
    let turn = anthropic::parse_turn(&first["response"]["parsed_body"], &none()).unwrap();
    assert_eq!(turn.calls.len(), 4);
    assert_eq!(
        (turn.usage.input_tokens, turn.usage.output_tokens),
        (423, 202)
    );
    let results = &recorded["messages"][2]["content"];
    let mut transcript = vec![
        user(
            recorded["messages"][0]["content"][0]["text"]
                .as_str()
                .unwrap(),
        ),
        assistant(turn.clone()),
    ];
    for (call, block) in turn.calls.iter().zip(results.as_array().unwrap()) {
        assert_eq!(block["is_error"], false);
        transcript.push(result(
            call.call_id(),
            call.name(),
            None,
            block["content"].as_str().unwrap(),
        ));
    }
    let options = settings_of(recorded, &["messages", "tools", "system"])
        .system(recorded["system"].as_str().unwrap());
    let body = anthropic::request(&transcript, &tools, &options).unwrap();
    assert_eq!(&body, recorded);

    // Without the provider state, written from the turn's text and calls: the same body, as
    // the recording has no field beyond those.
    transcript[1] = assistant(turn.with_provider(None));
    assert_eq!(
        &anthropic::request(&transcript, &tools, &options).unwrap(),
        recorded
    );
}

#[test]
fn anthropic_streamed_turn_goes_back_with_its_caller() {
    let root = fixtures();
    let events = sse_json(&read(&root, "anthropic/text-then-tool-use.sse.txt"));
    let mut stream = anthropic::Stream::new(&none());
    let mut calls = Vec::new();
    for event in &events {
        calls.extend(stream.push(event).unwrap());
    }
    let state = stream.provider_state().unwrap();
    let expected = json!([
        {"type": "text", "text": "I'll check the current weather in Paris for you."},
        {"type": "tool_use", "id": "toolu_01NRLabsLyVHZPKxbKvkfSMn", "name": "get_weather",
         "caller": {"type": "direct"}, "input": {"location": "Paris"}}
    ]);
    assert_eq!(state.content(), &expected);
    let turn = Turn::calls(calls.clone()).with_provider(Some(state));
    let transcript = [
        user("What's the weather in Paris?"),
        assistant(turn),
        result(calls[0].call_id(), "get_weather", None, "{\"celsius\":21}"),
    ];
    let tools = advertised(
        &[("get_weather", "", json!({"type": "object"}))],
        Target::Anthropic,
    );
    let body = anthropic::request(&transcript, &tools, &RequestOptions::new()).unwrap();
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": expected})
    );
    // The turn written from its calls alone loses `caller` and the text, which is why the
    // state is kept.
    let bare = [
        user("What's the weather in Paris?"),
        assistant(Turn::calls(calls.clone())),
        result(calls[0].call_id(), "get_weather", None, "{\"celsius\":21}"),
    ];
    let bare = anthropic::request(&bare, &tools, &RequestOptions::new()).unwrap();
    assert!(bare["messages"][1]["content"][0].get("caller").is_none());
}

#[test]
fn openai_responses_next_request_equals_the_recorded_one() {
    let root = fixtures();
    let cassette = cassette(
        &root,
        "openai-responses/parallel-calls-then-outputs.cassette.yaml",
    );
    let first = &cassette["interactions"][0];
    let mut recorded = cassette["interactions"][1]["request"]["parsed_body"].clone();
    let tool = &first["request"]["parsed_body"]["tools"][0];
    let tools = advertised(
        &[("get_location", "", tool["parameters"].clone())],
        Target::OpenAiResponsesStrict,
    );
    let response = &first["response"]["parsed_body"];
    let turn = openai_responses::parse_turn(response, &none()).unwrap();
    let input = recorded["input"].as_array().unwrap().clone();
    // The recording answers the first call with a retry prompt, the second with its output.
    let failed = input[4]["output"].as_str().unwrap();
    let transcript = |turn: Turn| {
        vec![
            user(input[0]["content"].as_str().unwrap()),
            assistant(turn.clone()),
            result(
                turn.calls[0].call_id(),
                "get_location",
                Some(Code::ExecutionFailed),
                failed,
            ),
            result(
                turn.calls[1].call_id(),
                "get_location",
                None,
                input[5]["output"].as_str().unwrap(),
            ),
        ]
    };
    let options = settings_of(&recorded, &["input", "tools", "instructions"])
        .system(recorded["instructions"].as_str().unwrap());

    // Differences the recording's client makes, not the API: it sends an empty assistant
    // message for a turn without text (kept here as a turn whose text is empty), writes a
    // failure as its own retry text where this builder writes `code: message`, and sends an
    // empty `description`, which this crate leaves out.
    recorded["input"][4]["output"] = json!(format!("execution_failed: {failed}"));
    remove(&mut recorded, "/tools/0/description");
    let neutral = Turn {
        text: Some(String::new()),
        ..turn.clone().with_provider(None)
    };
    let body = openai_responses::request(&transcript(neutral), &tools, &options).unwrap();
    assert_eq!(body, recorded);

    // With the provider state, the output items go back as the API gave them (their `id` and
    // `status` included), in place of the empty message and the bare calls.
    let body = openai_responses::request(&transcript(turn), &tools, &options).unwrap();
    let mut expected = recorded.clone();
    let items = expected["input"].as_array_mut().unwrap();
    items.splice(1..4, response["output"].as_array().unwrap().iter().cloned());
    assert_eq!(body, expected);
}

#[test]
fn openai_responses_reasoning_goes_back_from_output_item_done() {
    let reasoning_added = json!({"id": "rs_1", "type": "reasoning", "summary": []});
    let reasoning_done = json!({"id": "rs_1", "type": "reasoning", "summary": [],
                                "encrypted_content": "gAAAAABo-done-copy"});
    let call = json!({"id": "fc_1", "type": "function_call", "status": "completed",
                      "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"});
    let events = [
        json!({"type": "response.output_item.added", "output_index": 0, "item": reasoning_added}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning_done}),
        json!({"type": "response.output_item.added", "output_index": 1,
               "item": {"id": "fc_1", "type": "function_call", "status": "in_progress",
                        "call_id": "call_1", "name": "get_weather", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 1, "delta": "{\"city\":\"Paris\"}"}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": call}),
    ];
    let mut stream = openai_responses::Stream::new(&none());
    let mut calls = Vec::new();
    for event in &events {
        calls.extend(stream.push(event).unwrap());
    }
    let state = stream.provider_state().unwrap();
    assert_eq!(state.content(), &json!([reasoning_done, call]));
    // `call_1` looks positional: the call runs under an id made here, and its result goes
    // back under `call_1`.
    let call_id = calls[0].call_id().to_owned();
    assert_ne!(call_id, "call_1");
    let transcript = [
        user("Weather in Paris?"),
        assistant(Turn::calls(calls).with_provider(Some(state))),
        result(&call_id, "get_weather", None, "{\"celsius\":21}"),
    ];
    let tools = advertised(
        &[("get_weather", "", json!({"type": "object"}))],
        Target::OpenAiResponses,
    );
    let options = RequestOptions::new().setting("store", json!(false));
    let body = openai_responses::request(&transcript, &tools, &options).unwrap();
    assert_eq!(
        body["input"],
        json!([
            {"role": "user", "content": "Weather in Paris?"},
            reasoning_done,
            call,
            {"type": "function_call_output", "call_id": "call_1", "output": "{\"celsius\":21}"}
        ])
    );
}

#[test]
fn openai_chat_next_request_equals_the_recorded_one() {
    let root = fixtures();
    let cassette = cassette(&root, "openai-chat/call-then-answer.cassette.yaml");
    let first = &cassette["interactions"][0];
    let mut recorded = cassette["interactions"][1]["request"]["parsed_body"].clone();
    let function = &first["request"]["parsed_body"]["tools"][0]["function"];
    let tools = advertised(
        &[("get_temperature", "", function["parameters"].clone())],
        Target::OpenAiChatStrict,
    );
    let turn = openai_chat::parse_turn(&first["response"]["parsed_body"], &none()).unwrap();
    assert_eq!((turn.text.as_deref(), turn.provider.as_ref()), (None, None));
    let messages = recorded["messages"].as_array().unwrap().clone();
    let transcript = [
        user(messages[1]["content"].as_str().unwrap()),
        assistant(turn.clone()),
        result(
            turn.calls[0].call_id(),
            "get_temperature",
            None,
            messages[3]["content"].as_str().unwrap(),
        ),
    ];
    let options = settings_of(&recorded, &["messages", "tools"])
        .system(messages[0]["content"].as_str().unwrap());
    // The recording's client sends an empty `description`, which this crate leaves out.
    remove(&mut recorded, "/tools/0/function/description");
    let body = openai_chat::request(&transcript, &tools, &options).unwrap();
    assert_eq!(body, recorded);
}

/// `value` with every `thoughtSignature` replaced by its bytes: signatures are compared
/// decoded, never as text.
fn decoded_signatures(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| {
                    let value = match (key.as_str(), value) {
                        ("thoughtSignature", Value::String(text)) => json!(
                            gemini::signature_bytes(text)
                                .unwrap_or_else(|| panic!("not base64: {text}"))
                        ),
                        _ => decoded_signatures(value),
                    };
                    (key.clone(), value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(decoded_signatures).collect()),
        other => other.clone(),
    }
}

#[test]
fn gemini_next_request_carries_each_signature_on_its_part() {
    let root = fixtures();
    let cassette = cassette(
        &root,
        "gemini/streamed-call-with-signature-then-answer.cassette.yaml",
    );
    let first = &cassette["interactions"][0];
    let mut recorded = cassette["interactions"][1]["request"]["parsed_body"].clone();
    let chunks = sse_json(first["response"]["body"]["string"].as_str().unwrap());
    let mut stream = gemini::Stream::new(&none());
    let mut calls = Vec::new();
    for chunk in &chunks {
        calls.extend(stream.push(chunk).unwrap());
    }
    let state = stream.provider_state().unwrap();
    stream.finish().unwrap();
    assert_eq!(names(&calls), ["get_country"]);
    let received = calls[0].thought_signature().unwrap().to_owned();

    let declaration = &first["request"]["parsed_body"]["tools"][0]["functionDeclarations"][0];
    let tools = advertised(
        &[(
            "get_country",
            "",
            declaration["parameters_json_schema"].clone(),
        )],
        Target::GeminiJsonSchema,
    );
    let contents = recorded["contents"].as_array().unwrap().clone();
    let answer = &contents[2]["parts"][0]["functionResponse"]["response"]["return_value"];
    let transcript = [
        user(contents[0]["parts"][0]["text"].as_str().unwrap()),
        assistant(Turn::calls(calls.clone()).with_provider(Some(state))),
        result(calls[0].call_id(), "get_country", None, &answer.to_string()),
    ];
    let options = settings_of(&recorded, &["contents", "tools"]);
    let body = gemini::request(&transcript, &tools, &options).unwrap();

    // The signature goes back as it came, in standard base64; the recording's client re-encoded
    // it as base64url. Different text, the same bytes.
    let sent = body["contents"][1]["parts"][0]["thoughtSignature"]
        .as_str()
        .unwrap();
    assert_eq!(sent, received);
    let recorded_text = contents[1]["parts"][0]["thoughtSignature"]
        .as_str()
        .unwrap();
    assert_ne!(sent, recorded_text);
    assert_eq!(
        gemini::signature_bytes(sent),
        gemini::signature_bytes(recorded_text)
    );

    // Differences the recording's client makes, not the API: it gives the call an id of its
    // own (Gemini sent none, so this builder sends none and Gemini pairs by position), answers
    // with `return_value` where this builder uses Gemini's documented `output`, spells the
    // schema field `parameters_json_schema` and sends an empty `description`.
    remove(&mut recorded, "/contents/1/parts/0/functionCall/id");
    remove(&mut recorded, "/contents/2/parts/0/functionResponse/id");
    let value = remove(
        &mut recorded,
        "/contents/2/parts/0/functionResponse/response/return_value",
    );
    recorded["contents"][2]["parts"][0]["functionResponse"]["response"]["output"] = value;
    let declaration = &mut recorded["tools"][0]["functionDeclarations"][0];
    let schema = remove(declaration, "/parameters_json_schema");
    remove(declaration, "/description");
    declaration["parametersJsonSchema"] = schema;
    assert_eq!(decoded_signatures(&body), decoded_signatures(&recorded));
}

#[test]
fn a_stored_transcript_round_trips_with_its_provider_state() {
    let root = fixtures();
    let cassette = cassette(&root, "anthropic/four-parallel-tool-use.cassette.yaml");
    let turn = anthropic::parse_turn(
        &cassette["interactions"][0]["response"]["parsed_body"],
        &none(),
    )
    .unwrap();
    let mut transcript = vec![user("Who is the youngest?"), assistant(turn.clone())];
    for call in &turn.calls {
        transcript.push(result(call.call_id(), call.name(), None, "\"?\""));
    }
    let saved = serde_json::to_string(&transcript).unwrap();
    let back: Vec<Message> = serde_json::from_str(&saved).unwrap();
    assert_eq!(back, transcript);
    let saved: Value = serde_json::from_str(&saved).unwrap();
    assert_eq!(saved[1]["provider"]["wire"], "anthropic");
    let tools = advertised(
        &[("retrieve_entity_info", "", json!({"type": "object"}))],
        Target::Anthropic,
    );
    let options = RequestOptions::new();
    assert_eq!(
        anthropic::request(&back, &tools, &options).unwrap(),
        anthropic::request(&transcript, &tools, &options).unwrap()
    );
    // A transcript saved before provider state existed still reads, without it.
    let old: Vec<Message> = serde_json::from_value(json!([
        {"role": "user", "text": "hi"},
        {"role": "assistant", "calls": [{"call_id": "c1", "name": "f", "arguments": "{}"}],
         "usage": {"input_tokens": 1, "output_tokens": 2}},
        {"role": "tool", "call_id": "c1", "tool": "f", "code": "ok", "content": "{}"}
    ]))
    .unwrap();
    assert!(matches!(&old[1], Message::Assistant { provider: None, .. }));
    // A request to another provider ignores the state and writes the turn from its calls.
    let chat = openai_chat::request(
        &back,
        &advertised(
            &[("retrieve_entity_info", "", json!({"type": "object"}))],
            Target::OpenAiChat,
        ),
        &options,
    )
    .unwrap();
    assert_eq!(
        chat["messages"][1]["tool_calls"].as_array().unwrap().len(),
        4
    );
}

#[test]
fn anthropic_streamed_thinking_goes_back_with_its_signature() {
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "content": []}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Paris is "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "in France."}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"city\":"}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "\"Paris\"}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        json!({"type": "message_stop"}),
    ];
    let mut stream = anthropic::Stream::new(&none());
    for event in &events {
        stream.push(event).unwrap();
    }
    assert_eq!(
        stream.provider_state().unwrap().content(),
        &json!([
            {"type": "thinking", "thinking": "Paris is in France.", "signature": "EqQBCgIYAhIM"},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
        ])
    );
}

#[test]
fn gemini_whole_response_turn_keeps_its_signed_part() {
    let root = fixtures();
    let chunks = json_lines(&read(&root, "gemini/whole-call-with-signature.chunks.txt")).unwrap();
    let turn = gemini::parse_turn(&chunks[0], &none()).unwrap();
    let parts = &chunks[0]["candidates"][0]["content"]["parts"];
    assert_eq!(turn.provider.as_ref().unwrap().content(), parts);
    let call = turn.calls[0].clone();
    let transcript = [
        user("Weather in San Francisco?"),
        assistant(turn),
        result(call.call_id(), "weather", None, "{\"celsius\":18}"),
    ];
    let tools = advertised(
        &[("weather", "", json!({"type": "object"}))],
        Target::GeminiJsonSchema,
    );
    let body = gemini::request(&transcript, &tools, &RequestOptions::new()).unwrap();
    assert_eq!(
        body["contents"][1],
        json!({"role": "model", "parts": parts})
    );
    assert_eq!(
        body["contents"][2]["parts"][0],
        json!({"functionResponse": {"name": "weather", "response": {"output": {"celsius": 18}}}})
    );
}

#[test]
fn provider_state_is_kept_only_up_to_its_bound() {
    let done = |i: usize| {
        json!({"type": "response.output_item.done", "output_index": i,
               "item": {"type": "message", "id": format!("msg_{i}"), "role": "assistant", "content": []}})
    };
    for (items, kept) in [
        (providers::MAX_STATE_ITEMS, true),
        (providers::MAX_STATE_ITEMS + 1, false),
    ] {
        let mut stream = openai_responses::Stream::new(&none());
        for i in 0..items {
            stream.push(&done(i)).unwrap();
        }
        assert_eq!(stream.provider_state().is_some(), kept, "{items} items");
    }
}

#[test]
fn transcripts_that_cannot_be_sent_are_errors() {
    let tools = advertised(&[("f", "", json!({"type": "object"}))], Target::Anthropic);
    let options = RequestOptions::new();
    let call = |id: &str| ToolCall::new(id, "f", json!({}));
    let turn = Turn::calls([call("c1"), call("c2")]);
    let missing = [
        user("go"),
        assistant(turn.clone()),
        result("c1", "f", None, "1"),
    ];
    assert_eq!(
        anthropic::request(&missing, &tools, &options),
        Err(RequestError::MissingResult {
            call_id: "c2".into()
        })
    );
    let stray = [
        user("go"),
        assistant(turn.clone()),
        result("c1", "f", None, "1"),
        result("c2", "f", None, "2"),
        result("c3", "f", None, "3"),
    ];
    assert_eq!(
        anthropic::request(&stray, &tools, &options),
        Err(RequestError::UnmatchedResult {
            call_id: "c3".into()
        })
    );
    // Results in any order go back in call order, the user's next words after them.
    let answered = [
        user("go"),
        assistant(turn.clone()),
        result("c2", "f", Some(Code::ExecutionFailed), "no"),
        result("c1", "f", None, "1"),
        user("and then?"),
    ];
    let body = anthropic::request(&answered, &tools, &options).unwrap();
    assert_eq!(
        body["messages"][2]["content"],
        json!([
            {"type": "tool_result", "tool_use_id": "c1", "content": "1", "is_error": false},
            {"type": "tool_result", "tool_use_id": "c2", "content": "execution_failed: no", "is_error": true},
            {"type": "text", "text": "and then?"}
        ])
    );
    let chat = advertised(&[("f", "", json!({"type": "object"}))], Target::OpenAiChat);
    assert!(matches!(
        anthropic::request(&answered, &chat, &options),
        Err(RequestError::WrongTarget { .. })
    ));
    assert_eq!(
        anthropic::request(
            &answered,
            &tools,
            &RequestOptions::new().setting("messages", json!([]))
        ),
        Err(RequestError::ReservedSetting {
            key: "messages".into()
        })
    );
    // State naming other calls than the turn's is refused, not sent.
    let state = ProviderState::new(
        Provider::Anthropic,
        json!([{"type": "tool_use", "id": "other", "name": "f", "input": {}}]),
    );
    let stale = [
        user("go"),
        assistant(turn.clone().with_provider(Some(state))),
        result("c1", "f", None, "1"),
        result("c2", "f", None, "2"),
    ];
    assert!(matches!(
        anthropic::request(&stale, &tools, &options),
        Err(RequestError::BadProviderState { turn: 0, .. })
    ));
    // Anthropic and Gemini take arguments as an object.
    let text = [
        user("go"),
        assistant(Turn::calls([ToolCall::new("c1", "f", "not json")])),
        result("c1", "f", None, "1"),
    ];
    assert_eq!(
        anthropic::request(&text, &tools, &options),
        Err(RequestError::ArgumentsNotAnObject {
            call_id: "c1".into()
        })
    );
}

// ---- End to end ---------------------------------------------------------------------------

async fn echo(args: Value, _: &Context) -> Result<Value, ToolError> {
    Ok(json!({ "echo": args }))
}

fn runtime_with(tools: &[(&str, Value)]) -> Runtime {
    let mut registry = Registry::new();
    for (name, schema) in tools {
        registry
            .register(ToolDef::dynamic(
                DynamicTool::new(*name, "", schema.clone()),
                echo,
            ))
            .unwrap();
    }
    Runtime::new(registry)
}

async fn invoke_all(runtime: &Runtime, calls: &[ToolCall]) -> Vec<Outcome> {
    let cx = Context::builder("test").build();
    let mut outcomes = Vec::new();
    for call in calls {
        outcomes.push(
            runtime
                .invoke(call.call_id(), call.name(), call.arguments(), &cx)
                .await,
        );
    }
    outcomes
}

#[tokio::test]
async fn openai_chat_stream_to_runtime_to_tool_messages() {
    let root = fixtures();
    let weather = json!({
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "country": {"type": "string"},
            "units": {"enum": ["c", "f"]}
        },
        "required": ["city", "country"],
        "additionalProperties": false
    });
    let stock = json!({
        "type": "object",
        "properties": {"ticker": {"type": "string"}, "exchange": {"enum": ["NYSE", "NASDAQ"]}},
        "required": ["ticker", "exchange"],
        "additionalProperties": false
    });
    let runtime = runtime_with(&[("GetWeatherArgs", weather), ("get_stock_price", stock)]);
    let advertised = advertise(runtime.registry().tools(), Target::OpenAiChatStrict).unwrap();
    let chunks = sse_json(&read(&root, "openai-chat/parallel-tool-calls.sse.txt"));
    let mut calls = openai_chat::Stream::collect(advertised.names(), &chunks).unwrap();
    for call in &mut calls {
        let schema = runtime
            .registry()
            .get(call.name())
            .unwrap()
            .input_schema()
            .clone();
        assert!(call.remove_strict_nulls(&schema).is_empty());
    }
    let outcomes = invoke_all(&runtime, &calls).await;
    assert!(outcomes.iter().all(Outcome::is_ok));
    let messages = openai_chat::tool_messages(&calls, &outcomes).unwrap();
    assert_eq!(
        messages
            .iter()
            .map(|m| m["tool_call_id"].as_str().unwrap())
            .collect::<Vec<_>>(),
        [
            "call_JMW1whyEaYG438VE1OIflxA2",
            "call_DNYTawLBoN8fj3KN6qU9N1Ou"
        ]
    );
    assert!(messages.iter().all(|m| m["role"] == "tool"));
    let first: Value = serde_json::from_str(messages[0]["content"].as_str().unwrap()).unwrap();
    assert_eq!(first["echo"]["city"], "Edinburgh");

    // A missing outcome, or one for another call, is an error, not a half answer.
    assert!(openai_chat::tool_messages(&calls, &outcomes[..1]).is_err());
    assert!(openai_chat::tool_messages(&calls[..1], &outcomes).is_err());
}

#[tokio::test]
async fn failures_are_sent_with_their_public_message_only() {
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(examples::create_invoice))
        .unwrap();
    let runtime = Runtime::new(registry);
    let call = ToolCall::new(
        "call_1",
        "create_invoice",
        CallArguments::Text(r#"{"customerId":"cus_closed","amount":5,"currency":"EUR"}"#.into()),
    );
    let outcomes = invoke_all(&runtime, std::slice::from_ref(&call)).await;
    let failure = outcomes[0].failure().unwrap();
    assert!(failure.detail().is_some());
    let calls = [call];
    for text in [
        openai_chat::tool_messages(&calls, &outcomes).unwrap()[0]["content"].clone(),
        openai_responses::output_items(&calls, &outcomes).unwrap()[0]["output"].clone(),
        anthropic::tool_results(&calls, &outcomes).unwrap()["content"][0]["content"].clone(),
    ] {
        let text = text.as_str().unwrap().to_owned();
        assert!(
            text.starts_with("execution_failed: that customer account is closed (reference "),
            "{text}"
        );
        assert!(
            !text.contains("billing API"),
            "operator detail leaked: {text}"
        );
    }
    assert_eq!(
        anthropic::tool_results(&calls, &outcomes).unwrap()["content"][0]["is_error"],
        true
    );
}

// ---- Lowering the example tools -----------------------------------------------------------

fn losses(name: &str, schema: &Value, target: Target) -> Vec<(String, String, LossKind)> {
    let advertised = advertise([ToolSpec::new(name, "", schema)], target).unwrap();
    let mut out: Vec<_> = advertised
        .losses()
        .map(|(_, l)| (l.pointer().to_owned(), l.keyword().to_owned(), l.kind()))
        .collect();
    out.sort();
    out
}

fn loss(pointer: &str, keyword: &str, kind: LossKind) -> (String, String, LossKind) {
    (pointer.to_owned(), keyword.to_owned(), kind)
}

#[test]
fn example_tools_lose_exactly_what_each_dialect_cannot_say() {
    use LossKind::*;
    let weather = GetWeather::input_schema();
    let invoice = CreateInvoice::input_schema();
    let flights = SearchFlights::input_schema();
    for target in [
        Target::OpenAiChat,
        Target::OpenAiResponses,
        Target::Anthropic,
    ] {
        for schema in [weather, invoice, flights] {
            assert_eq!(losses("t", schema, target), [], "{target}");
        }
    }
    let city = loss("/properties/city", "minLength", Unenforced);
    let customer = loss("/properties/customerId", "minLength", Unenforced);
    let amount = loss("/properties/amount", "exclusiveMinimum", Unenforced);
    let root_closed = loss("", "additionalProperties", Unenforced);
    assert_eq!(
        losses("get_weather", weather, Target::OpenAiChatStrict),
        vec![city.clone()]
    );
    assert_eq!(
        losses("get_weather", weather, Target::AnthropicStrict),
        vec![city.clone()]
    );
    assert_eq!(
        losses("get_weather", weather, Target::GeminiJsonSchema),
        vec![city.clone()]
    );
    assert_eq!(
        losses("get_weather", weather, Target::GeminiOpenApi),
        vec![root_closed.clone()]
    );
    assert_eq!(
        losses("create_invoice", invoice, Target::OpenAiResponsesStrict),
        vec![customer.clone()]
    );
    assert_eq!(
        losses("create_invoice", invoice, Target::AnthropicStrict),
        [amount.clone(), customer.clone()]
    );
    assert_eq!(
        losses("create_invoice", invoice, Target::GeminiJsonSchema),
        [amount.clone(), customer]
    );
    assert_eq!(
        losses("create_invoice", invoice, Target::GeminiOpenApi),
        [root_closed.clone(), amount]
    );

    let tags = loss("/properties/tags", "additionalProperties", Narrowed);
    // OpenAI strict has no `default`: the defaults the model would have seen are hidden.
    let defaults = [
        "/properties/passengers/items/properties/checkedBags",
        "/properties/passengers/items/properties/needsSeat",
        "/properties/preferredAirlines",
        "/properties/refundableOnly",
    ]
    .map(|pointer| loss(pointer, "default", Hidden));
    let mut expected = defaults.to_vec();
    expected.push(tags.clone());
    expected.push(loss("/properties/tags", "default", Hidden));
    assert_eq!(
        losses("search_flights", flights, Target::OpenAiChatStrict),
        expected
    );
    let anthropic = losses("search_flights", flights, Target::AnthropicStrict);
    for expected in [
        loss("/properties/passengers", "maxItems", Unenforced),
        loss("/properties/preferredAirlines", "maxItems", Unenforced),
        loss("/properties/limit", "minimum", Unenforced),
        loss("/properties/limit", "maximum", Unenforced),
        loss(
            "/properties/maxPrice/properties/amount",
            "exclusiveMinimum",
            Unenforced,
        ),
        loss(
            "/properties/passengers/items/properties/age",
            "maximum",
            Unenforced,
        ),
        tags,
    ] {
        assert!(
            anthropic.contains(&expected),
            "{expected:?} in {anthropic:?}"
        );
    }
    assert_eq!(anthropic.len(), 17);
    let gemini = losses("search_flights", flights, Target::GeminiJsonSchema);
    assert_eq!(
        gemini,
        [
            loss("/properties/departureDate", "pattern", Unenforced),
            loss("/properties/destination", "pattern", Unenforced),
            loss(
                "/properties/maxPrice/properties/amount",
                "exclusiveMinimum",
                Unenforced
            ),
            loss("/properties/origin", "pattern", Unenforced),
            defaults[0].clone(),
            defaults[1].clone(),
            defaults[2].clone(),
            defaults[3].clone(),
            loss("/properties/returnDate", "pattern", Unenforced),
            loss("/properties/tags", "default", Hidden),
        ]
    );
    assert_eq!(
        losses("search_flights", flights, Target::GeminiOpenApi).len(),
        6
    );
}

#[test]
fn lowering_never_changes_the_canonical_schema() {
    let before = SearchFlights::input_schema().clone();
    for target in Target::ALL {
        advertise(
            [ToolSpec::new(
                "search_flights",
                "",
                SearchFlights::input_schema(),
            )],
            target,
        )
        .unwrap();
    }
    assert_eq!(SearchFlights::input_schema(), &before);
}

#[test]
fn openai_strict_shape_for_search_flights() {
    let advertised = advertise(
        [ToolSpec::new(
            "search_flights",
            "Search.",
            SearchFlights::input_schema(),
        )],
        Target::OpenAiChatStrict,
    )
    .unwrap();
    let definition = &advertised.to_json()[0];
    assert_eq!(definition["type"], "function");
    assert_eq!(definition["function"]["strict"], true);
    let parameters = &definition["function"]["parameters"];
    assert!(parameters.get("$schema").is_none());
    let properties = parameters["properties"].as_object().unwrap();
    let required: Vec<&str> = parameters["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        required,
        properties.keys().map(String::as_str).collect::<Vec<_>>()
    );
    assert_eq!(
        properties["refundableOnly"]["type"],
        json!(["boolean", "null"])
    );
    assert_eq!(properties["returnDate"]["type"], json!(["string", "null"]));
    assert_eq!(properties["cabin"]["type"], "string"); // spelled out from the enum's values
    assert_eq!(
        properties["passengers"]["items"]["additionalProperties"],
        false
    );
    assert_eq!(
        properties["passengers"]["items"]["properties"]["needsSeat"]["type"],
        json!(["boolean", "null"])
    );

    let responses = advertise(
        [ToolSpec::new(
            "search_flights",
            "Search.",
            SearchFlights::input_schema(),
        )],
        Target::OpenAiResponsesStrict,
    )
    .unwrap();
    let flat = &responses.to_json()[0];
    assert_eq!(flat["name"], "search_flights");
    assert_eq!(flat["parameters"], *parameters);

    let gemini = advertise(
        [ToolSpec::new(
            "search_flights",
            "Search.",
            SearchFlights::input_schema(),
        )],
        Target::GeminiOpenApi,
    )
    .unwrap();
    let declaration = &gemini.to_json()[0]["functionDeclarations"][0];
    assert_eq!(declaration["parameters"]["type"], "OBJECT");
    assert_eq!(
        declaration["parameters"]["properties"]["maxStops"]["nullable"],
        true
    );
    assert_eq!(
        declaration["parameters"]["properties"]["maxStops"]["type"],
        "INTEGER"
    );
}

#[test]
fn recursion_is_kept_refused_or_reported_per_dialect() {
    let schema = json!({
        "type": "object",
        "properties": { "root": { "$ref": "#/$defs/Node" } },
        "required": ["root"],
        "$defs": { "Node": {
            "type": "object",
            "properties": { "value": { "type": "integer" }, "next": { "anyOf": [{ "$ref": "#/$defs/Node" }, { "type": "null" }] } },
            "required": ["value"]
        } }
    });
    let spec = || [ToolSpec::new("list", "", &schema)];
    let strict = advertise(spec(), Target::OpenAiChatStrict).unwrap();
    let lowered = strict.tools()[0].schema();
    assert_eq!(
        lowered["properties"]["root"]["properties"]["next"]["anyOf"][0]["$ref"],
        "#/$defs/Node"
    );
    assert!(lowered["$defs"]["Node"]["properties"]["value"].is_object());
    for target in [Target::AnthropicStrict, Target::GeminiOpenApi] {
        let error = advertise(spec(), target).unwrap_err();
        assert!(
            matches!(
                error,
                AdvertiseError::Refused {
                    error: LowerError::Recursive { .. },
                    ..
                }
            ),
            "{error}"
        );
    }
    let gemini = advertise(spec(), Target::GeminiJsonSchema).unwrap();
    assert!(
        gemini
            .losses()
            .any(|(_, l)| l.keyword() == "$ref" && l.kind() == LossKind::Narrowed)
    );
}

// ---- OpenAI strict nulls ------------------------------------------------------------------

#[test]
fn strict_nulls_are_removed_only_where_the_contract_refuses_null() {
    let schema = SearchFlights::input_schema();
    let answer = r#"{"origin":"CDG","destination":"JFK","departureDate":"2025-06-01","returnDate":null,
        "passengers":[{"age":30,"needsSeat":null,"checkedBags":null}],"cabin":"economy","maxStops":null,
        "maxPrice":null,"preferredAirlines":null,"refundableOnly":null,"departureWindow":null,"limit":5,"tags":null}"#;
    assert!(
        SearchFlights::parse_arguments(answer).is_err(),
        "the strict answer as sent breaks the contract"
    );
    let mut call = ToolCall::new(
        "call_1",
        "search_flights",
        CallArguments::Text(answer.into()),
    );
    let removed = call.remove_strict_nulls(schema);
    assert_eq!(
        removed,
        [
            "/passengers/0/needsSeat",
            "/passengers/0/checkedBags",
            "/preferredAirlines",
            "/refundableOnly",
            "/tags"
        ]
    );
    let value = call.arguments_value().unwrap();
    // Option fields keep their null: the canonical schema accepts it.
    for kept in ["returnDate", "maxStops", "maxPrice", "departureWindow"] {
        assert_eq!(value[kept], Value::Null, "{kept}");
    }
    let parsed = SearchFlights::parse_value(&value).unwrap();
    assert!(parsed.passengers[0].needs_seat); // the field's default applies
    assert_eq!(parsed.return_date, None);

    // Nothing to remove: the text is left as sent, byte for byte, for the strict parser.
    let clean = r#"{"city":"Paris","units":"celsius"}"#;
    let mut call = ToolCall::new("call_2", "get_weather", CallArguments::Text(clean.into()));
    assert!(
        call.remove_strict_nulls(GetWeather::input_schema())
            .is_empty()
    );
    assert_eq!(call.raw_arguments(), &CallArguments::Text(clean.into()));
    // A null for a required field is the model's mistake, and stays for the runtime to refuse.
    let mut arguments = json!({"city": null, "units": "celsius"});
    assert!(providers::remove_strict_nulls(GetWeather::input_schema(), &mut arguments).is_empty());
}

// ---- Limits -------------------------------------------------------------------------------

fn object_with(properties: impl IntoIterator<Item = (String, Value)>) -> Value {
    json!({"type": "object", "properties": properties.into_iter().collect::<serde_json::Map<_, _>>()})
}

#[test]
fn provider_limits_are_errors_when_advertising() {
    let wide = object_with((0..5_001).map(|i| (format!("p{i}"), json!({"type": "string"}))));
    let error =
        advertise([ToolSpec::new("wide", "", &wide)], Target::OpenAiChatStrict).unwrap_err();
    assert!(
        matches!(
            error,
            AdvertiseError::Limit(LimitError::OpenAiProperties {
                count: 5_001,
                limit: 5_000,
                ..
            })
        ),
        "{error}"
    );
    advertise([ToolSpec::new("wide", "", &wide)], Target::OpenAiChat).unwrap();

    let mut deep = json!({"type": "string"});
    for _ in 0..11 {
        deep = object_with([("x".to_owned(), deep)]);
    }
    let error = advertise(
        [ToolSpec::new("deep", "", &deep)],
        Target::OpenAiResponsesStrict,
    )
    .unwrap_err();
    assert!(
        matches!(
            error,
            AdvertiseError::Limit(LimitError::OpenAiNesting { depth: 11, .. })
        ),
        "{error}"
    );

    let values: Vec<Value> = (0..1_001).map(|i| json!(format!("v{i}"))).collect();
    let enums = json!({"type": "object", "properties": {"e": {"enum": values}}, "required": ["e"]});
    let error = advertise(
        [ToolSpec::new("enums", "", &enums)],
        Target::OpenAiChatStrict,
    )
    .unwrap_err();
    assert!(
        matches!(
            error,
            AdvertiseError::Limit(LimitError::OpenAiEnumValues { count: 1_001, .. })
        ),
        "{error}"
    );

    let small = object_with([("a".to_owned(), json!({"type": "string"}))]);
    let tools: Vec<String> = (0..21).map(|i| format!("t{i}")).collect();
    let error = advertise(
        tools.iter().map(|n| ToolSpec::new(n, "", &small)),
        Target::AnthropicStrict,
    )
    .unwrap_err();
    assert!(
        matches!(
            error,
            AdvertiseError::Limit(LimitError::AnthropicStrictTools {
                count: 21,
                limit: 20
            })
        ),
        "{error}"
    );
    // 20 tools of one optional property each: within the 24 optional parameters.
    advertise(
        tools[..20].iter().map(|n| ToolSpec::new(n, "", &small)),
        Target::AnthropicStrict,
    )
    .unwrap();
    let error = advertise(
        tools[..13]
            .iter()
            .map(|n| ToolSpec::new(n, "", SearchFlights::input_schema())),
        Target::AnthropicStrict,
    )
    .unwrap_err();
    assert!(
        matches!(
            error,
            AdvertiseError::Limit(LimitError::AnthropicOptional { .. })
        ),
        "{error}"
    );
    let unions =
        object_with((0..17).map(|i| (format!("u{i}"), json!({"type": ["string", "null"]}))));
    let unions = json!({"type": "object", "properties": unions["properties"], "required": (0..17).map(|i| format!("u{i}")).collect::<Vec<_>>()});
    let error = advertise(
        [ToolSpec::new("unions", "", &unions)],
        Target::AnthropicStrict,
    )
    .unwrap_err();
    assert!(
        matches!(
            error,
            AdvertiseError::Limit(LimitError::AnthropicUnions {
                count: 17,
                limit: 16
            })
        ),
        "{error}"
    );

    let many: Vec<String> = (0..129).map(|i| format!("t{i}")).collect();
    let error = advertise(
        many.iter().map(|n| ToolSpec::new(n, "", &small)),
        Target::GeminiJsonSchema,
    )
    .unwrap_err();
    assert!(
        matches!(
            error,
            AdvertiseError::Limit(LimitError::GeminiDeclarations { count: 129, .. })
        ),
        "{error}"
    );
}

// ---- Names --------------------------------------------------------------------------------

#[test]
fn advertised_names_decode_to_registry_names() {
    let schema = json!({"type": "object"});
    let long = "x".repeat(100);
    let names = ["admin.tools.list", "get_weather", long.as_str()];
    for target in [
        Target::OpenAiChat,
        Target::Anthropic,
        Target::GeminiJsonSchema,
    ] {
        let advertised =
            advertise(names.iter().map(|n| ToolSpec::new(n, "", &schema)), target).unwrap();
        for tool in advertised.tools() {
            assert!(
                target.name_rule().accepts(tool.provider_name()),
                "{}",
                tool.provider_name()
            );
            assert_eq!(
                advertised.names().decode(tool.provider_name()),
                Some(tool.name())
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn name_maps_round_trip(names in proptest::collection::btree_set("[a-zA-Z0-9_.:/é -]{1,130}", 1..12)) {
        for rule in [NameRule::OpenAi, NameRule::Anthropic, NameRule::Gemini] {
            let map = NameMap::new(rule, names.iter().map(String::as_str)).unwrap();
            let mut seen = BTreeSet::new();
            for name in &names {
                let encoded = map.encode(name).unwrap();
                prop_assert!(rule.accepts(encoded), "{rule:?}: {encoded:?} from {name:?}");
                prop_assert_eq!(map.decode(encoded), Some(name.as_str()));
                prop_assert!(seen.insert(encoded.to_owned()));
                if rule.accepts(name) {
                    prop_assert_eq!(encoded, name.as_str());
                }
            }
        }
    }
}

/// Arbitrary JSON built from schema and wire-format words, to reach deep into the code paths.
fn arbitrary_json() -> impl Strategy<Value = Value> {
    const KEYS: &[&str] = &[
        "type",
        "properties",
        "required",
        "items",
        "prefixItems",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "$defs",
        "enum",
        "const",
        "additionalProperties",
        "minItems",
        "pattern",
        "format",
        "not",
        "choices",
        "delta",
        "tool_calls",
        "index",
        "id",
        "function",
        "arguments",
        "name",
        "finish_reason",
        "content_block",
        "partial_json",
        "candidates",
        "content",
        "parts",
        "functionCall",
        "partialArgs",
        "jsonPath",
        "stringValue",
        "willContinue",
        "item",
        "item_id",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        prop::sample::select(vec![
            "object",
            "string",
            "array",
            "null",
            "#",
            "#/$defs/a",
            "#/properties/x",
            "$.a[0]",
            "$.b",
            "function_call",
            "tool_use",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_start",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "tool_calls",
            "{\"a\":",
            "",
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..6).prop_map(|entries| {
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect(),
                )
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// No input makes a lowering, a parser or an accumulator panic.
    #[test]
    fn never_panics(value in arbitrary_json(), events in prop::collection::vec(arbitrary_json(), 0..8)) {
        for target in Target::ALL {
            let _ = advertise([ToolSpec::new("t", "", &value)], target);
        }
        let _ = providers::remove_strict_nulls(&value, &mut value.clone());
        let names = none();
        let _ = openai_chat::parse_response(&value, &names);
        let _ = openai_responses::parse_response(&value, &names);
        let _ = anthropic::parse_response(&value, &names);
        let _ = gemini::parse_response(&value, &names);
        let _ = openai_chat::Stream::collect(&names, &events);
        let _ = openai_responses::Stream::collect(&names, &events);
        let _ = anthropic::Stream::collect(&names, &events);
        let _ = gemini::Stream::collect(&names, &events);
    }
}

#[test]
fn deep_schemas_are_refused_not_overflowed() {
    let mut schema = json!({"type": "string"});
    for _ in 0..200 {
        schema = json!({"anyOf": [schema]});
    }
    let schema = json!({"type": "object", "properties": {"x": schema}});
    for target in Target::ALL {
        let error = advertise([ToolSpec::new("deep", "", &schema)], target).unwrap_err();
        assert!(
            matches!(
                error,
                AdvertiseError::Refused {
                    error: LowerError::InvalidSchema { .. },
                    ..
                }
            ),
            "{error}"
        );
    }
}

#[test]
fn id_less_gemini_calls_get_random_ids_in_every_decoder() {
    // Each decoder stands for a new process reading the same turn (it carries a
    // `responseId`): the ids must differ, or a durable ledger takes the second for the first.
    let root = fixtures();
    let chunks = json_lines(&read(&root, "gemini/whole-call-with-signature.chunks.txt")).unwrap();
    let first = gemini::Stream::collect(&none(), &chunks).unwrap();
    let second = gemini::Stream::collect(&none(), &chunks).unwrap();
    let whole = gemini::parse_response(&chunks[0], &none()).unwrap();
    let made: BTreeSet<&str> = [&first, &second, &whole]
        .iter()
        .map(|calls| calls[0].call_id())
        .collect();
    assert_eq!(made.len(), 3, "{made:?}");
    assert!(made.iter().all(|id| is_made_here(id)), "{made:?}");
    // Without a `responseId` too.
    let body = json!({"candidates": [{"content": {"parts": [
        {"functionCall": {"name": "search", "args": {}}},
        {"functionCall": {"name": "search", "args": {}}}]}}]});
    let calls = gemini::parse_response(&body, &none()).unwrap();
    assert!(ids(&calls).iter().all(|id| is_made_here(id)), "{calls:?}");
    assert_ne!(calls[0].call_id(), calls[1].call_id());
}

#[test]
fn positional_and_empty_ids_are_replaced_and_results_go_back_under_the_providers_ids() {
    // A server that numbers the calls of each response (vLLM, llama.cpp), one that sends
    // an empty id, and a real OpenAI id, which is kept.
    let message = |ids: [&str; 4]| {
        let calls: Vec<Value> = ids
            .iter()
            .map(|id| json!({"id": id, "type": "function", "function": {"name": "search", "arguments": "{}"}}))
            .collect();
        json!({"role": "assistant", "tool_calls": calls})
    };
    let sent = ["call_0", "1", "", "call_JMW3kq8Yx2Vb7Ld"];
    let first = openai_chat::parse_response(&message(sent), &none()).unwrap();
    let again = openai_chat::parse_response(&message(sent), &none()).unwrap();
    for calls in [&first, &again] {
        let provider: Vec<Option<&str>> = calls.iter().map(ToolCall::provider_call_id).collect();
        assert_eq!(provider, sent.map(Some));
        assert!(
            calls[..3].iter().all(|c| is_made_here(c.call_id())),
            "{calls:?}"
        );
        assert_eq!(calls[3].call_id(), "call_JMW3kq8Yx2Vb7Ld");
        assert!(calls[3].has_provider_id() && !calls[0].has_provider_id());
    }
    // The same numbered ids in the next turn (or the next process) are other calls.
    for (a, b) in first[..3].iter().zip(&again[..3]) {
        assert_ne!(a.call_id(), b.call_id());
    }
    // The runtime knows the calls by the ids made here; the provider gets its own back, in
    // the assistant turn and in each result.
    let results: Vec<Message> = first
        .iter()
        .map(|call| result(call.call_id(), "search", None, "{}"))
        .collect();
    let mut transcript = vec![user("Search."), assistant(Turn::calls(first.clone()))];
    transcript.extend(results);
    let tools = advertised(
        &[("search", "", json!({"type": "object"}))],
        Target::OpenAiChat,
    );
    let body = openai_chat::request(&transcript, &tools, &RequestOptions::new()).unwrap();
    let messages = body["messages"].as_array().unwrap();
    let in_turn: Vec<&Value> = messages[1]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["id"])
        .collect();
    assert_eq!(in_turn, sent.map(Value::from).iter().collect::<Vec<_>>());
    let answered: Vec<&Value> = messages[2..].iter().map(|m| &m["tool_call_id"]).collect();
    assert_eq!(answered, in_turn);
    // A saved transcript keeps both ids.
    let saved = serde_json::to_value(&first[0]).unwrap();
    assert_eq!(saved["provider_call_id"], "call_0");
    let back: ToolCall = serde_json::from_value(saved).unwrap();
    assert_eq!(back, first[0]);
}

#[test]
fn an_id_repeated_within_a_turn_is_replaced_for_every_call_that_shares_it() {
    let message = json!({"content": [
        {"type": "tool_use", "id": "toolu_01AbCd", "name": "search", "input": {"q": "a"}},
        {"type": "tool_use", "id": "toolu_01AbCd", "name": "search", "input": {"q": "b"}},
        {"type": "tool_use", "id": "toolu_01XyZw", "name": "search", "input": {"q": "c"}}]});
    let calls = anthropic::parse_response(&message, &none()).unwrap();
    assert!(is_made_here(calls[0].call_id()) && is_made_here(calls[1].call_id()));
    assert_ne!(calls[0].call_id(), calls[1].call_id());
    assert_eq!(calls[0].provider_call_id(), Some("toolu_01AbCd"));
    assert_eq!(calls[1].provider_call_id(), Some("toolu_01AbCd"));
    assert_eq!(calls[2].call_id(), "toolu_01XyZw");
    // Each result is paired with its own call, and carries the provider's id.
    let mut transcript = vec![user("Search."), assistant(Turn::calls(calls.clone()))];
    transcript.extend(
        calls
            .iter()
            .rev()
            .map(|call| result(call.call_id(), "search", None, call.call_id())),
    );
    let tools = advertised(
        &[("search", "", json!({"type": "object"}))],
        Target::Anthropic,
    );
    let body = anthropic::request(&transcript, &tools, &RequestOptions::new()).unwrap();
    let blocks = body["messages"][2]["content"].as_array().unwrap();
    let answered: Vec<(&Value, &Value)> = blocks
        .iter()
        .map(|b| (&b["tool_use_id"], &b["content"]))
        .collect();
    let expected: Vec<(Value, Value)> = calls
        .iter()
        .map(|c| (json!(c.provider_call_id()), json!(c.call_id())))
        .collect();
    assert_eq!(
        answered,
        expected.iter().map(|(a, b)| (a, b)).collect::<Vec<_>>()
    );
}

/// Every subschema of a lowered schema (properties, items, branches), with its pointer.
fn subschemas<'a>(schema: &'a Value, pointer: String, out: &mut Vec<(String, &'a Value)>) {
    let Value::Object(map) = schema else {
        return;
    };
    out.push((pointer.clone(), schema));
    if let Some(Value::Object(properties)) = map.get("properties") {
        for (name, property) in properties {
            subschemas(property, format!("{pointer}/properties/{name}"), out);
        }
    }
    if let Some(items) = map.get("items") {
        subschemas(items, format!("{pointer}/items"), out);
    }
    if let Some(Value::Array(branches)) = map.get("anyOf") {
        for (i, branch) in branches.iter().enumerate() {
            subschemas(branch, format!("{pointer}/anyOf/{i}"), out);
        }
    }
}

#[test]
fn strict_anthropic_and_gemini_parameters_give_every_untyped_node_a_type_and_say_so() {
    // No `type`: Anthropic's strict helper refuses such a node, and Gemini's `parameters`
    // (an OpenAPI subset) has no schema without one.
    let schema = json!({
        "type": "object",
        "properties": {
            "anything": {"description": "Any value."},
            "address": {"format": "ipv4"},
            "tags": {"type": "array"},
            "limit": {"minimum": 1}
        },
        "required": ["anything", "address", "tags", "limit"],
        "additionalProperties": false
    });
    for target in [Target::AnthropicStrict, Target::GeminiOpenApi] {
        let advertised = advertise([ToolSpec::new("t", "", &schema)], target).unwrap();
        let lowered = advertised.tools()[0].schema();
        let mut nodes = Vec::new();
        subschemas(lowered, String::new(), &mut nodes);
        for (pointer, node) in &nodes {
            let typed = node.get("type").is_some() || node.get("anyOf").is_some();
            assert!(typed, "{target:?}: {pointer} has no type: {lowered}");
        }
        let kind = |name: &str| {
            let node = &lowered["properties"][name]["type"];
            node.as_str().map(str::to_ascii_lowercase)
        };
        assert_eq!(kind("address").as_deref(), Some("string"), "{lowered}");
        assert_eq!(kind("limit").as_deref(), Some("number"), "{lowered}");
        let lost = losses("t", &schema, target);
        for pointer in [
            "/properties/anything",
            "/properties/address",
            "/properties/tags/items",
            "/properties/limit",
        ] {
            assert!(
                lost.contains(&loss(pointer, "type", LossKind::Narrowed)),
                "{target:?}: no loss for {pointer}: {lost:?}"
            );
        }
    }
}

#[test]
fn an_empty_user_message_is_refused_where_the_provider_refuses_it() {
    let tools = |target| advertised(&[], target);
    for text in ["", " \n"] {
        let transcript = [user("Hello."), user(text)];
        let error = anthropic::request(
            &transcript,
            &tools(Target::Anthropic),
            &RequestOptions::new(),
        )
        .unwrap_err();
        assert_eq!(
            error,
            RequestError::EmptyUserMessage { index: 1 },
            "{text:?}"
        );
        assert!(error.to_string().contains("message 1"), "{error}");
    }
    let transcript = [user("")];
    assert_eq!(
        gemini::request(
            &transcript,
            &tools(Target::GeminiJsonSchema),
            &RequestOptions::new()
        )
        .unwrap_err(),
        RequestError::EmptyUserMessage { index: 0 }
    );
    // OpenAI takes an empty message as it is.
    let body = openai_chat::request(
        &transcript,
        &tools(Target::OpenAiChat),
        &RequestOptions::new(),
    )
    .unwrap();
    assert_eq!(body["messages"][0]["content"], "");
}
