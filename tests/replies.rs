//! Model replies built from the vendored BFCL v4 data, shared by the text-call tests and
//! benchmarks: the ground-truth calls rendered in each dialect, and prose replies with no call.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tool_core::text_calls::{Dialect, parse_calls};

/// One call: the tool's name and its arguments.
pub type Call = (String, Map<String, Value>);

/// The BFCL v4 ground-truth call sets (`possible_answer/`), one per entry, in file order: each
/// argument takes its first acceptable value, and one whose first acceptable value is `""` is
/// left out (BFCL means "may be omitted").
pub fn bfcl_call_sets() -> Vec<Vec<Call>> {
    let mut sets: Vec<Vec<(String, Map<String, Value>)>> = Vec::new();
    let folder = crate::data("bfcl-v4/possible_answer");
    let mut files: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    for file in files {
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            let entry: Value = serde_json::from_str(line).unwrap();
            let Some(truth) = entry["ground_truth"].as_array() else {
                continue;
            };
            let mut calls = Vec::new();
            for call in truth {
                let Some((name, params)) = call.as_object().and_then(|m| m.iter().next()) else {
                    continue;
                };
                let mut args = Map::new();
                for (param, accepted) in params.as_object().into_iter().flatten() {
                    match accepted.as_array().and_then(|a| a.first()) {
                        Some(Value::String(s)) if s.is_empty() => {}
                        Some(value) => {
                            args.insert(param.clone(), value.clone());
                        }
                        None => {}
                    }
                }
                calls.push((name.clone(), args));
            }
            if !calls.is_empty() {
                sets.push(calls);
            }
        }
    }
    sets
}

