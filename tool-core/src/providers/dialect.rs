//! The six schema dialects the providers accept, the one every MCP client accepts, and what
//! each does with a keyword that needs no rewriting of its own.
//!
//! OpenAI Chat and Responses share one dialect per mode; the envelopes differ (see
//! [`Target`](super::Target)). The tables follow `PROVIDERS.md` §1.3, §2.4 and §3.1.

/// A provider's JSON Schema subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Dialect {
    /// OpenAI Structured Outputs subset (`strict: true`).
    OpenAiStrict,
    /// OpenAI without `strict`: any schema, as a hint.
    OpenAi,
    /// Anthropic `strict: true`.
    AnthropicStrict,
    /// Anthropic's default: any schema with `type: "object"` at the root, as a hint.
    Anthropic,
    /// Gemini `parametersJsonSchema`.
    GeminiJson,
    /// Gemini `parameters`: the OpenAPI 3.0 subset.
    GeminiOpenApi,
    /// An MCP `inputSchema` any client accepts: JSON Schema 2020-12 with an object at the root
    /// and no union there (the spec wants an object schema; Anthropic-backed clients pass the
    /// schema on as Anthropic's default dialect, which refuses a root union). It reads every
    /// other keyword as [`Anthropic`](Dialect::Anthropic) does: as a hint, kept.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    McpClient,
}

/// What lowering does with a keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Copied as it is.
    Keep,
    /// Removed: an assertion the provider will not enforce (the runtime still does).
    Drop,
    /// Removed: an annotation the model will no longer see.
    Hide,
    /// Removed without a report: it only matters to schema tooling (`$comment`, `$id`).
    Silent,
}

