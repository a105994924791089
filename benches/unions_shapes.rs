//! The tools and texts of the unions, defaults and formats benchmark (`benches/unions.rs`) and
//! its instruction count (`examples/unions_count.rs`): two tools, each paired with a plain
//! `#[derive(Deserialize)]` twin of the same shape that checks nothing (the floor).

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tool_core::{Argument, Tool};

/// Edits a file. Fields are only read by the checks.
#[allow(dead_code)]
#[derive(Tool, Debug)]
pub(crate) struct EditFile {
    /// The file to edit.
    path: String,
    /// The edits, applied in order.
    ops: Vec<Op>,
}

/// One edit.
#[allow(dead_code)]
#[derive(Argument, Debug)]
#[serde(tag = "type")]
pub(crate) enum Op {
    /// Inserts a line.
    Insert { line: u32, text: String },
    /// Deletes lines.
    Delete { line: u32, count: Option<u32> },
    /// Replaces a line.
    Replace { line: u32, text: String },
    /// Removes every line.
    Clear,
}

/// `EditFile` for serde alone.
#[allow(dead_code)]
#[derive(Deserialize, Debug)]
pub(crate) struct EditFileTwin {
    path: String,
    ops: Vec<OpTwin>,
}

#[allow(dead_code)]
#[derive(Deserialize, Debug)]
#[serde(tag = "type")]
pub(crate) enum OpTwin {
    Insert { line: u32, text: String },
    Delete { line: u32, count: Option<u32> },
    Replace { line: u32, text: String },
    Clear,
}

/// Creates a calendar event. Fields are only read by the checks.
#[allow(dead_code)]
#[derive(Tool, Debug)]
pub(crate) struct CreateEvent {
    /// What the event is called.
    title: String,
    /// When it starts.
    #[tool(format = "date-time")]
    start: String,
    /// When it ends.
    #[tool(format = "date-time")]
    end: String,
    /// Who organizes it.
    #[tool(format = "email")]
    organizer: String,
    /// Who is invited.
    #[tool(inner(format = "email"))]
    attendees: Vec<String>,
    /// Whether it lasts the whole day.
    #[serde(default)]
    all_day: bool,
    /// Minutes before the start to remind the attendees.
    #[serde(default = "fifteen")]
    #[tool(range(min = 1, max = 1440))]
    reminder_minutes: u32,
    /// Where it takes place.
    #[serde(default)]
    location: Option<String>,
    /// A link to the meeting.
    #[tool(format = "uri")]
    link: Option<String>,
}

fn fifteen() -> u32 {
    15
}

/// `CreateEvent` for serde alone: the same defaults, no format or range check.
#[allow(dead_code)]
#[derive(Deserialize, Debug)]
pub(crate) struct CreateEventTwin {
    title: String,
    start: String,
    end: String,
    organizer: String,
    attendees: Vec<String>,
    #[serde(default)]
    all_day: bool,
    #[serde(default = "fifteen")]
    reminder_minutes: u32,
    #[serde(default)]
    location: Option<String>,
    link: Option<String>,
}

