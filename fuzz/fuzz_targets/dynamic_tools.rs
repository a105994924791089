//! Dynamic tools through `Runtime::invoke`: a few fixed JSON Schemas (a `$ref` to a resource,
//! formats, composition keywords, a recursive Draft 7 schema, the empty schema), or a schema
//! the input brings, as an MCP server would.
//!
//! Input: byte 0 picks the tool (`% 6`; 5 means the input carries its own schema); bit 7 of
//! byte 0 sends the arguments as a parsed value instead of text. The rest is the argument
//! text, or for tool 5 the schema, a NUL byte, then the argument text.
//!
//! Checked: `invoke` never panics and ends in one outcome; it accepts only arguments that
//! `serde_json` reads and the `jsonschema` crate accepts, and accepts every such value with
//! no repeated key and no nesting past `MAX_DEPTH`.

#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use tool_core::{Code, Context, Registry, Runtime, ToolDef, registry::{DynamicTool, ToolError}};

const SKU: &str = "https://schemas.example.com/sku.json";

/// The fixed tools: name and input schema (`check_stock` also has the SKU resource).
fn tools() -> Vec<(&'static str, Value)> {
    vec![
        (
            "check_stock",
            json!({
                "type": "object",
                "properties": {
                    "sku": { "$ref": SKU },
                    "quantity": { "type": "integer", "minimum": 1, "maximum": 1000 }
                },
                "required": ["sku"],
                "additionalProperties": false
            }),
        ),
        (
            "contact",
            json!({
                "type": "object",
                "properties": {
                    "email": { "type": "string", "format": "email" },
                    "at": { "type": "string", "format": "date-time" },
                    "day": { "type": "string", "format": "date" },
                    "ip": { "format": "ipv4" },
                    "ip6": { "format": "ipv6" },
                    "site": { "format": "uri" },
                    "host": { "format": "idn-hostname" },
                    "id": { "format": "uuid" },
                    "re": { "format": "regex" },
                    "ptr": { "format": "json-pointer" },
                    "span": { "format": "duration" }
                },
                "additionalProperties": false
            }),
        ),
        (
            "compose",
            json!({
                "type": "object",
                "properties": {
                    "kind": { "enum": ["a", "b", 3, null] },
                    "pair": { "prefixItems": [{ "type": "string" }, { "type": "number" }], "items": false },
                    "set": { "type": "array", "uniqueItems": true, "contains": { "const": 1 }, "maxContains": 2 },
                    "step": { "multipleOf": 0.5, "exclusiveMaximum": 100 },
                    "either": { "oneOf": [{ "type": "string", "maxLength": 3 }, { "type": "string", "minLength": 2 }] },
                    "any": { "anyOf": [{ "type": "integer" }, { "type": "array", "maxItems": 2 }] },
                    "not": { "not": { "type": "null" } },
                    "names": { "type": "object", "propertyNames": { "pattern": "^[a-z]+$" }, "maxProperties": 3 }
                },
                "patternProperties": { "^x-": { "type": "string" } },
                "dependentRequired": { "pair": ["kind"] },
                "if": { "properties": { "kind": { "const": "a" } }, "required": ["kind"] },
                "then": { "required": ["set"] },
                "else": { "not": { "required": ["set"] } },
                "unevaluatedProperties": false
            }),
        ),
        (
            "tree",
            json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "definitions": {
                    "node": {
                        "type": "object",
                        "properties": {
                            "name": { "type": "string", "minLength": 1 },
                            "children": { "type": "array", "items": { "$ref": "#/definitions/node" } }
                        },
                        "required": ["name"],
                        "additionalProperties": false
                    }
                },
                "$ref": "#/definitions/node"
            }),
        ),
        ("anything", json!({})),
    ]
}

fn sku() -> Value {
    json!({ "type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$" })
}

fn dynamic(name: &str, schema: &Value) -> DynamicTool {
    let tool = DynamicTool::new(name, "A fuzzed tool.", schema.clone());
    if name == "check_stock" {
        tool.resource(SKU, sku())
    } else {
        tool
    }
}

async fn echo(args: Value, _cx: &Context) -> Result<Value, ToolError> {
    Ok(args)
}

fn runtime_for(tool: DynamicTool) -> Result<Runtime, tool_core::registry::RegistryError> {
    let mut registry = Registry::new();
    registry.register(ToolDef::dynamic(tool, echo))?;
    Ok(Runtime::new(Arc::new(registry)))
}

