//! `extract_json` on the ways a model writes a tool call into its text (prose, fences, tags),
//! on what must not fool it (brackets and quotes inside strings, nesting, invalid
//! candidates), on adversarial megabytes, and the law that JSON dropped into prose comes back
//! byte for byte.

use examples::{GetWeather, Units};
use proptest::prelude::*;
use serde_json::{Map, Value};
use tool_core::{
    Tool,
    extract::{ExtractError, Source, extract_json, extract_json_object},
};

/// The value found, with its source; checks that the span and the slice agree.
fn found(text: &str) -> (&str, Source) {
    let found = extract_json(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    assert_eq!(&text[found.span()], found.json());
    (found.json(), found.source())
}

fn ambiguous_count(text: &str) -> usize {
    match extract_json(text) {
        Err(ExtractError::Ambiguous { count, .. }) => count,
        other => panic!("{text:?}: expected ambiguity, got {other:?}"),
    }
}

#[test]
fn finds_an_object_in_prose() {
    let text = r#"Sure! Here you go: {"city": "Paris", "units": "celsius"} hope that helps"#;
    let json = r#"{"city": "Paris", "units": "celsius"}"#;
    assert_eq!(found(text), (json, Source::Prose));
    assert_eq!(extract_json(text).unwrap().span(), 19..19 + json.len());
}

#[test]
fn extracted_arguments_go_through_the_strict_parse() {
    let reply =
        "I'll check.\n<tool_call>\n{\"city\": \"Oslo\", \"units\": \"celsius\"}\n</tool_call>";
    let args = GetWeather::parse_arguments(extract_json(reply).unwrap().json()).unwrap();
    assert_eq!((args.city.as_str(), args.units), ("Oslo", Units::Celsius));
}

#[test]
fn the_whole_text_is_the_value_when_it_is_json() {
    assert_eq!(found("  {\"a\": 1}\n"), ("{\"a\": 1}", Source::Whole));
    assert_eq!(
        found("[{\"a\": 1}, {\"b\": 2}]"),
        ("[{\"a\": 1}, {\"b\": 2}]", Source::Whole)
    );
    assert_eq!(extract_json("  {\"a\": 1}\n").unwrap().span(), 2..10);
}

#[test]
fn finds_a_json_fence() {
    let text = "Here:\n```json\n{\"a\": [1, 2]}\n```\nDone.";
    assert_eq!(found(text), ("{\"a\": [1, 2]}", Source::Fence));
    let text = "Here: ```JSON {\"a\": 1}``` done";
    assert_eq!(found(text), ("{\"a\": 1}", Source::Fence));
}

#[test]
fn finds_an_unlabelled_fence() {
    let text = "Here:\n```\n{\"a\": 1}\n```";
    assert_eq!(found(text), ("{\"a\": 1}", Source::Fence));
}

#[test]
fn fences_hide_prose() {
    let text = "For example {\"a\": 0}. The call:\n```json\n{\"a\": 1}\n```";
    assert_eq!(found(text), ("{\"a\": 1}", Source::Fence));
}

#[test]
fn ignores_fences_in_other_languages() {
    let text = "```python\nrequests.post(url, json={\"a\": 0})\n```\nArguments: {\"a\": 1}";
    assert_eq!(found(text), ("{\"a\": 1}", Source::Prose));
    let text = "```python\nx = {\"a\": 0}\n```\n```json\n{\"a\": 1}\n```";
    assert_eq!(found(text), ("{\"a\": 1}", Source::Fence));
    let text = "```python\nx = {\"a\": 0}\n```";
    assert_eq!(extract_json(text), Err(ExtractError::NotFound));
}

#[test]
fn finds_a_tool_call_tag() {
    let text = "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    assert_eq!(
        found(text),
        (
            "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}",
            Source::Tag
        )
    );
}

#[test]
fn tags_hide_prose_and_fences() {
    let text = "e.g. {\"a\": 0} ```json\n{\"a\": 2}\n```\n<tool_call>{\"a\": 1}</tool_call>";
    assert_eq!(found(text), ("{\"a\": 1}", Source::Tag));
}

#[test]
fn a_fence_inside_a_tag_is_searched() {
    let text = "<tool_call>\n```json\n{\"a\": 1}\n```\n</tool_call>";
    assert_eq!(found(text), ("{\"a\": 1}", Source::Tag));
}

#[test]
fn a_tag_cut_off_by_a_stop_sequence_still_counts() {
    assert_eq!(found("<tool_call>{\"a\": 1}"), ("{\"a\": 1}", Source::Tag));
}

