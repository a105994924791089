//! Who is calling: the bearer token read from `Authorization`, and the application's answer.

use std::fmt;
use std::future::Future;

use http::header::AUTHORIZATION;
use http::request::Parts;
use http::{HeaderMap, HeaderValue, StatusCode};

use crate::context::Context;

/// Longest token read from `Authorization`, in bytes; a longer one is refused as malformed
/// before the application sees it.
pub(super) const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// Turns a bearer token into the trusted [`Context`] the session's calls run with.
///
/// A plain closure `Fn(&str, &http::request::Parts) -> Result<Context, AuthError>` is an
/// `Authenticate`; implement the trait on a type of your own when the check is asynchronous
/// (a database, a token introspection endpoint). The token is the text after `Bearer `; the
/// request's method, URI and headers are there for checks of your own (the `Authorization`
/// header among them: do not log it).
///
/// The principal and tenant of the context are who the session belongs to: see
/// [`McpHttp`](super::McpHttp).
pub trait Authenticate: Send + Sync + 'static {
    /// The context for `token`, or why it is refused.
    fn authenticate(
        &self,
        token: &str,
        request: &Parts,
    ) -> impl Future<Output = Result<Context, AuthError>> + Send;
}

impl<F> Authenticate for F
where
    F: Fn(&str, &Parts) -> Result<Context, AuthError> + Send + Sync + 'static,
{
    fn authenticate(
        &self,
        token: &str,
        request: &Parts,
    ) -> impl Future<Output = Result<Context, AuthError>> + Send {
        std::future::ready(self(token, request))
    }
}

/// Why a bearer token is refused. The HTTP reply says which, and never repeats the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthError {
    /// Not a token the application knows (unknown, revoked, badly signed): HTTP 401,
    /// `error="invalid_token"`.
    InvalidToken,
    /// A token the application issued, past its expiry: HTTP 401, `error="invalid_token"`,
    /// described as expired.
    Expired,
    /// A valid token that may not use this server: HTTP 403, `error="insufficient_scope"`.
    Forbidden,
}

impl AuthError {
    pub(super) fn status(self) -> StatusCode {
        match self {
            AuthError::InvalidToken | AuthError::Expired => StatusCode::UNAUTHORIZED,
            AuthError::Forbidden => StatusCode::FORBIDDEN,
        }
    }

    pub(super) fn code(self) -> &'static str {
        match self {
            AuthError::InvalidToken | AuthError::Expired => "invalid_token",
            AuthError::Forbidden => "insufficient_scope",
        }
    }

    pub(super) fn description(self) -> &'static str {
        match self {
            AuthError::InvalidToken => "the access token is not valid",
            AuthError::Expired => "the access token expired",
            AuthError::Forbidden => "the access token does not give access to this server",
        }
    }
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.description())
    }
}

impl std::error::Error for AuthError {}

/// What `Authorization` holds.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Bearer<'a> {
    /// No `Authorization` header.
    Missing,
    /// Present but not one `Bearer <token>` with a token of RFC 6750's characters.
    Malformed,
    Token(&'a str),
}

pub(super) fn bearer(headers: &HeaderMap) -> Bearer<'_> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Bearer::Missing;
    };
    if values.next().is_some() {
        return Bearer::Malformed;
    }
    parse(value).map_or(Bearer::Malformed, Bearer::Token)
}

fn parse(value: &HeaderValue) -> Option<&str> {
    let value = value.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let token = token.trim_matches(' ');
    // RFC 6750's b64token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
    let body = token.trim_end_matches('=');
    let valid = !body.is_empty()
        && token.len() <= MAX_TOKEN_BYTES
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b));
    valid.then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn reads_one_bearer_token() {
        assert_eq!(bearer(&headers(&[])), Bearer::Missing);
        assert_eq!(
            bearer(&headers(&["Bearer abc.DEF-1_~+/=="])),
            Bearer::Token("abc.DEF-1_~+/==")
        );
        assert_eq!(bearer(&headers(&["bearer  abc"])), Bearer::Token("abc"));
        for malformed in [
            "Bearer",
            "Bearer ",
            "Basic abc",
            "Bearer a b",
            "Bearer ==",
            "Bearerabc",
        ] {
            assert_eq!(
                bearer(&headers(&[malformed])),
                Bearer::Malformed,
                "{malformed}"
            );
        }
        assert_eq!(
            bearer(&headers(&["Bearer a", "Bearer b"])),
            Bearer::Malformed
        );
        let long = format!("Bearer {}", "a".repeat(MAX_TOKEN_BYTES + 1));
        assert_eq!(bearer(&headers(&[&long])), Bearer::Malformed);
    }
}