impl Dialect {
    /// The name used in loss reports.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Dialect::OpenAiStrict => "OpenAI strict",
            Dialect::OpenAi => "OpenAI non-strict",
            Dialect::AnthropicStrict => "Anthropic strict",
            Dialect::Anthropic => "Anthropic",
            Dialect::GeminiJson => "Gemini parametersJsonSchema",
            Dialect::GeminiOpenApi => "Gemini parameters",
            Dialect::McpClient => "MCP clients",
        }
    }

    /// Whether the provider constrains decoding to the schema (so a removed assertion is
    /// "not enforced"), rather than reading it as a hint.
    pub(crate) const fn constrained(self) -> bool {
        !matches!(
            self,
            Dialect::OpenAi | Dialect::Anthropic | Dialect::McpClient
        )
    }

    /// Whether every object must be closed with `additionalProperties: false`.
    pub(crate) const fn closes_objects(self) -> bool {
        matches!(self, Dialect::OpenAiStrict | Dialect::AnthropicStrict)
    }

    /// Whether `allOf` is sent as it is (else its members are merged into one schema).
    pub(crate) const fn keeps_all_of(self) -> bool {
        matches!(
            self,
            Dialect::OpenAi | Dialect::Anthropic | Dialect::McpClient
        )
    }

    /// Whether `oneOf` is sent as it is (else it becomes `anyOf`).
    pub(crate) const fn keeps_one_of(self) -> bool {
        matches!(self, Dialect::Anthropic | Dialect::McpClient)
    }

    /// Whether the root may hold `anyOf`/`oneOf`/`allOf` (else they are merged into one
    /// object). OpenAI refuses them in both modes ("schema must have type 'object' and not
    /// have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level"), Anthropic in both modes
    /// ("input_schema does not support oneOf, allOf, or anyOf at the top level"), and Gemini's
    /// `parameters` needs the root's properties to declare the parameters.
    pub(crate) const fn allows_root_union(self) -> bool {
        matches!(self, Dialect::GeminiJson)
    }

    /// Whether the root may hold `enum`, `const` or `not` (OpenAI refuses them there).
    pub(crate) const fn allows_root_literals(self) -> bool {
        !matches!(self, Dialect::OpenAi | Dialect::OpenAiStrict)
    }

    /// Whether an `anyOf` must be the only keyword of its schema (Vertex: "When using any_of,
    /// it must be the only field set").
    pub(crate) const fn wants_any_of_alone(self) -> bool {
        matches!(self, Dialect::GeminiOpenApi)
    }

    /// Whether `prefixItems` is sent as it is (else positions are folded into `items`).
    pub(crate) const fn keeps_prefix_items(self) -> bool {
        matches!(
            self,
            Dialect::OpenAi | Dialect::Anthropic | Dialect::GeminiJson | Dialect::McpClient
        )
    }

    /// Whether a recursive `$ref` can be kept (pointing into the root `$defs`).
    pub(crate) const fn allows_recursion(self) -> bool {
        !matches!(self, Dialect::AnthropicStrict | Dialect::GeminiOpenApi)
    }

    /// Whether keywords may sit beside a `$ref` (else the `$ref` is wrapped in `anyOf`).
    pub(crate) const fn allows_ref_siblings(self) -> bool {
        matches!(
            self,
            Dialect::OpenAi | Dialect::Anthropic | Dialect::McpClient
        )
    }

    /// Whether every schema must have a type (an unconstrained `{}` too): OpenAI strict and
    /// Anthropic strict refuse a schema without one (Anthropic's SDK helper: "schema must
    /// have a type"), and Gemini's `parameters`, an OpenAPI `Schema`, has no untyped form.
    pub(crate) const fn needs_types(self) -> bool {
        matches!(
            self,
            Dialect::OpenAiStrict | Dialect::AnthropicStrict | Dialect::GeminiOpenApi
        )
    }

    /// What happens to a keyword whose value is not a subschema and needs no rewriting.
    pub(crate) fn action(self, keyword: &str) -> Action {
        use Dialect::*;
        let keep_if = |keep: bool| if keep { Action::Keep } else { Action::Drop };
        let hide_if = |hide: bool| if hide { Action::Hide } else { Action::Keep };
        match keyword {
            "$comment" | "$schema" | "$id" | "$anchor" | "$dynamicAnchor" | "$vocabulary" => {
                Action::Silent
            }
            "multipleOf" => keep_if(matches!(
                self,
                OpenAiStrict | OpenAi | Anthropic | McpClient
            )),
            "minimum" | "maximum" => keep_if(self != AnthropicStrict),
            "exclusiveMinimum" | "exclusiveMaximum" => keep_if(matches!(
                self,
                OpenAiStrict | OpenAi | Anthropic | McpClient
            )),
            "minLength" | "maxLength" => keep_if(matches!(
                self,
                OpenAi | Anthropic | GeminiOpenApi | McpClient
            )),
            "maxItems" => keep_if(self != AnthropicStrict),
            "minItems" => Action::Keep,
            "minProperties" | "maxProperties" => keep_if(matches!(
                self,
                OpenAi | Anthropic | GeminiOpenApi | McpClient
            )),
            "uniqueItems" | "minContains" | "maxContains" | "dependentRequired"
            | "contentEncoding" | "contentMediaType" => keep_if(!self.constrained()),
            "default" => hide_if(matches!(self, OpenAiStrict | GeminiJson)),
            "title" => hide_if(self == GeminiJson),
            "deprecated" | "readOnly" | "writeOnly" => hide_if(self.constrained()),
            // Not a JSON Schema keyword: an annotation at most. Hints pass through.
            _ => hide_if(self.constrained()),
        }
    }

    /// Whether a `format` value is kept.
    pub(crate) fn keeps_format(self, format: &str) -> bool {
        const OPENAI: &[&str] = &[
            "date-time",
            "time",
            "date",
            "duration",
            "email",
            "hostname",
            "ipv4",
            "ipv6",
            "uuid",
        ];
        match self {
            Dialect::OpenAiStrict => OPENAI.contains(&format),
            Dialect::AnthropicStrict => OPENAI.contains(&format) || format == "uri",
            // The Developer API accepts only these two (Firebase SDK reference).
            Dialect::GeminiOpenApi => matches!(format, "date-time" | "enum"),
            Dialect::OpenAi | Dialect::Anthropic | Dialect::GeminiJson | Dialect::McpClient => true,
        }
    }

    /// Whether a `pattern` is kept.
    pub(crate) fn keeps_pattern(self, pattern: &str) -> bool {
        match self {
            Dialect::OpenAiStrict => !has_lookaround(pattern),
            Dialect::AnthropicStrict => {
                !has_lookaround(pattern) && !has_backreference_or_boundary(pattern)
            }
            Dialect::GeminiJson => false,
            Dialect::OpenAi | Dialect::Anthropic | Dialect::GeminiOpenApi | Dialect::McpClient => {
                true
            }
        }
    }
}

fn has_lookaround(pattern: &str) -> bool {
    ["(?=", "(?!", "(?<=", "(?<!"]
        .iter()
        .any(|group| pattern.contains(group))
}

/// `\1`..`\9`, `\k<name>`, `\b` and `\B`, skipping escaped backslashes.
fn has_backreference_or_boundary(pattern: &str) -> bool {
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some('1'..='9' | 'k' | 'b' | 'B') = chars.next()
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_strict_refuses_complex_patterns_only() {
        let d = Dialect::AnthropicStrict;
        assert!(d.keeps_pattern("^[A-Z]{3}$"));
        assert!(d.keeps_pattern(r"^\d{4}\\b$")); // an escaped backslash, then "b"
        assert!(!d.keeps_pattern(r"\bword\b"));
        assert!(!d.keeps_pattern(r"(a)\1"));
        assert!(!d.keeps_pattern("^(?!x)"));
    }
}
