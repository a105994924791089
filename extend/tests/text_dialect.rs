//! A text dialect added from outside: `<<call>>{…}<</call>>`, read whole, streamed, rendered
//! back, and refused when malformed, through `tool_core::text_calls`'s public seam only.

use tool_core::ToolCall;
use tool_core::text_calls::{
    Block, Dialect, Dialects, Marker, TextDialect, TextError, read_call_objects,
};

const OPEN: &str = "<<call>>";
const CLOSE: &str = "<</call>>";

/// `<<call>>{"name": …, "arguments": {…}}<</call>>`, repeated for parallel calls.
#[derive(Debug)]
struct DoubleAngle;

impl TextDialect for DoubleAngle {
    fn name(&self) -> &'static str {
        "double-angle"
    }

    fn markers(&self) -> &'static [Marker] {
        const MARKERS: &[Marker] = &[Marker::opens(OPEN), Marker::closes(CLOSE)];
        MARKERS
    }

    fn read_block(
        &self,
        text: &str,
        start: usize,
        _marker: &Marker,
        complete: bool,
    ) -> Result<Option<Block>, TextError> {
        let (calls, end) = match read_call_objects(text, start + OPEN.len()) {
            Err(TextError::Unterminated { .. }) if !complete => return Ok(None),
            found => found?,
        };
        let rest = text[end..].trim_start();
        let at = text.len() - rest.len();
        if let Some(after) = rest.strip_prefix(CLOSE) {
            return Ok(Some(Block {
                calls,
                end: text.len() - after.len(),
            }));
        }
        if CLOSE.starts_with(rest) {
            if !complete {
                return Ok(None);
            }
            return Err(TextError::Unterminated {
                at,
                reason: format!("`{CLOSE}` is missing"),
            });
        }
        Err(TextError::Invalid {
            at,
            reason: format!("expected `{CLOSE}` after the call"),
        })
    }

    fn render(&self, calls: &[ToolCall]) -> Result<String, TextError> {
        let mut out = String::new();
        for (i, call) in calls.iter().enumerate() {
            let arguments = call.arguments_value().ok_or_else(|| TextError::Invalid {
                at: i,
                reason: "the arguments are not JSON".into(),
            })?;
            let object = serde_json::json!({"name": call.name(), "arguments": arguments});
            out.push_str(OPEN);
            out.push_str(&object.to_string());
            out.push_str(CLOSE);
        }
        Ok(out)
    }
}

const NAME: Dialect = Dialect::Custom("double-angle");

fn dialects() -> Dialects {
    Dialects::new().with(DoubleAngle).unwrap()
}

const REPLY: &str = "Checking both.\n<<call>>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}<</call>>\n<<call>>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}<</call>>\nOne moment.";

