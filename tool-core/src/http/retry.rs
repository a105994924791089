//! When a failed model request is tried again: [`RetryPolicy`], exponential backoff with
//! jitter, and the provider's `Retry-After`.

use std::time::{Duration, SystemTime};

/// How a failed request is retried. A request is retried when it may succeed later and no
/// call has been acted on: on HTTP 408, 429 and 5xx, a connection that failed, a timed-out
/// attempt, a stream that broke off before its end, or an error event in the stream that names
/// no error or a passing one (overloaded, rate limited, server error, timeout). Other statuses
/// (400, 401, 403, 404, …) and error events that name a request error are reported at once.
///
/// The wait before attempt `n + 1` is drawn at random between half and all of
/// `base_delay × 2^(n-1)`, at most `max_delay`; a `Retry-After` header (seconds or an HTTP
/// date) replaces it, capped at `max_retry_after`. The run gives up, reporting the last
/// error, after `max_attempts` attempts or when the next wait would take the waits past
/// `max_total_wait` (or past the run's deadline).
///
/// ```
/// use std::time::Duration;
/// use tool_core::http::RetryPolicy;
///
/// let policy = RetryPolicy::new(5)
///     .base_delay(Duration::from_millis(250))
///     .max_total_wait(Duration::from_secs(30));
/// assert_eq!(policy.attempts(), 5);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    max_attempts: u32,
    base_delay: Duration,
    max_delay: Duration,
    max_retry_after: Duration,
    max_total_wait: Duration,
}

impl Default for RetryPolicy {
    /// 4 attempts, 500 ms base delay, waits of at most 20 s each (`Retry-After` at most 60 s)
    /// and 90 s in all.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(60),
            max_total_wait: Duration::from_secs(90),
        }
    }
}

impl RetryPolicy {
    /// At most `attempts` attempts in all (at least 1), other settings as the default.
    pub fn new(attempts: u32) -> Self {
        RetryPolicy {
            max_attempts: attempts.max(1),
            ..RetryPolicy::default()
        }
    }

    /// One attempt, no retries.
    pub fn never() -> Self {
        RetryPolicy::new(1)
    }

    /// The first backoff wait (before jitter); each later one doubles.
    pub fn base_delay(mut self, delay: Duration) -> Self {
        self.base_delay = delay;
        self
    }

    /// The longest backoff wait.
    pub fn max_delay(mut self, delay: Duration) -> Self {
        self.max_delay = delay;
        self
    }

    /// The longest wait a provider's `Retry-After` may ask for; a longer one is cut to it.
    pub fn max_retry_after(mut self, delay: Duration) -> Self {
        self.max_retry_after = delay;
        self
    }

    /// The most time spent waiting between attempts, in all.
    pub fn max_total_wait(mut self, wait: Duration) -> Self {
        self.max_total_wait = wait;
        self
    }

    /// The most attempts, the first included.
    pub fn attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The wait before the attempt after `attempt` (counting from 1).
    pub(crate) fn wait(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(after) = retry_after {
            return after.min(self.max_retry_after);
        }
        let exponent = attempt.saturating_sub(1).min(20);
        let full = self
            .base_delay
            .saturating_mul(1 << exponent)
            .min(self.max_delay);
        let half = full / 2;
        half + half.mul_f64(jitter())
    }

    pub(crate) fn max_total(&self) -> Duration {
        self.max_total_wait
    }
}

/// A number in [0, 1); 0.5 when the system has no randomness to give.
fn jitter() -> f64 {
    let mut bytes = [0u8; 4];
    match getrandom::fill(&mut bytes) {
        Ok(()) => f64::from(u32::from_le_bytes(bytes)) / (f64::from(u32::MAX) + 1.0),
        Err(_) => 0.5,
    }
}

/// A `Retry-After` value: delay seconds, or an HTTP date (a date in the past is no wait).
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0)
            .then(|| Duration::from_secs_f64(seconds.min(1e9)));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(
        date.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_takes_seconds_and_dates() {
        assert_eq!(parse_retry_after("3"), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after(" 0.5 "), Some(Duration::from_millis(500)));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        let later = SystemTime::now() + Duration::from_secs(120);
        let waited = parse_retry_after(&httpdate::fmt_http_date(later)).unwrap();
        assert!(waited > Duration::from_secs(100) && waited <= Duration::from_secs(120));
        assert_eq!(parse_retry_after("soon"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }

    #[test]
    fn waits_grow_with_jitter_and_stay_capped() {
        let policy = RetryPolicy::new(10)
            .base_delay(Duration::from_millis(100))
            .max_delay(Duration::from_millis(350))
            .max_retry_after(Duration::from_secs(2));
        for _ in 0..50 {
            let first = policy.wait(1, None);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let third = policy.wait(3, None);
            assert!(third >= Duration::from_millis(175) && third <= Duration::from_millis(350));
        }
        assert!(policy.wait(30, None) <= Duration::from_millis(350));
        assert_eq!(
            policy.wait(1, Some(Duration::from_secs(600))),
            Duration::from_secs(2)
        );
    }
}
