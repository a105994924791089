//! `url::Url`.

use url::Url;

use super::formatted::{Shape, formatted};
use crate::contract::format::Format;

const URL: Shape = Shape {
    format: Some(Format::Uri),
    pattern: None,
    looks_like: "an absolute URL such as https://example.com/path",
};

formatted! {
    #[cfg_attr(docsrs, doc(cfg(feature = "url")))]
    /// A string of format `uri` (an absolute RFC 3986 URI) that the WHATWG URL parser of the
    /// `url` crate also reads, as the value it reads (normalized: `HTTP://Example.COM` is
    /// `http://example.com/`).
    ///
    /// Some URIs of the format are not URLs to that parser, so a `Url` cannot hold them: they
    /// are refused with `format` although a JSON Schema validator accepts them (no schema
    /// keyword can say which, so the advertised schema stays `format: uri`). They are exactly
    /// the URIs the WHATWG URL standard refuses:
    ///
    /// - a port above 65535 (`http://example.com:99999`), or one that is not a number, as
    ///   when a special scheme's authority is read from a single slash (`http:/a:b`);
    /// - a host that is a malformed IPv4 address (`http://256.256.256.256/`), an IP literal of
    ///   a future version (`http://[v1.x]/`), an A-label that is not valid Punycode
    ///   (`http://xn--a.example/`), or a percent-encoded host naming a character no host may
    ///   hold (`http://a%20`);
    /// - a special scheme without a host (`http:`, `https:/path`), and an empty host before a
    ///   port (`p://:`).
    Url => URL, |s| Url::parse(s).map_err(|error| error.to_string()),
        |url| Some(url.as_str().to_owned());
}
