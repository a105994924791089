//! The SSE decoder (`SseDecoder`, `sse_events`) and `json_lines` on arbitrary bytes.
//!
//! Input: the provider-target layout (see `tool_fuzz::Input`): the split lengths cut the body
//! into the pieces fed to the decoder. Checked: the events do not depend on the cuts, UTF-8
//! text decodes to the same events through `sse_events`, no event data holds a line break
//! other than the `\n` joining `data:` lines, and every event's JSON answer is consistent.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tool_core::providers::{json_lines, sse_events};

fuzz_target!(|data: &[u8]| {
    let input = tool_fuzz::Input::parse(data);
    let events = tool_fuzz::sse_events_split(input.body, &input.splits);
    for event in &events {
        assert!(!event.data.contains('\r'), "a CR inside event data: {event:?}");
        if let Some(name) = &event.event {
            assert!(!name.contains(['\r', '\n']), "a line break in an event name: {event:?}");
        }
        match event.json() {
            None => assert!(event.is_done()),
            Some(Ok(value)) => assert!(!event.is_done(), "[DONE] parsed as {value}"),
            Some(Err(_)) => {}
        }
    }
    if let Ok(text) = std::str::from_utf8(input.body) {
        assert_eq!(sse_events(text), events, "sse_events differs from the decoder");
        if let Ok(values) = json_lines(text) {
            let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
            assert!(values.len() <= lines);
        }
    }
});