struct Fixed {
    runtime: Runtime,
    names: Vec<String>,
    validators: Vec<jsonschema::Validator>,
}

fn fixed() -> &'static Fixed {
    static FIXED: OnceLock<Fixed> = OnceLock::new();
    FIXED.get_or_init(|| {
        let mut registry = Registry::new();
        let mut names = Vec::new();
        let mut validators = Vec::new();
        for (name, schema) in tools() {
            names.push(name.to_owned());
            validators.push(standard(name, &schema).expect("a fixed schema compiles"));
            registry
                .register(ToolDef::dynamic(dynamic(name, &schema), echo))
                .expect("a fixed schema registers");
        }
        Fixed {
            runtime: Runtime::new(Arc::new(registry)),
            names,
            validators,
        }
    })
}

/// The validator the law is checked against, built as the registry documents it.
fn standard(name: &str, schema: &Value) -> Option<jsonschema::Validator> {
    let mut options = jsonschema::options().should_validate_formats(true);
    if schema.get("$schema").is_none() {
        options = options.with_draft(jsonschema::Draft::Draft202012);
    }
    if name == "check_stock" {
        let registry = jsonschema::Registry::new()
            .add(SKU, sku())
            .ok()?
            .prepare()
            .ok()?;
        return options.with_registry(&registry).build(schema).ok();
    }
    options.build(schema).ok()
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    thread_local! {
        static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a tokio runtime");
    }
    RUNTIME.with(|runtime| runtime.block_on(future))
}

fuzz_target!(|data: &[u8]| {
    let data = &data[..data.len().min(tool_fuzz::MAX_INPUT)];
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let as_value = flags & 0x80 != 0;
    let choice = usize::from(flags & 0x7f) % 6;
    if choice == 5 {
        let Some(nul) = rest.iter().position(|&b| b == 0) else {
            return;
        };
        let Ok(schema) = serde_json::from_slice::<Value>(&rest[..nul]) else {
            return;
        };
        let Ok(text) = std::str::from_utf8(&rest[nul + 1..]) else {
            return;
        };
        // A schema the registry refuses ends here, with a message that renders.
        let runtime = match runtime_for(dynamic("brought", &schema)) {
            Ok(runtime) => runtime,
            Err(error) => {
                assert!(!error.to_string().is_empty());
                return;
            }
        };
        let law = standard("brought", &schema);
        check(&runtime, "brought", law.as_ref(), text, as_value);
        return;
    }
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let fixed = fixed();
    check(
        &fixed.runtime,
        &fixed.names[choice],
        Some(&fixed.validators[choice]),
        text,
        as_value,
    );
});

fn check(
    runtime: &Runtime,
    tool: &str,
    law: Option<&jsonschema::Validator>,
    text: &str,
    as_value: bool,
) {
    let value = serde_json::from_str::<Value>(text).ok();
    if as_value && value.is_none() {
        return;
    }
    let cx = Context::builder("fuzz").build();
    // An empty call id is not remembered, so one runtime serves every input.
    let outcome = block_on(async {
        match (&value, as_value) {
            (Some(value), true) => runtime.invoke("", tool, value, &cx).await,
            _ => runtime.invoke("", tool, text, &cx).await,
        }
    });
    let accepted = match outcome.failure() {
        None => true,
        Some(failure) => {
            assert!(!failure.message().is_empty(), "a failure without a message");
            match failure.code() {
                Code::InvalidArguments | Code::InputTooLarge => false,
                code => panic!("unexpected outcome {code:?} for {tool}: {failure}"),
            }
        }
    };
    if accepted {
        let Some(value) = &value else {
            panic!("{tool}: accepted text serde_json cannot read: {text:?}");
        };
        if let Some(law) = law {
            assert!(
                law.is_valid(value),
                "{tool}: accepted arguments jsonschema refuses: {text:?}"
            );
        }
        let output = outcome.output().expect("an accepted call has an output");
        assert_eq!(&output.to_value(), value, "{tool}: the echo changed the arguments");
    } else if let (Some(value), Some(law)) = (&value, law) {
        let plain = as_value || !tool_fuzz::has_duplicate_keys(text);
        let too_big = text.len() > Runtime::DEFAULT_MAX_BYTES;
        if plain && !too_big && tool_fuzz::depth(value) < tool_core::contract::MAX_DEPTH as usize {
            assert!(
                !law.is_valid(value),
                "{tool}: refused arguments jsonschema accepts: {text:?}: {:?}",
                outcome.failure()
            );
        }
    }
}