#[test]
fn two_tags_are_ambiguous() {
    let text = "<tool_call>{\"a\": 1}</tool_call>\n<tool_call>{\"a\": 2}</tool_call>";
    assert_eq!(ambiguous_count(text), 2);
}

#[test]
fn brackets_and_quotes_inside_strings_are_not_structure() {
    let json = r#"{"code": "if (x) { y[0] = '}' } ]]", "q": "say \"{\" and \"[\""}"#;
    let text = format!("Call: {json} ok");
    assert_eq!(found(&text), (json, Source::Prose));
}

#[test]
fn escaped_quotes_and_backslashes_do_not_end_strings() {
    let json = r#"{"path": "C:\\dir\\", "quote": "\"}\""}"#;
    let text = format!("Use {json}.");
    assert_eq!(found(&text), (json, Source::Prose));
}

#[test]
fn fences_and_tags_inside_strings_are_not_structure() {
    let json = r#"{"readme": "```sh\ncargo run\n```", "note": "<tool_call>x</tool_call>"}"#;
    let text = format!("Writing the file: {json}");
    assert_eq!(found(&text), (json, Source::Prose));
}

#[test]
fn two_values_in_prose_are_ambiguous() {
    let text = r#"Either {"city": "Paris"} then {"city": "Lyon"}"#;
    assert_eq!(
        extract_json(text),
        Err(ExtractError::Ambiguous {
            count: 2,
            spans: vec![7..24, 30..46]
        })
    );
    assert_eq!(
        extract_json(text).unwrap_err().to_string(),
        "found 2 JSON values (at bytes 7..24 and 30..46); send exactly one"
    );
}

