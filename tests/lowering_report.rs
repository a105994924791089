//! How real tool schemas fare when lowered to each provider dialect: every LiveMCPBench MCP
//! tool and every BFCL v4 function definition goes through each lowering, which either keeps
//! the whole contract (clean), keeps it with losses (lossy) or refuses it. Prints the report
//! as Markdown and asserts the measured totals, so a change in behaviour shows as a failure.
//!
//! Each tool is advertised alone, so request-wide limits (Anthropic's 24 optional and 16 union
//! properties) count one tool at a time. `PROVIDERS_REPORT.md` at the repository root holds
//! the output; regenerate it with
//!
//! ```sh
//! PROVIDERS_REPORT=write cargo test -p tests --test lowering_report
//! ```
//!
//! BFCL's dialect is converted as in `tests/bfcl.rs`: `dict` → `object`, `float` → `number`,
//! `tuple` → `array`, `any` → no type, the `optional` key dropped.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use tool_core::providers::{
    AdvertiseError, LimitError, LowerError, NameRule, Target, ToolSpec, advertise,
};

/// One target per dialect: Chat and Responses share theirs.
const DIALECTS: [(Target, &str); 6] = [
    (Target::OpenAiChatStrict, "OpenAI strict (Chat, Responses)"),
    (Target::OpenAiChat, "OpenAI non-strict"),
    (Target::AnthropicStrict, "Anthropic strict"),
    (Target::Anthropic, "Anthropic"),
    (Target::GeminiJsonSchema, "Gemini parametersJsonSchema"),
    (Target::GeminiOpenApi, "Gemini parameters (OpenAPI)"),
];

struct Tool {
    name: String,
    description: String,
    schema: Value,
}

/// Whether each tool's canonical schema compiles as JSON Schema.
fn compiles(tools: &[Tool]) -> Vec<bool> {
    tools
        .iter()
        .map(|t| jsonschema::validator_for(&t.schema).is_ok())
        .collect()
}

fn livemcp() -> Vec<Tool> {
    let text = tests::read_data("livemcpbench-tools/LiveMCPTool/tools.json");
    let servers: Vec<Value> = serde_json::from_str(&text).unwrap();
    let mut tools = Vec::new();
    for server in &servers {
        for entry in server["tools"]
            .as_object()
            .into_iter()
            .flat_map(Map::values)
        {
            for tool in entry["tools"].as_array().into_iter().flatten() {
                tools.push(Tool {
                    name: tool["name"].as_str().unwrap_or_default().to_owned(),
                    description: tool["description"].as_str().unwrap_or_default().to_owned(),
                    schema: tool["inputSchema"].clone(),
                });
            }
        }
    }
    tools
}

fn bfcl() -> Vec<Tool> {
    let dir = tests::data("bfcl-v4");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("BFCL_v4_"))
        })
        .collect();
    files.sort();
    let mut tools = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        for item in text
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        {
            for function in item["function"].as_array().into_iter().flatten() {
                tools.push(Tool {
                    name: function["name"].as_str().unwrap_or_default().to_owned(),
                    description: function["description"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    schema: tests::bfcl_to_json_schema(&function["parameters"]),
                });
            }
        }
    }
    tools
}

#[derive(Default)]
struct Tally {
    clean: usize,
    lossy: usize,
    refused: usize,
    /// Tools per loss class.
    losses: BTreeMap<String, usize>,
    /// Tools per refusal class.
    refusals: BTreeMap<String, usize>,
    /// Lowered schemas that do not compile as JSON Schema although the canonical one does.
    broken: usize,
}

fn refusal_class(error: &AdvertiseError) -> String {
    match error {
        AdvertiseError::Refused { error, .. } => match error {
            LowerError::RootNotObject { .. } => "the root is not an object".into(),
            LowerError::Recursive { .. } => "a recursive $ref".into(),
            LowerError::UnresolvedRef { .. } => "a $ref that does not resolve".into(),
            LowerError::NonLocalRef { .. } => "a $ref to another document".into(),
            LowerError::InvalidSchema { reason, .. }
                if reason.contains("is not a JSON Schema type") =>
            {
                "a type name that is not a JSON Schema type (Java/JavaScript names)".into()
            }
            LowerError::InvalidSchema { reason, .. } => format!("invalid schema: {reason}"),
            LowerError::Inexpressible { what, .. } => format!("{what} cannot be expressed"),
            LowerError::PropertyName { .. } => {
                "a property name outside [A-Za-z_][A-Za-z0-9_]{0,63}".into()
            }
            LowerError::TooLarge { .. } => "too large once $refs are inlined".into(),
            other => other.to_string(),
        },
        AdvertiseError::Limit(limit) => match limit {
            LimitError::AnthropicOptional { .. } => "more than 24 optional properties".into(),
            LimitError::AnthropicUnions { .. } => "more than 16 union-typed properties".into(),
            LimitError::OpenAiNesting { .. } => "objects nested more than 10 levels".into(),
            other => other.to_string(),
        },
        other => other.to_string(),
    }
}