/// The 20 edits of the `edit_file` texts: `(type, line, rest)`, `rest` being the members
/// after the line.
const OPS: [(&str, u32, &str); 20] = [
    ("Insert", 1, r#""text":"use std::fmt;""#),
    ("Insert", 2, r#""text":"use std::io;""#),
    ("Delete", 5, ""),
    ("Replace", 8, r#""text":"fn main() {""#),
    ("Insert", 9, r#""text":"    let args = std::env::args();""#),
    ("Delete", 12, r#""count":3"#),
    (
        "Replace",
        14,
        r#""text":"    println!(\"{}\", args.len());""#,
    ),
    ("Insert", 20, r#""text":"}""#),
    ("Delete", 21, r#""count":2"#),
    ("Replace", 30, r#""text":"impl fmt::Display for Report {""#),
    (
        "Insert",
        31,
        r#""text":"    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {""#,
    ),
    ("Delete", 33, ""),
    (
        "Replace",
        40,
        r#""text":"        write!(f, \"{} lines\", self.lines)""#,
    ),
    ("Insert", 41, r#""text":"    }""#),
    ("Delete", 45, r#""count":10"#),
    ("Replace", 50, r#""text":"}""#),
    ("Insert", 51, r#""text":"""#),
    ("Delete", 60, ""),
    ("Replace", 61, r#""text":"// end of file""#),
    ("Insert", 62, r#""text":"""#),
];

/// An `edit_file` call of [`OPS`], each edit's tag first or last; `broken` replaces the edits
/// at the given indices by the given object texts.
fn edit_file(tag_first: bool, broken: &[(usize, &str)]) -> String {
    let ops: Vec<String> = OPS
        .iter()
        .enumerate()
        .map(|(i, (kind, line, rest))| {
            if let Some((_, text)) = broken.iter().find(|(at, _)| *at == i) {
                return (*text).to_owned();
            }
            let tag = format!(r#""type":"{kind}""#);
            let mut members = vec![format!(r#""line":{line}"#)];
            if !rest.is_empty() {
                members.push((*rest).to_owned());
            }
            if tag_first {
                members.insert(0, tag);
            } else {
                members.push(tag);
            }
            format!("{{{}}}", members.join(","))
        })
        .collect();
    format!(r#"{{"path":"src/main.rs","ops":[{}]}}"#, ops.join(","))
}

/// The `edit_file` payloads: 20 edits with the tag first (as models write it); the same with
/// the tag last (the members before it are held as values until it comes); the tag-first text
/// with three edits broken: an unknown tag in the 5th, a missing `text` in the 12th, a line
/// given as a string in the 19th.
pub(crate) fn edit_file_payloads() -> Vec<(&'static str, String)> {
    vec![
        ("valid", edit_file(true, &[])),
        ("valid_tag_last", edit_file(false, &[])),
        (
            "invalid3",
            edit_file(
                true,
                &[
                    (4, r#"{"type":"Move","line":9,"to":12}"#),
                    (11, r#"{"type":"Insert","line":33}"#),
                    (
                        18,
                        r#"{"type":"Replace","line":"61","text":"// end of file"}"#,
                    ),
                ],
            ),
        ),
    ]
}

/// A valid `create_event` call; `all_day`, `reminder_minutes` and `location` are left to
/// their defaults.
pub(crate) const EVENT_VALID: &str = r#"{"title":"Quarterly planning","start":"2026-03-02T09:30:00Z","end":"2026-03-02T11:00:00+01:00","organizer":"ada@example.com","attendees":["grace@example.com","alan@example.org","edsger@example.net","barbara@example.com"],"link":"https://meet.example.com/q1-planning?pwd=7f3a"}"#;

/// `create_event` with three violations: a date-time with no offset, an attendee who is not
/// an email address, and a reminder over a day.
pub(crate) const EVENT_INVALID3: &str = r#"{"title":"Quarterly planning","start":"2026-03-02T09:30:00","end":"2026-03-02T11:00:00+01:00","organizer":"ada@example.com","attendees":["grace@example.com","alan at example.org","edsger@example.net","barbara@example.com"],"reminder_minutes":2000,"link":"https://meet.example.com/q1-planning?pwd=7f3a"}"#;

/// The `create_event` payloads.
pub(crate) fn create_event_payloads() -> Vec<(&'static str, String)> {
    vec![
        ("valid", EVENT_VALID.to_owned()),
        ("invalid3", EVENT_INVALID3.to_owned()),
    ]
}

/// The validator of the obvious approach for `T`: its input schema, Draft 2020-12, formats
/// asserted (as `parse_arguments` asserts them; by default a 2020-12 validator only annotates).
pub(crate) fn validator<T: Tool>() -> jsonschema::Validator {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(T::input_schema())
        .expect("schema compiles")
}

/// The obvious approach: parse to a `Value`, validate, then `from_value` into the twin; every
/// error when invalid.
pub(crate) fn value_jsonschema<Twin: DeserializeOwned>(
    validator: &jsonschema::Validator,
    raw: &str,
) -> Result<Twin, Vec<String>> {
    let value: Value = serde_json::from_str(raw).map_err(|e| vec![e.to_string()])?;
    if validator.is_valid(&value) {
        serde_json::from_value(value).map_err(|e| vec![e.to_string()])
    } else {
        Err(validator
            .iter_errors(&value)
            .map(|error| format!("{}: {error}", error.instance_path()))
            .collect())
    }
}
