//! What every part of the lowering shares, below all of them: the walk's bounds, the [`Walk`]
//! through which a part lowers a subschema (the driver in `mod.rs` implements it, so no part
//! names the driver), the [`Report`] of losses, and the helpers that place a refusal at a JSON
//! Pointer.

use std::borrow::Cow;
use std::collections::HashSet;

use serde_json::Value;

use crate::providers::dialect::Dialect;
use crate::providers::loss::{Loss, LossKind, LowerError};

/// The most subschemas one lowering may produce, counting inlined copies.
pub(super) const MAX_NODES: usize = 200_000;

/// The deepest nesting of subschemas lowered: a bound on the walk's recursion, so a hostile
/// schema cannot exhaust the stack. It counts schema levels, not argument levels (an object's
/// property is one level below the object), and is not tied to the parser's
/// [`MAX_DEPTH`](crate::contract::MAX_DEPTH). Cycles go through `$ref` and do not nest. The search for
/// `$anchor`s stops at the same depth.
pub(super) const MAX_DEPTH: usize = 128;

/// The walk as a part of it sees it.
pub(super) trait Walk {
    /// The dialect lowered to.
    fn dialect(&self) -> Dialect;

    /// Where losses are recorded.
    fn report(&mut self) -> &mut Report;

    /// The canonical schema, which every pointer is into.
    fn root(&self) -> &Value;

    /// Lowers the subschema `schema`, found at `pointer` in the canonical schema.
    fn walk(&mut self, schema: &Value, pointer: &str) -> Result<Value, LowerError>;
}

/// The losses of one lowering, in the order found, each reported once.
#[derive(Debug)]
pub(super) struct Report {
    dialect: Dialect,
    losses: Vec<Loss>,
    seen: HashSet<(String, Cow<'static, str>, LossKind)>,
}

impl Report {
    pub(super) fn new(dialect: Dialect) -> Self {
        Report {
            dialect,
            losses: Vec::new(),
            seen: HashSet::new(),
        }
    }

    pub(super) fn dialect(&self) -> Dialect {
        self.dialect
    }

    pub(super) fn into_losses(self) -> Vec<Loss> {
        self.losses
    }

    pub(super) fn record(
        &mut self,
        pointer: &str,
        keyword: impl Into<Cow<'static, str>>,
        kind: LossKind,
        note: Option<&'static str>,
    ) {
        let keyword = keyword.into();
        if self
            .seen
            .insert((pointer.to_owned(), keyword.clone(), kind))
        {
            self.losses.push(Loss {
                pointer: pointer.to_owned(),
                keyword,
                kind,
                dialect: self.dialect.name(),
                note,
            });
        }
    }

    /// An assertion removed: unenforced by a constraining dialect, unseen by a hinting one.
    pub(super) fn dropped(&mut self, pointer: &str, keyword: &str, note: Option<&'static str>) {
        let kind = if self.dialect.constrained() {
            LossKind::Unenforced
        } else {
            LossKind::Hidden
        };
        self.record(pointer, keyword.to_owned(), kind, note);
    }

    pub(super) fn narrowed(&mut self, pointer: &str, keyword: &str, note: &'static str) {
        self.record(pointer, keyword.to_owned(), LossKind::Narrowed, Some(note));
    }
}

/// `pointer` extended by one reference token.
pub(super) fn child(pointer: &str, token: &str) -> String {
    let mut out = String::with_capacity(pointer.len() + token.len() + 1);
    out.push_str(pointer);
    crate::contract::path::push_escaped(&mut out, token);
    out
}

pub(super) fn invalid(pointer: &str, reason: impl Into<Cow<'static, str>>) -> LowerError {
    LowerError::InvalidSchema {
        pointer: pointer.to_owned(),
        reason: reason.into(),
    }
}

pub(super) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