#[test]
fn read_whole_detected_and_named() {
    for named in [None, Some(NAME)] {
        let parsed = dialects().parse(REPLY, named).unwrap();
        assert_eq!(parsed.dialect(), Some(NAME));
        let calls: Vec<_> = parsed
            .calls()
            .iter()
            .map(|c| (c.name(), c.arguments()))
            .collect();
        assert_eq!(
            calls,
            [
                ("get_weather", r#"{"city": "Paris"}"#),
                ("get_weather", r#"{"city": "Oslo"}"#)
            ]
        );
        let prose: Vec<&str> = parsed.prose().iter().map(|r| &REPLY[r.clone()]).collect();
        assert_eq!(prose, ["Checking both.", "One moment."]);
    }
}

#[test]
fn streamed_in_every_split_matches_the_whole_read() {
    let whole = dialects().parse(REPLY, None).unwrap();
    for cut in 0..=REPLY.len() {
        for named in [None, Some(NAME)] {
            let mut stream = dialects().stream(named);
            let mut handed = Vec::new();
            handed.extend(stream.push(&REPLY.as_bytes()[..cut]).unwrap());
            handed.extend(stream.push(&REPLY.as_bytes()[cut..]).unwrap());
            // Each call is handed over once its `<</call>>` has arrived.
            assert_eq!(handed.len(), 2, "cut at {cut}");
            let reply = stream.finish().unwrap();
            assert_eq!(reply.parsed(), &whole);
            assert!(reply.remaining().is_empty());
        }
    }
    // A call is handed over as soon as it is complete, before the reply ends.
    let first = REPLY.find("<</call>>").unwrap() + CLOSE.len();
    let mut stream = dialects().stream(None);
    assert_eq!(stream.push(&REPLY[..first - 1]).unwrap(), []);
    assert_eq!(stream.push(&REPLY[first - 1..first]).unwrap().len(), 1);
}

#[test]
fn rendered_calls_read_back() {
    let calls = [
        ToolCall::new("c1", "get_weather", r#"{"city": "Paris"}"#),
        ToolCall::new(
            "c2",
            "search",
            r#"{"q": "<tool_call> and <<call>> quoted"}"#,
        ),
    ];
    let text = dialects().render(NAME, &calls).unwrap();
    let parsed = dialects().parse(&text, None).unwrap();
    assert_eq!(parsed.dialect(), Some(NAME));
    let read: Vec<_> = parsed.calls().iter().map(|c| c.name()).collect();
    assert_eq!(read, ["get_weather", "search"]);
    assert_eq!(
        parsed.calls()[1].arguments(),
        r#"{"q":"<tool_call> and <<call>> quoted"}"#
    );
    // A tool name holding any dialect's marker would be read as a call.
    let bad = [ToolCall::new("c1", "a<<call>>b", "{}")];
    assert!(matches!(
        dialects().render(NAME, &bad),
        Err(TextError::Invalid { .. })
    ));
}

#[test]
fn malformed_replies_are_refused() {
    let cases = [
        // Cut off inside the JSON, and before the closing marker.
        "<<call>>{\"name\": \"f\", \"argu",
        "<<call>>{\"name\": \"f\", \"arguments\": {}}",
        // Something else where the closing marker belongs.
        "<<call>>{\"name\": \"f\", \"arguments\": {}} and <</call>>",
        // A closing marker with no call open.
        "Done. <</call>>",
        // Not a call object.
        "<<call>>{\"title\": \"f\"}<</call>>",
        // Two dialects in one reply.
        "<<call>>{\"name\": \"f\", \"arguments\": {}}<</call>><tool_call>{\"name\": \"g\", \"arguments\": {}}</tool_call>",
        "<tool_call>{\"name\": \"g\", \"arguments\": {}}</tool_call><<call>>{\"name\": \"f\", \"arguments\": {}}<</call>>",
    ];
    for text in cases {
        assert!(dialects().parse(text, None).is_err(), "{text}");
        let mut stream = dialects().stream(None);
        let streamed = stream.push(text).and_then(|_| stream.finish());
        assert!(streamed.is_err(), "streamed: {text}");
    }
    let mixed = dialects().parse(cases[5], None).unwrap_err();
    assert_eq!(
        mixed,
        TextError::Ambiguous {
            dialects: vec![Dialect::Hermes, NAME]
        }
    );
}

#[test]
fn a_marker_in_a_string_or_inline_code_opens_nothing() {
    for text in [
        "Write `<<call>>{\"name\": \"f\", \"arguments\": {}}<</call>>` to call f.",
        "<tool_call>{\"name\": \"search\", \"arguments\": {\"q\": \"<<call>>{}<</call>>\"}}</tool_call>",
    ] {
        let parsed = dialects().parse(text, None).unwrap();
        assert_ne!(parsed.dialect(), Some(NAME), "{text}");
        assert!(parsed.calls().iter().all(|c| c.name() != "f"));
    }
}

#[test]
fn a_dialect_that_clashes_is_refused() {
    #[derive(Debug)]
    struct Clash(&'static str, &'static [Marker]);
    impl TextDialect for Clash {
        fn name(&self) -> &'static str {
            self.0
        }
        fn markers(&self) -> &'static [Marker] {
            self.1
        }
        fn read_block(
            &self,
            _: &str,
            _: usize,
            _: &Marker,
            _: bool,
        ) -> Result<Option<Block>, TextError> {
            Ok(None)
        }
        fn render(&self, _: &[ToolCall]) -> Result<String, TextError> {
            Ok(String::new())
        }
    }
    const X: &[Marker] = &[Marker::opens("<x>")];
    const PREFIX: &[Marker] = &[Marker::opens("<tool_call")];
    const PLAIN: &[Marker] = &[Marker::opens("call:")];
    const NO_OPENER: &[Marker] = &[Marker::closes("<x>")];
    for clash in [
        Clash("hermes", X),
        Clash("x", PREFIX),
        Clash("x", PLAIN),
        Clash("x", NO_OPENER),
    ] {
        assert!(matches!(
            dialects().with(clash),
            Err(TextError::Dialect { .. })
        ));
    }
    // A dialect not added is refused, not guessed at.
    assert!(matches!(
        Dialects::new().parse(REPLY, Some(NAME)),
        Err(TextError::Dialect { .. })
    ));
}

#[test]
fn a_block_read_outside_the_text_is_refused() {
    #[derive(Debug)]
    struct Faulty;
    impl TextDialect for Faulty {
        fn name(&self) -> &'static str {
            "faulty"
        }
        fn markers(&self) -> &'static [Marker] {
            const MARKERS: &[Marker] = &[Marker::opens("<faulty>")];
            MARKERS
        }
        fn read_block(
            &self,
            _: &str,
            start: usize,
            _: &Marker,
            _: bool,
        ) -> Result<Option<Block>, TextError> {
            Ok(Some(Block {
                calls: Vec::new(),
                end: start,
            }))
        }
        fn render(&self, _: &[ToolCall]) -> Result<String, TextError> {
            Ok(String::new())
        }
    }
    let set = Dialects::new().with(Faulty).unwrap();
    assert!(set.parse("a <faulty> b", None).is_err());
    let mut stream = set.stream(None);
    assert!(stream.push("a <faulty> b").is_err());
}