/// Whether Python call syntax can write `calls`: every keyword is an identifier.
pub fn pythonic_writable(calls: &[Call]) -> bool {
    let identifier = |s: &str| {
        s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    calls
        .iter()
        .all(|(_, args)| args.keys().all(|k| identifier(k)))
}

/// The user messages of BFCL v4's irrelevance and relevance entries, in file order: real
/// requests written as plain text, read here as replies that hold no call.
pub fn bfcl_prose() -> Vec<String> {
    let mut out = Vec::new();
    for file in [
        "BFCL_v4_irrelevance.json",
        "BFCL_v4_live_irrelevance.json",
        "BFCL_v4_live_relevance.json",
    ] {
        for line in crate::read_data(&format!("bfcl-v4/{file}")).lines() {
            let entry: Value = serde_json::from_str(line).unwrap();
            let turns = entry["question"].as_array().into_iter().flatten();
            for message in turns.filter_map(Value::as_array).flatten() {
                if let Some(content) = message["content"].as_str() {
                    out.push(content.to_owned());
                }
            }
        }
    }
    out
}

/// A reply of the mix [`bfcl_replies`] builds: its text, and the dialect it was written in
/// (`None`: prose).
#[derive(Debug, Clone)]
pub struct Reply {
    /// The dialect the calls were rendered in, or `None` for prose.
    pub dialect: Option<Dialect>,
    /// The reply.
    pub text: String,
}

/// Every BFCL v4 ground-truth call set rendered in every built-in dialect that can write it
/// (with "Sure." before and "Done." after where the dialect allows prose), then the BFCL
/// prose replies.
pub fn bfcl_replies() -> Vec<Reply> {
    let sets = bfcl_call_sets();
    let mut out = Vec::new();
    for dialect in Dialect::ALL {
        for calls in &sets {
            if dialect == Dialect::Pythonic && !pythonic_writable(calls) {
                continue;
            }
            out.push(Reply {
                dialect: Some(dialect),
                text: render(dialect, calls, "Sure.", "Done."),
            });
        }
    }
    out.extend(bfcl_prose().into_iter().map(|text| Reply {
        dialect: None,
        text,
    }));
    out
}

/// Replies derived from `replies` that must be refused or read as prose, four for each: cut in
/// half, followed by the reply `replies.len() / 7 + 1` places on (mostly another dialect's),
/// quoted as the string argument of a Hermes call, and shown in Markdown inline code.
pub fn variants(replies: &[Reply]) -> Vec<String> {
    let mut out = Vec::with_capacity(replies.len() * 4);
    for (i, reply) in replies.iter().enumerate() {
        let text = &reply.text;
        let mut half = text.len() / 2;
        while !text.is_char_boundary(half) {
            half -= 1;
        }
        out.push(text[..half].to_owned());
        let other = &replies[(i + replies.len() / 7 + 1) % replies.len()];
        out.push(format!("{text}\n{}", other.text));
        out.push(quoted_in_a_call(text));
        out.push(format!(
            "Write it as `{}` next time.",
            text.replace('\n', " ")
        ));
    }
    out
}

/// `text` as the `query` argument of a Hermes `search` call.
pub fn quoted_in_a_call(text: &str) -> String {
    let call = json!({"name": "search", "arguments": {"query": text}});
    format!("<tool_call>\n{call}\n</tool_call>")
}

/// SHA-256 (hex) of every reading of `texts` with the dialect detected, in order: the debug
/// form of each result (dialect, calls with their spans, prose, or the refusal and its
/// reason), a line each.
pub fn detection_digest<'a>(texts: impl IntoIterator<Item = &'a str>) -> String {
    let mut digest = Sha256::new();
    for text in texts {
        digest.update(format!("{:?}\n", parse_calls(text, None)).as_bytes());
    }
    digest
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `value` written as a Python literal.
pub fn python(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            let mut out = String::from("'");
            for c in s.chars() {
                match c {
                    '\'' => out.push_str("\\'"),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\t' => out.push_str("\\t"),
                    c => out.push(c),
                }
            }
            out.push('\'');
            out
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(python).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", python(&Value::String(k.clone())), python(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The calls rendered in `dialect`, with `before` and `after` prose where the dialect allows it.
pub fn render(dialect: Dialect, calls: &[Call], before: &str, after: &str) -> String {
    let object = |(name, args): &Call, key: &str| json!({ "name": name, key: args }).to_string();
    match dialect {
        Dialect::Json => format!(
            "[{}]",
            calls.iter().map(|c| object(c, "arguments")).collect::<Vec<_>>().join(", ")
        ),
        Dialect::Hermes => format!(
            "{before}\n{}\n{after}",
            calls
                .iter()
                .map(|c| format!("<tool_call>\n{}\n</tool_call>", object(c, "arguments")))
                .collect::<Vec<_>>()
                .join("\n")
        ),
        Dialect::Llama3 => format!(
            "{before}<|python_tag|>{}<|eom_id|>",
            calls.iter().map(|c| object(c, "parameters")).collect::<Vec<_>>().join("; ")
        ),
        Dialect::Mistral => format!(
            "{before}[TOOL_CALLS][{}]",
            calls.iter().map(|c| object(c, "arguments")).collect::<Vec<_>>().join(", ")
        ),
        Dialect::Granite => format!(
            "{before}{}",
            calls
                .iter()
                .map(|c| format!("<function_call> {}\n", object(c, "arguments")))
                .collect::<String>()
        ),
        Dialect::DeepSeek => format!(
            "{before}<｜tool▁calls▁begin｜>{}<｜tool▁calls▁end｜>{after}",
            calls
                .iter()
                .map(|(name, args)| format!(
                    "<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n{}\n```<｜tool▁call▁end｜>",
                    Value::Object(args.clone())
                ))
                .collect::<String>()
        ),
        Dialect::Pythonic => format!(
            "[{}]",
            calls
                .iter()
                .map(|(name, args)| format!(
                    "{name}({})",
                    args.iter().map(|(k, v)| format!("{k}={}", python(v))).collect::<Vec<_>>().join(", ")
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => panic!("no rendering for {other}"),
    }
}
