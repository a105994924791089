use tool_core::Argument;

#[derive(Argument)]
#[serde(content = "c")]
enum ContentWithoutTag {
    A(u8),
}

#[derive(Argument)]
#[serde(tag = "t", untagged)]
enum TaggedAndUntagged {
    A(u8),
}

#[derive(Argument)]
#[serde(tag = "t", content = "t")]
enum SameKeys {
    A(u8),
}

#[derive(Argument)]
#[serde(tag = "kind")]
enum TagIsAField {
    A { kind: String },
}

#[derive(Argument)]
#[serde(tag = "kind")]
struct TagOnStruct {
    a: u8,
}

fn main() {}
