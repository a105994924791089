//! `uuid::Uuid`.

use uuid::Uuid;

use super::formatted::{Shape, formatted};
use crate::contract::format::Format;

const UUID: Shape = Shape {
    format: Some(Format::Uuid),
    pattern: None,
    looks_like: "a hyphenated UUID such as 67e55044-10b1-426f-9247-bb680e5fe0c8",
};

formatted! {
    #[cfg_attr(docsrs, doc(cfg(feature = "uuid")))]
    /// A string of format `uuid`: the hyphenated form, hex digits in either case. The other
    /// forms `Uuid` parses (simple, braced, `urn:uuid:`) are not of the format and are refused.
    Uuid => UUID, |s| Uuid::parse_str(s).map_err(|error| error.to_string()),
        |id| Some(id.hyphenated().to_string());
}
