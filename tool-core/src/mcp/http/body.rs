//! Request bodies: read whole up to the cap before anything answers, or thrown away up to a
//! bound when the request is refused, so that a refusal leaves its connection fit for the next
//! request or says it closes it.

use std::time::Duration;

use axum::body::{Body, BodyDataStream, Bytes};
use axum::response::Response;
use futures_util::StreamExt as _;
use http::header::{CONNECTION, EXPECT};
use http::{HeaderMap, HeaderValue};

/// How much of a refused request's body is read and thrown away, beyond what was read.
pub(super) const DRAIN_BYTES: usize = 1024 * 1024;
/// How long the rest of a refused request's body may take to arrive.
pub(super) const DRAIN_TIME: Duration = Duration::from_secs(5);

/// A body read up to its cap.
pub(super) enum Read {
    Whole(Bytes),
    /// Over the cap; the rest is still to come.
    TooLarge(BodyDataStream),
    /// The client broke off while sending it.
    Broken,
    /// It did not arrive whole within the time allowed.
    TimedOut,
}

/// Reads `body` whole if it holds at most `cap` bytes and arrives within `time`.
pub(super) async fn read(body: Body, cap: usize, time: Duration) -> Read {
    let mut stream = body.into_data_stream();
    let whole = async {
        let mut whole = Vec::new();
        while let Some(chunk) = stream.next().await {
            let Ok(chunk) = chunk else {
                return Err(false);
            };
            if chunk.len() > cap.saturating_sub(whole.len()) {
                return Err(true);
            }
            whole.extend_from_slice(&chunk);
        }
        Ok(Bytes::from(whole))
    };
    match tokio::time::timeout(time, whole).await {
        Ok(Ok(whole)) => Read::Whole(whole),
        Ok(Err(true)) => Read::TooLarge(stream),
        Ok(Err(false)) => Read::Broken,
        Err(_) => Read::TimedOut,
    }
}

/// Reads and throws away up to `bytes` more of `stream`, for at most [`DRAIN_TIME`]; whether
/// it ended within them.
async fn drain(stream: &mut BodyDataStream, bytes: usize) -> bool {
    let rest = async {
        let mut left = bytes;
        while let Some(chunk) = stream.next().await {
            match chunk {
                Ok(chunk) if chunk.len() <= left => left -= chunk.len(),
                _ => return false,
            }
        }
        true
    };
    tokio::time::timeout(DRAIN_TIME, rest)
        .await
        .unwrap_or(false)
}

/// Says on `response` that the connection closes after it.
pub(super) fn closing(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

/// `response`, a refusal sent before `body` was read: the body is thrown away first (up to as
/// much as a request may carry), and where it could not be, the connection closes. A client
/// waiting for `100 Continue` is not asked for its body at all.
pub(super) async fn refuse_unread(
    response: Response,
    headers: &HeaderMap,
    body: Body,
    cap: usize,
) -> Response {
    if headers.contains_key(EXPECT) {
        return closing(response);
    }
    refuse_rest(response, body.into_data_stream(), cap).await
}

/// `response`, a refusal sent with `rest` of the body unread: the rest is thrown away first
/// (up to `bytes`), and where it could not be, the connection closes.
pub(super) async fn refuse_rest(
    response: Response,
    mut rest: BodyDataStream,
    bytes: usize,
) -> Response {
    if drain(&mut rest, bytes).await {
        response
    } else {
        closing(response)
    }
}
