//! The one terminal outcome of a proposed call: its output, or a failure with a stable code,
//! a message safe to show the model and detail for the operator.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::ArgumentErrors;
use crate::provenance::Provenance;

/// Why a call ended without an output. The string forms ([`as_str`](Self::as_str)) are stable
/// and safe to match on in logs, metrics and provider messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Code {
    /// The name is not a registered tool. Nothing ran.
    UnknownTool,
    /// The arguments are longer than the tool's input cap. Nothing was parsed.
    InputTooLarge,
    /// The arguments break the tool's input schema; the outcome carries every violation.
    InvalidArguments,
    /// The authorization policy refused the call. Nothing ran.
    Unauthorized,
    /// The approver refused the call. Nothing ran.
    ApprovalDenied,
    /// The approval expired, or the run's deadline passed while waiting for it. Nothing ran.
    ApprovalExpired,
    /// A call quota (the tool's or the runtime's) is used up. Nothing ran.
    BudgetExhausted,
    /// The call's timeout or the run's deadline passed. The handler, if it started, was
    /// stopped; its effects are declared read-only or idempotent, so nothing is in doubt.
    Timeout,
    /// The run was cancelled. The handler, if it started, was stopped; its effects are
    /// declared read-only or idempotent, so nothing is in doubt.
    Cancelled,
    /// The handler returned an error or panicked.
    ExecutionFailed,
    /// The handler's output breaks the tool's output schema. It is not passed on.
    InvalidOutput,
    /// The handler's output is longer than the tool's output cap. It is not passed on.
    OutputTooLarge,
    /// The call id was already used in this runtime. Nothing ran for this proposal.
    DuplicateCallId,
    /// A handler with non-idempotent effects was stopped (timeout or cancellation) after it
    /// started: its work may or may not have happened. Never retried automatically.
    OutcomeUnknown,
    /// The call id is longer than the runtime's limit (256 bytes by default). Nothing ran,
    /// and the id was not remembered.
    CallIdTooLong,
    /// The call id is empty and the runtime has a [ledger](crate::ledger), which keys each
    /// call by its id: every call without one would share one record, so it is refused before
    /// it is claimed. Nothing ran. Give the call an id, or the context an idempotency key.
    MissingCallId,
    /// The agent loop did not pass the call on: the same tool with the same arguments (as
    /// canonical JSON) was already called as often as the loop allows in this run. Nothing ran.
    RepeatedCall,
    /// The call id (in its scope) was already claimed in the runtime's ledger for another
    /// tool, other arguments, another contract or another principal. Nothing ran.
    CallIdConflict,
    /// The idempotency key (in its tenant) was already used for another call. Nothing ran.
    IdempotencyConflict,
    /// A call with the same id (or idempotency key) is still running elsewhere. Nothing ran
    /// for this proposal; retried after the first ends, it gets that call's outcome.
    CallInFlight,
    /// The runtime's ledger could not be reached or answered wrongly, so the call could not be
    /// claimed. Nothing ran.
    LedgerUnavailable,
    /// The tool's declared authority could not be enforced here (the kernel lacks what it
    /// needs, or the platform has no sandbox), and the tool accepts no weaker mode that fits:
    /// the sandboxed program was not started.
    SandboxUnavailable,
    /// A resource limit of the tool's authority (CPU time, file size, processes, output bytes)
    /// stopped the sandboxed work; the message says which and what was cut.
    ResourceExhausted,
}

impl Code {
    /// Every code, in pipeline order.
    pub const ALL: [Code; 23] = [
        Code::UnknownTool,
        Code::InputTooLarge,
        Code::InvalidArguments,
        Code::Unauthorized,
        Code::ApprovalDenied,
        Code::ApprovalExpired,
        Code::BudgetExhausted,
        Code::Timeout,
        Code::Cancelled,
        Code::ExecutionFailed,
        Code::InvalidOutput,
        Code::OutputTooLarge,
        Code::DuplicateCallId,
        Code::OutcomeUnknown,
        Code::CallIdTooLong,
        Code::MissingCallId,
        Code::RepeatedCall,
        Code::CallIdConflict,
        Code::IdempotencyConflict,
        Code::CallInFlight,
        Code::LedgerUnavailable,
        Code::SandboxUnavailable,
        Code::ResourceExhausted,
    ];