/// [`DoubleAngle`], counting the bytes it is handed to read.
#[derive(Debug)]
struct Counting(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl TextDialect for Counting {
    fn name(&self) -> &'static str {
        DoubleAngle.name()
    }

    fn markers(&self) -> &'static [Marker] {
        DoubleAngle.markers()
    }

    fn read_block(
        &self,
        text: &str,
        start: usize,
        marker: &Marker,
        complete: bool,
    ) -> Result<Option<Block>, TextError> {
        self.0
            .fetch_add(text.len() - start, std::sync::atomic::Ordering::Relaxed);
        DoubleAngle.read_block(text, start, marker, complete)
    }

    fn render(&self, calls: &[ToolCall]) -> Result<String, TextError> {
        DoubleAngle.render(calls)
    }
}

#[test]
fn a_block_streamed_byte_by_byte_is_read_in_work_linear_in_its_length() {
    // A dialect reads its block from the start each time; the stream must not ask it again
    // for every byte, or one long call streamed in small chunks takes time quadratic in its
    // length.
    for size in [4_000, 16_000] {
        let call = format!(
            "<<call>>{{\"name\": \"note\", \"arguments\": {{\"text\": \"{}\"}}}}<</call>>",
            "a".repeat(size)
        );
        let read = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let dialects = Dialects::new()
            .with(Counting(std::sync::Arc::clone(&read)))
            .unwrap();
        let mut stream = dialects.stream(Some(NAME));
        let mut handed = Vec::new();
        for byte in call.as_bytes().chunks(1) {
            handed.extend(stream.push(byte).unwrap());
        }
        let reply = stream.finish().unwrap();
        assert_eq!(reply.parsed().calls().len(), 1);
        assert!(handed.len() <= 1);
        let read = read.load(std::sync::atomic::Ordering::Relaxed);
        assert!(
            read <= 5 * call.len(),
            "a {}-byte block streamed byte by byte was read {read} bytes",
            call.len()
        );
    }
}
