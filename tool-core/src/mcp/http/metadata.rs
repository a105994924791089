//! OAuth 2.0 Protected Resource Metadata (RFC 9728): the document that tells a client which
//! authorization servers issue tokens for this server, and where the document is, named in
//! the `WWW-Authenticate` challenge of every refusal of a token.

use axum::body::Body;
use axum::response::Response;
use http::header::{ACCESS_CONTROL_ALLOW_ORIGIN, CACHE_CONTROL, CONTENT_TYPE, HOST, VARY};
use http::uri::Authority;
use http::{HeaderMap, HeaderValue, StatusCode, Uri};

/// Where RFC 9728 puts the document: inserted between a resource's authority and its path.
pub(super) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The names a server on loopback answers to when the application lists none (rmcp's own).
const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// What the metadata says, and how the resource's URL is found.
pub(super) struct ProtectedResource {
    /// The resource's URL as the application gave it; otherwise `http://{Host}{path}`.
    resource: Option<Uri>,
    path: String,
    authorization_servers: Vec<String>,
    allowed_hosts: Option<Vec<String>>,
}

impl ProtectedResource {
    pub(super) fn new(
        resource: Option<Uri>,
        path: String,
        authorization_servers: Vec<String>,
        allowed_hosts: Option<Vec<String>>,
    ) -> ProtectedResource {
        // RFC 9728 drops a resource's lone `/` before inserting the well-known path.
        let path = if path == "/" { String::new() } else { path };
        ProtectedResource {
            resource,
            path,
            authorization_servers,
            allowed_hosts,
        }
    }

    /// The resource's URL (scheme and authority, then its path), for a request with
    /// `headers`; `None` when it is not configured and the request's `Host` is not one the
    /// server answers to.
    fn resource(&self, headers: &HeaderMap) -> Option<(String, String)> {
        if let Some(resource) = &self.resource {
            let origin = format!("{}://{}", resource.scheme_str()?, resource.authority()?);
            let path = match resource.path() {
                "/" => String::new(),
                path => path.to_owned(),
            };
            return Some((origin, path));
        }
        let host = headers.get(HOST)?.to_str().ok()?;
        let authority = Authority::try_from(host).ok()?;
        self.answers_to(&authority)
            .then(|| (format!("http://{authority}"), self.path.clone()))
    }

    fn answers_to(&self, host: &Authority) -> bool {
        let allowed: Vec<&str> = match &self.allowed_hosts {
            Some(hosts) if hosts.is_empty() => return true,
            Some(hosts) => hosts.iter().map(String::as_str).collect(),
            None => LOOPBACK.to_vec(),
        };
        let name = |host: &str| host.trim_matches(['[', ']']).to_ascii_lowercase();
        allowed.iter().any(|entry| {
            let (entry_host, entry_port) = match Authority::try_from(entry.trim()) {
                Ok(entry) => (name(entry.host()), entry.port_u16()),
                Err(_) => (name(entry.trim()), None),
            };
            entry_host == name(host.host())
                && entry_port.is_none_or(|port| host.port_u16() == Some(port))
        })
    }

    /// The URL of the metadata document, for the `resource_metadata` of a challenge.
    pub(super) fn document_url(&self, headers: &HeaderMap) -> Option<String> {
        let (origin, path) = self.resource(headers)?;
        Some(format!("{origin}{WELL_KNOWN}{path}"))
    }

    /// The metadata document, or 403 when the resource's URL cannot be told.
    pub(super) fn document(&self, headers: &HeaderMap) -> Response {
        let Some((origin, path)) = self.resource(headers) else {
            let mut response = Response::new(Body::from("the Host header is not allowed"));
            *response.status_mut() = StatusCode::FORBIDDEN;
            response
                .headers_mut()
                .insert(VARY, HeaderValue::from_static("host"));
            return response;
        };
        let mut document = serde_json::json!({
            "resource": format!("{origin}{path}"),
            "bearer_methods_supported": ["header"],
        });
        if !self.authorization_servers.is_empty() {
            document["authorization_servers"] = serde_json::json!(self.authorization_servers);
        }
        let mut response = Response::new(Body::from(document.to_string()));
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        // Public by design, and fetched by browser-based clients from their own origin.
        headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        if self.resource.is_some() {
            headers.insert(CACHE_CONTROL, HeaderValue::from_static("max-age=3600"));
        } else {
            // Derived from the request's `Host`: another Host gets another document, and a
            // cache must not hand this one to it.
            headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
            headers.insert(VARY, HeaderValue::from_static("host"));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(HOST, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn the_document_url_inserts_the_well_known_path_before_the_resource_path() {
        let derived = ProtectedResource::new(None, "/mcp".to_owned(), Vec::new(), None);
        assert_eq!(
            derived.document_url(&host("127.0.0.1:8080")).as_deref(),
            Some("http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(
            derived.document_url(&host("[::1]:9")).as_deref(),
            Some("http://[::1]:9/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(derived.document_url(&host("evil.example")), None);
        assert_eq!(derived.document_url(&HeaderMap::new()), None);

        let listed = ProtectedResource::new(
            None,
            "/mcp".to_owned(),
            Vec::new(),
            Some(vec!["mcp.example:8443".to_owned()]),
        );
        assert!(listed.document_url(&host("MCP.example:8443")).is_some());
        assert_eq!(listed.document_url(&host("mcp.example:8444")), None);

        let configured = ProtectedResource::new(
            Some(Uri::from_static("https://mcp.example/tools/mcp")),
            "/mcp".to_owned(),
            Vec::new(),
            None,
        );
        assert_eq!(
            configured.document_url(&host("evil.example")).as_deref(),
            Some("https://mcp.example/.well-known/oauth-protected-resource/tools/mcp")
        );
    }

    fn header(response: &Response, name: http::header::HeaderName) -> Option<&str> {
        response.headers().get(name).and_then(|v| v.to_str().ok())
    }

    #[tokio::test]
    async fn a_document_derived_from_the_host_varies_with_it_and_is_not_stored() {
        // With no hosts listed, any Host is answered, and named in the document.
        let any_host =
            ProtectedResource::new(None, "/mcp".to_owned(), Vec::new(), Some(Vec::new()));
        for name in ["evil.example", "mcp.example:8443"] {
            let response = any_host.document(&host(name));
            assert_eq!(response.status(), StatusCode::OK);
            assert_eq!(header(&response, VARY), Some("host"));
            assert_eq!(header(&response, CACHE_CONTROL), Some("no-store"));
            let body = axum::body::to_bytes(response.into_body(), 4096)
                .await
                .unwrap();
            let document: serde_json::Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(document["resource"], format!("http://{name}/mcp"));
        }
        // The refusal of a Host not answered to depends on it too.
        let loopback = ProtectedResource::new(None, "/mcp".to_owned(), Vec::new(), None);
        let refused = loopback.document(&host("evil.example"));
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
        assert_eq!(header(&refused, VARY), Some("host"));
        // A configured resource is the same for every Host, and may be kept an hour.
        let configured = ProtectedResource::new(
            Some(Uri::from_static("https://mcp.example/mcp")),
            "/mcp".to_owned(),
            Vec::new(),
            Some(Vec::new()),
        );
        let response = configured.document(&host("evil.example"));
        assert_eq!(header(&response, CACHE_CONTROL), Some("max-age=3600"));
        assert_eq!(header(&response, VARY), None);
    }
}