    /// The stable snake_case code, e.g. `"invalid_arguments"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Code::UnknownTool => "unknown_tool",
            Code::InputTooLarge => "input_too_large",
            Code::InvalidArguments => "invalid_arguments",
            Code::Unauthorized => "unauthorized",
            Code::ApprovalDenied => "approval_denied",
            Code::ApprovalExpired => "approval_expired",
            Code::BudgetExhausted => "budget_exhausted",
            Code::Timeout => "timeout",
            Code::Cancelled => "cancelled",
            Code::ExecutionFailed => "execution_failed",
            Code::InvalidOutput => "invalid_output",
            Code::OutputTooLarge => "output_too_large",
            Code::DuplicateCallId => "duplicate_call_id",
            Code::OutcomeUnknown => "outcome_unknown",
            Code::CallIdTooLong => "call_id_too_long",
            Code::MissingCallId => "missing_call_id",
            Code::RepeatedCall => "repeated_call",
            Code::CallIdConflict => "call_id_conflict",
            Code::IdempotencyConflict => "idempotency_conflict",
            Code::CallInFlight => "call_in_flight",
            Code::LedgerUnavailable => "ledger_unavailable",
            Code::SandboxUnavailable => "sandbox_unavailable",
            Code::ResourceExhausted => "resource_exhausted",
        }
    }

    /// Whether the handler may have run (and so may have had effects) before this failure.
    pub const fn handler_may_have_run(self) -> bool {
        matches!(
            self,
            Code::Timeout
                | Code::Cancelled
                | Code::ExecutionFailed
                | Code::InvalidOutput
                | Code::OutputTooLarge
                | Code::OutcomeUnknown
                | Code::SandboxUnavailable
                | Code::ResourceExhausted
        )
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that is not one of the [`Code`]s' stable forms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownCode(String);

impl fmt::Display for UnknownCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} is not a failure code", self.0)
    }
}

impl std::error::Error for UnknownCode {}

impl std::str::FromStr for Code {
    type Err = UnknownCode;

    /// The code whose [`as_str`](Code::as_str) is `text`.
    fn from_str(text: &str) -> Result<Self, UnknownCode> {
        Code::ALL
            .into_iter()
            .find(|code| code.as_str() == text)
            .ok_or_else(|| UnknownCode(text.to_owned()))
    }
}

impl serde::Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Code {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A call that ended without an output.
///
/// It has two faces: [`message`](Self::message) is short and safe to send to the model (no
/// stack traces, no authorization internals); [`detail`](Self::detail) is for the operator's
/// logs. The public message names the call's [`Outcome::id`] so a report from the model's side
/// can be matched with the log line.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    code: Code,
    message: Cow<'static, str>,
    detail: Option<String>,
    errors: Option<ArgumentErrors>,
}

impl Failure {
    pub(crate) fn new(code: Code, message: impl Into<Cow<'static, str>>) -> Self {
        Failure {
            code,
            message: message.into(),
            detail: None,
            errors: None,
        }
    }

    pub(crate) fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    pub(crate) fn invalid(code: Code, errors: ArgumentErrors) -> Self {
        Failure {
            code,
            message: Cow::Owned(errors.to_string()),
            detail: None,
            errors: Some(errors),
        }
    }

    /// The stable code.
    pub fn code(&self) -> Code {
        self.code
    }

    /// The public message, safe to show the model. For `invalid_arguments` it is one line per
    /// violation (`- /amount: expected number, got string "120.5"`), at most
    /// [`ArgumentErrors::MAX_SHOWN`] of them, then one line counting the rest by keyword: the
    /// [`ArgumentErrors`] rendering, under 14 KB whatever the arguments.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Operator detail (a handler's error, a panic message, the policy's reason), when there
    /// is any. Never sent to the model by this crate.
    pub fn detail(&self) -> Option<&str> {
        self.detail.as_deref()
    }