#[test]
fn an_array_beside_an_object_is_ambiguous() {
    assert_eq!(ambiguous_count(r#"As in [{"a": 0}], send {"a": 1}"#), 2);
}

#[test]
fn nested_values_count_once() {
    let json = r#"{"a": {"b": {"c": [1, [2, {"d": 3}]]}}}"#;
    assert_eq!(found(&format!("x {json} y")), (json, Source::Prose));
}

#[test]
fn invalid_candidates_are_ignored() {
    let text = r#"Use {not json} or [a link] like this: {"a": 1} (not {'a': 2})"#;
    assert_eq!(found(text), ("{\"a\": 1}", Source::Prose));
}

#[test]
fn the_inside_of_an_invalid_span_is_not_searched() {
    assert_eq!(
        extract_json(r#"{note: {"a": 1}}"#),
        Err(ExtractError::NotFound)
    );
}

#[test]
fn an_unclosed_bracket_in_prose_does_not_hide_a_value() {
    let text = r#"Smile :-{ here it is: {"a": 1}"#;
    assert_eq!(found(text), ("{\"a\": 1}", Source::Prose));
}

#[test]
fn a_value_cut_short_is_unterminated() {
    let text = r#"Calling: {"city": "Par"#;
    let error = extract_json(text).unwrap_err();
    assert_eq!(error, ExtractError::Unterminated { opener: '{', at: 9 });
    assert_eq!(
        error.to_string(),
        "the `{` at byte 9 is never closed; send one complete JSON value"
    );
}

// Real outputs cut at a stop sequence: a Hermes-style envelope one `}` short. Its inner
// `arguments` object used to come back as the call, from inside a value that never closed.
#[test]
fn a_tag_one_brace_short_is_unterminated_not_its_inner_object() {
    let unterminated = Err(ExtractError::Unterminated {
        opener: '{',
        at: 12,
    });
    let cut = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}";
    assert_eq!(extract_json(cut), unterminated);
    assert_eq!(extract_json(&format!("{cut}\n</tool_call>")), unterminated);
    // A tag holds a call, so any bracket left open in it means a value cut short.
    let unquoted = "<tool_call> {name: get_weather, arguments: {\"city\": \"Paris\"}</tool_call>";
    assert_eq!(extract_json(unquoted), unterminated);
}

#[test]
fn a_value_cut_short_in_prose_hides_its_parts() {
    let text = r#"Calling: {"name": "get_weather", "arguments": {"city": "Paris"}"#;
    assert_eq!(
        extract_json(text),
        Err(ExtractError::Unterminated { opener: '{', at: 9 })
    );
    let text = r#"Calls: [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": 1}"#;
    assert_eq!(
        extract_json(text),
        Err(ExtractError::Unterminated { opener: '[', at: 7 })
    );
    // The bracket named is the one that starts the value, not a smiley before it.
    let text = r#":-{ calling {"name": "f", "arguments": {"a": 1}"#;
    assert_eq!(
        extract_json(text),
        Err(ExtractError::Unterminated {
            opener: '{',
            at: 12
        })
    );
}

// Python-style calls seen in real outputs: `[f(..)][0]` gave `[0]`, `k=[n, n]` gave `[n, n]`.
#[test]
fn an_index_after_a_call_list_is_not_a_value() {
    for text in [
        r#"[get_weather(city="Paris")][0]"#,
        r#"[{"city": "Paris"}][0]"#,
        r#"results = search(q="rust")[{"k": 1}]"#,
    ] {
        assert_eq!(extract_json(text), Err(ExtractError::NotFound), "{text}");
    }
}

#[test]
fn keyword_argument_values_are_not_values() {
    for text in [
        r#"get_coordinates(city="Paris", bbox=[2, 48])"#,
        r#"search(query="rust", filters={"lang": "en"})"#,
        r#"search(query="rust", filters = [{"lang": "en"}])"#,
        "```python\nx = 1\n```\n```\nsearch(filters={\"lang\": \"en\"})\n```",
        r#"<tool_call>search(filters={"lang": "en"})</tool_call>"#,
    ] {
        assert_eq!(extract_json(text), Err(ExtractError::NotFound), "{text}");
    }
}

#[test]
fn values_used_as_operands_in_code_do_not_count() {
    for text in [
        r#"keys = {"a": 1}.keys()"#,
        r#"rows[{"id": 1}]"#,
        r#"{"a": 1}["a"]"#,
    ] {
        assert_eq!(extract_json(text), Err(ExtractError::NotFound), "{text}");
    }
}

#[test]
fn a_value_passed_to_a_call_in_prose_still_counts() {
    let text = r#"I will call get_weather({"city": "Paris"}) now."#;
    assert_eq!(found(text), (r#"{"city": "Paris"}"#, Source::Prose));
}

#[test]
fn empty_and_scalar_arrays_in_prose_do_not_count() {
    for text in [
        "The answer is [1, 2].",
        "Nothing to do: []",
        r#"Tags: ["a", "b"]"#,
        "See [1] and [2]",
        "```\n[1, 2]\n```",
    ] {
        assert_eq!(extract_json(text), Err(ExtractError::NotFound), "{text:?}");
    }
    let text = r#"As in [1], send {"a": 1}"#;
    assert_eq!(found(text), (r#"{"a": 1}"#, Source::Prose));
    let text = r#"Calls: [{"name": "a"}]"#;
    assert_eq!(found(text), (r#"[{"name": "a"}]"#, Source::Prose));
    let text = "Matrix: [[1, 2], [3, 4]]";
    assert_eq!(found(text), ("[[1, 2], [3, 4]]", Source::Prose));
}

#[test]
fn a_place_marked_as_json_keeps_any_array() {
    assert_eq!(found("```json\n[1, 2]\n```"), ("[1, 2]", Source::Fence));
    assert_eq!(found("<tool_call>[]</tool_call>"), ("[]", Source::Tag));
    assert_eq!(found(" [] "), ("[]", Source::Whole));
}

// A caller after a tool's arguments: an array, or an object inside one, is never handed over.
#[test]
fn extract_json_object_gives_a_whole_object_or_a_refusal() {
    let text = r#"Sure: {"city": "Paris"}"#;
    let found = extract_json_object(text).unwrap();
    assert_eq!(
        (found.json(), found.source()),
        (r#"{"city": "Paris"}"#, Source::Prose)
    );
    let list = r#"Calls: [{"city": "Paris"}]"#;
    let error = extract_json_object(list).unwrap_err();
    assert_eq!(error, ExtractError::NotAnObject { span: 7..26 });
    assert_eq!(
        error.to_string(),
        "found a JSON array at bytes 7..26; send one JSON object"
    );
    assert_eq!(
        extract_json_object("<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}"),
        Err(ExtractError::Unterminated {
            opener: '{',
            at: 11
        })
    );
    assert_eq!(
        extract_json_object(r#"f(filters={"a": 1})"#),
        Err(ExtractError::NotFound)
    );
    assert_eq!(
        extract_json_object(r#"[{"a": 1}] or {"a": 2}"#),
        Err(ExtractError::Ambiguous {
            count: 2,
            spans: vec![0..10, 14..22]
        })
    );
}

#[test]
fn handles_unicode() {
    let json = r#"{"ville": "Zürich 🏔", "note": "«{}»"}"#;
    let text = format!("Voilà 🙂: {json} — merci");
    assert_eq!(found(&text), (json, Source::Prose));
    assert_eq!(
        extract_json(&text).unwrap().span().start,
        "Voilà 🙂: ".len()
    );
}

#[test]
fn empty_and_blank_text_hold_nothing() {
    for text in ["", "   \n\t", "no json here", "42", "\"a string\""] {
        assert_eq!(extract_json(text), Err(ExtractError::NotFound), "{text:?}");
    }
    assert_eq!(
        ExtractError::NotFound.to_string(),
        "found no JSON object or array; send exactly one"
    );
}

/// One mebibyte of `unit`, repeated.
fn mebibyte(unit: &str) -> String {
    unit.repeat((1 << 20) / unit.len())
}

#[test]
fn adversarial_megabytes_get_the_right_answer() {
    let unterminated = |opener, at| Err(ExtractError::Unterminated { opener, at });
    let cases = [
        ("{", unterminated('{', 0)),
        ("[", unterminated('[', 0)),
        ("`", Err(ExtractError::NotFound)),
        ("\"", Err(ExtractError::NotFound)),
        ("<tool_call>", Err(ExtractError::NotFound)),
        ("</tool_call>", Err(ExtractError::NotFound)),
        ("<tool_call>{", unterminated('{', 11)),
        ("{\"", unterminated('{', 0)),
        ("\\\"", Err(ExtractError::NotFound)),
        ("```json\n{", unterminated('{', 8)),
        ("<", Err(ExtractError::NotFound)),
        ("[}", unterminated('[', 0)),
    ];
    for (unit, expected) in cases {
        let text = mebibyte(unit);
        assert_eq!(extract_json(&text), expected, "1 MiB of {unit:?}");
    }
}

#[test]
fn adversarial_megabytes_of_candidates_are_counted() {
    assert_eq!(ambiguous_count(&mebibyte("{} ")), (1 << 20) / 3);
    assert_eq!(ambiguous_count(&mebibyte("[{}] ")), (1 << 20) / 5);
    assert_eq!(ambiguous_count(&mebibyte("```\n{}\n```\n")), (1 << 20) / 11);
}

#[test]
fn deep_nesting_is_one_value() {
    let depth = 1 << 19;
    let json = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    assert_eq!(found(&json).1, Source::Whole);
    let text = format!("deep: {json}!");
    assert_eq!(found(&text), (json.as_str(), Source::Prose));
}

/// Strings that look like structure: brackets, quotes, backslashes, fences and tags.
fn tricky_string() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-z {}\\[\\]\"\\\\`<>/\n]{0,12}",
        Just("<tool_call>".to_owned()),
        Just("```json\n{".to_owned()),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        tricky_string().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            json_object(inner),
        ]
    })
}

fn json_object(values: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    prop::collection::btree_map(tricky_string(), values, 0..6)
        .prop_map(|map| Value::Object(map.into_iter().collect::<Map<_, _>>()))
}

/// Prose with none of the characters that open a candidate, a fence or a tag, nor an `=` that
/// would make a value after it an assignment's.
const PROSE: &str = "[^{}\\[\\]`<=]{0,40}";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn an_object_in_prose_comes_back_exactly(
        prefix in PROSE,
        object in json_object(json_value()),
        suffix in PROSE,
        pretty in any::<bool>(),
    ) {
        let json = if pretty {
            serde_json::to_string_pretty(&object).unwrap()
        } else {
            serde_json::to_string(&object).unwrap()
        };
        // Separated from the prose, as a value is in a sentence.
        let text = format!("{prefix} {json} {suffix}");
        let found = extract_json(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(found.json(), json.as_str());
        prop_assert_eq!(found.span().start, prefix.len() + 1);
    }

    /// A reply cut short anywhere inside an object, in prose or in a tag, gives a refusal,
    /// never one of the object's parts.
    #[test]
    fn an_object_cut_short_never_yields_a_part(
        prefix in PROSE,
        object in json_object(json_value()),
        cut in any::<prop::sample::Index>(),
        tagged in any::<bool>(),
        pretty in any::<bool>(),
    ) {
        let json = if pretty {
            serde_json::to_string_pretty(&object).unwrap()
        } else {
            serde_json::to_string(&object).unwrap()
        };
        let ends: Vec<usize> = (1..json.len()).filter(|&i| json.is_char_boundary(i)).collect();
        prop_assume!(!ends.is_empty());
        let part = &json[..ends[cut.index(ends.len())]];
        let text = if tagged {
            format!("{prefix}<tool_call>{part}")
        } else {
            format!("{prefix}{part}")
        };
        let result = extract_json(&text);
        prop_assert!(result.is_err(), "{:?} gave {:?}", text, result);
    }
}
