//! The `Origin` allow-list: which web pages' scripts may reach the server.

use http::{HeaderMap, Uri};

/// An origin as compared: scheme and host in lowercase, the port made explicit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Origin {
    /// `Origin: null` (sandboxed frames, local files).
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: u16,
    },
}

impl Origin {
    /// `scheme://host[:port]`, or `null`; `None` for anything else (a path, no scheme...).
    pub(super) fn parse(text: &str) -> Option<Origin> {
        let text = text.trim();
        if text == "null" {
            return Some(Origin::Null);
        }
        let uri: Uri = text.parse().ok()?;
        if uri
            .path_and_query()
            .is_some_and(|path| path.as_str() != "/")
        {
            return None;
        }
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let authority = uri.authority()?;
        if authority.as_str().contains('@') {
            return None;
        }
        let port = match (authority.port_u16(), scheme.as_str()) {
            (Some(port), _) => port,
            (None, "http") => 80,
            (None, "https") => 443,
            (None, _) => return None,
        };
        Some(Origin::Tuple {
            scheme,
            host: authority.host().to_ascii_lowercase(),
            port,
        })
    }
}

/// Whether the request may go on: no `Origin` header, or exactly one that is on `allowed`.
pub(super) fn allowed(headers: &HeaderMap, allowed: &[Origin]) -> bool {
    let mut values = headers.get_all(http::header::ORIGIN).iter();
    let Some(value) = values.next() else {
        return true;
    };
    if values.next().is_some() {
        return false;
    }
    value
        .to_str()
        .ok()
        .and_then(Origin::parse)
        .is_some_and(|origin| allowed.contains(&origin))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_scheme_host_and_port() {
        let list: Vec<Origin> = ["https://App.example", "http://localhost:5173"]
            .iter()
            .filter_map(|text| Origin::parse(text))
            .collect();
        let check = |origin: Option<&str>| {
            let mut headers = HeaderMap::new();
            if let Some(origin) = origin {
                headers.insert(http::header::ORIGIN, origin.parse().unwrap());
            }
            allowed(&headers, &list)
        };
        assert!(check(None));
        assert!(check(Some("https://app.example")));
        assert!(check(Some("https://app.example:443")));
        assert!(check(Some("http://localhost:5173")));
        assert!(!check(Some("http://app.example")));
        assert!(!check(Some("https://app.example:8443")));
        assert!(!check(Some("http://localhost:5174")));
        assert!(!check(Some("https://evil.example")));
        assert!(!check(Some("null")));
        assert!(!check(Some("not an origin")));
        assert_eq!(Origin::parse("https://a.example/path"), None);
        assert_eq!(Origin::parse("https://user@a.example"), None);
    }
}