    /// The violations, for `invalid_arguments` and `invalid_output`.
    pub fn errors(&self) -> Option<&ArgumentErrors> {
        self.errors.as_ref()
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// The runtime's own id for one invocation: unique within the process, different between
/// processes, and printed in the public message of failures so both faces can be linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InvocationId(pub(crate) u64);

impl InvocationId {
    /// The id as a number.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for InvocationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// A call's output: compact JSON text, checked against the tool's output schema and within
/// its byte cap. The text is what a provider message or MCP result carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    pub(crate) text: String,
}

impl Output {
    /// The JSON text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The output parsed into a `serde_json::Value`.
    pub fn to_value(&self) -> Value {
        // The text was produced by serde_json from a valid value, so it parses.
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }

    /// Takes the JSON text out.
    pub fn into_string(self) -> String {
        self.text
    }
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The single terminal outcome of one proposed call.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub(crate) id: InvocationId,
    pub(crate) call_id: Arc<str>,
    pub(crate) tool: Arc<str>,
    pub(crate) result: Result<Output, Failure>,
    pub(crate) elapsed: Duration,
    pub(crate) replayed: bool,
    /// The tool's provenance (the runtime's when the name is not a registered tool).
    pub(crate) source: Provenance,
}

impl Outcome {
    /// Who wrote what this outcome says and whether it is trusted: the tool's provenance for
    /// its output and for its own error ([`Code::ExecutionFailed`]), the runtime's for every
    /// other failure (see [`provenance`](crate::provenance)).
    pub fn provenance(&self) -> Provenance {
        match &self.result {
            Err(failure) if failure.code() != Code::ExecutionFailed => Provenance::runtime(),
            _ => self.source.clone(),
        }
    }

    /// The runtime's id for this invocation (the correlation id of operator logs).
    pub fn id(&self) -> InvocationId {
        self.id
    }

    /// The call id the provider gave the proposal, echoed back unchanged.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The tool name as proposed (it may not name a registered tool).
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The checked output, or the failure.
    pub fn result(&self) -> Result<&Output, &Failure> {
        self.result.as_ref()
    }

    /// Takes the checked output or the failure out.
    pub fn into_result(self) -> Result<Output, Failure> {
        self.result
    }

    /// The output, when the call succeeded.
    pub fn output(&self) -> Option<&Output> {
        self.result.as_ref().ok()
    }

    /// The failure, when the call did not succeed.
    pub fn failure(&self) -> Option<&Failure> {
        self.result.as_ref().err()
    }

    /// The failure's code; `None` when the call succeeded.
    pub fn code(&self) -> Option<Code> {
        match &self.result {
            Ok(_) => None,
            Err(failure) => Some(failure.code),
        }
    }

    /// Whether the call produced a checked output.
    pub fn is_ok(&self) -> bool {
        self.result.is_ok()
    }

    /// Time from the start of the invocation to this outcome.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// Whether this is the recorded outcome of an earlier call with the same id (or
    /// idempotency key), returned by the runtime's [ledger](crate::ledger) without running
    /// anything.
    pub fn is_replay(&self) -> bool {
        self.replayed
    }
}

/// A refusal by an authorization policy.
///
/// The detail is for the operator's logs (it becomes the failure's
/// [`detail`](Failure::detail)). The model is told only that the call is not
/// authorized, unless a message is set with [`with_message`](Self::with_message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    detail: String,
    message: Option<Cow<'static, str>>,
    policy_ids: Vec<String>,
}

impl Denied {
    /// A refusal; `detail` (why, for the operator) goes to the operator's logs only.
    pub fn new(detail: impl Into<String>) -> Self {
        Denied {
            detail: detail.into(),
            message: None,
            policy_ids: Vec::new(),
        }
    }

    /// The ids of the rules that refused (a `forbid`'s id, or those of a policy set in which
    /// no `permit` matched), for the operator's detail and the audit trail.
    pub fn with_policy_ids<I, S>(mut self, ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.policy_ids = ids.into_iter().map(Into::into).collect();
        self
    }

    /// The ids of the rules that refused, if the policy named them.
    pub fn policy_ids(&self) -> &[String] {
        &self.policy_ids
    }

    /// A message the model may see instead of the generic one, e.g. "amounts over 10000
    /// need a manager"; never put policy internals here.
    pub fn with_message(mut self, message: impl Into<Cow<'static, str>>) -> Self {
        self.message = Some(message.into());
        self
    }

    /// The operator-facing detail.
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// The model-facing message, if one was set.
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }
}

impl fmt::Display for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "denied: {}", self.detail)
    }
}