fn tally(tools: &[Tool], valid: &[bool], target: Target) -> Tally {
    let mut tally = Tally::default();
    let mut checked = std::collections::HashSet::new();
    for (tool, valid) in tools.iter().zip(valid) {
        match advertise(
            [ToolSpec::new(&tool.name, &tool.description, &tool.schema)],
            target,
        ) {
            Ok(advertised) => {
                let lowered = &advertised.tools()[0];
                // Every JSON Schema dialect's output is itself a valid schema whose $refs
                // resolve (Gemini's OpenAPI form is not JSON Schema).
                if target != Target::GeminiOpenApi
                    && *valid
                    && checked.insert(lowered.schema().to_string())
                    && let Err(error) = jsonschema::validator_for(lowered.schema())
                {
                    eprintln!(
                        "{target}: `{}` lowers to an invalid schema: {error}",
                        tool.name
                    );
                    tally.broken += 1;
                }
                if lowered.losses().is_empty() {
                    tally.clean += 1;
                } else {
                    tally.lossy += 1;
                }
                let mut classes: Vec<String> = lowered
                    .losses()
                    .iter()
                    .map(|l| match l.note() {
                        Some(note) => format!("{} `{}` ({note})", l.kind(), l.keyword()),
                        None => format!("{} `{}`", l.kind(), l.keyword()),
                    })
                    .collect();
                classes.sort();
                classes.dedup();
                for class in classes {
                    *tally.losses.entry(class).or_default() += 1;
                }
            }
            Err(error) => {
                tally.refused += 1;
                *tally.refusals.entry(refusal_class(&error)).or_default() += 1;
            }
        }
    }
    tally
}

#[test]
fn lowering_report() {
    let corpora = [
        ("LiveMCPBench MCP tools", livemcp()),
        ("BFCL v4 definitions", bfcl()),
    ];
    let mut report = String::new();
    let mut totals = Vec::new();
    writeln!(
        report,
        "| corpus | dialect | tools | clean | lossy | refused |"
    )
    .unwrap();
    writeln!(report, "|---|---|---:|---:|---:|---:|").unwrap();
    let mut details = String::new();
    for (corpus, tools) in &corpora {
        writeln!(details, "\n### {corpus} ({} tools)\n", tools.len()).unwrap();
        for (rule, label) in [
            (NameRule::OpenAi, "OpenAI and Anthropic"),
            (NameRule::Gemini, "Gemini"),
        ] {
            let renamed = tools.iter().filter(|t| !rule.accepts(&t.name)).count();
            writeln!(
                details,
                "- names {label} refuse (`{}`), sent through the `NameMap`: {renamed}",
                rule.pattern()
            )
            .unwrap();
        }
        let valid = compiles(tools);
        for (target, dialect) in DIALECTS {
            let tally = tally(tools, &valid, target);
            writeln!(
                report,
                "| {corpus} | {dialect} | {} | {} | {} | {} |",
                tools.len(),
                tally.clean,
                tally.lossy,
                tally.refused
            )
            .unwrap();
            writeln!(
                details,
                "\n**{dialect}**: {} clean, {} lossy, {} refused\n",
                tally.clean, tally.lossy, tally.refused
            )
            .unwrap();
            let mut losses: Vec<_> = tally.losses.iter().collect();
            losses.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            for (class, count) in losses {
                writeln!(details, "- lossy ({count}): {class}").unwrap();
            }
            for (class, count) in &tally.refusals {
                writeln!(details, "- refused ({count}): {class}").unwrap();
            }
            assert_eq!(tally.broken, 0, "{corpus}, {dialect}");
            totals.push((*corpus, dialect, tally.clean, tally.lossy, tally.refused));
        }
    }
    let body = format!(
        "{report}\nWhy, by class: the number of tools showing each class (a tool can show several).\n{details}"
    );
    println!("{body}");

    if std::env::var("PROVIDERS_REPORT").as_deref() == Ok("write") {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../PROVIDERS_REPORT.md");
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let marker = "<!-- generated below -->";
        let head = text.split(marker).next().unwrap_or_default().trim_end();
        std::fs::write(&path, format!("{head}\n\n{marker}\n\n{body}")).unwrap();
    }

    // The figures measured on the corpus copies this project tests against:
    // (corpus, dialect, clean, lossy, refused).
    let expected: &[(&str, &str, usize, usize, usize)] = &[
        (
            "LiveMCPBench MCP tools",
            "OpenAI strict (Chat, Responses)",
            94,
            433,
            0,
        ),
        ("LiveMCPBench MCP tools", "OpenAI non-strict", 527, 0, 0),
        ("LiveMCPBench MCP tools", "Anthropic strict", 122, 401, 4),
        ("LiveMCPBench MCP tools", "Anthropic", 527, 0, 0),
        (
            "LiveMCPBench MCP tools",
            "Gemini parametersJsonSchema",
            255,
            272,
            0,
        ),
        (
            "LiveMCPBench MCP tools",
            "Gemini parameters (OpenAPI)",
            372,
            151,
            4,
        ),
        (
            "BFCL v4 definitions",
            "OpenAI strict (Chat, Responses)",
            0,
            8632,
            94,
        ),
        ("BFCL v4 definitions", "OpenAI non-strict", 8632, 0, 94),
        ("BFCL v4 definitions", "Anthropic strict", 0, 8629, 97),
        ("BFCL v4 definitions", "Anthropic", 8632, 0, 94),
        (
            "BFCL v4 definitions",
            "Gemini parametersJsonSchema",
            3179,
            5453,
            94,
        ),
        (
            "BFCL v4 definitions",
            "Gemini parameters (OpenAPI)",
            8064,
            436,
            226,
        ),
    ];
    assert_eq!(totals, expected);
}
