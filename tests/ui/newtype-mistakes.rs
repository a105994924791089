use tool_core::{Argument, Tool};

/// A newtype cannot be a tool.
#[derive(Tool)]
struct Query(String);

#[derive(Argument)]
#[serde(transparent)]
struct TwoFields {
    a: String,
    b: String,
}

#[derive(Argument)]
struct Pair(u8, u8);

#[derive(Argument)]
struct Defaulted(#[serde(default)] u8);

#[derive(Argument)]
#[serde(transparent)]
enum NotAStruct {
    A,
}

fn main() {}
