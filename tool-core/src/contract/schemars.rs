//! Types that already implement schemars' `JsonSchema` and serde's `Deserialize`, used as
//! arguments through [`ViaSchemars`]: advertised with the schema schemars gives them, checked
//! against exactly that schema by a standard validator, then read with serde.

use std::any::TypeId;
use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::{OnceLock, PoisonError, RwLock};

use jsonschema::error::ValidationErrorKind;
use jsonschema::{Draft, Validator};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::{DeserializeOwned, Deserializer};
use serde_json::Value;

use crate::Argument;
use crate::contract::constraints::{ConstConstraints, Constraints, Unconstrained};
use crate::contract::error::Keyword;
use crate::contract::path::Path;
use crate::contract::schema::SchemaGen;
use crate::contract::standard::{self, Origin};
use crate::contract::validate::Cx;

/// A value of a type that implements [`schemars::JsonSchema`] and [`serde::Deserialize`],
/// usable in tool arguments as it is: a type from another crate, or one of your own that
/// already derives both, needs no `Argument` derive.
///
/// - **Advertised schema**: the one schemars generates for `T` (Draft 2020-12, under serde's
///   deserialize rules). Its definitions join the tool's root `$defs`, renamed where a name is
///   taken, with every reference rewritten to match.
/// - **Checking**: the value is read as JSON (held to the same strict JSON as every argument:
///   no repeated keys, bounded nesting), checked against that schema with the `jsonschema`
///   crate (`format` asserted, as everywhere else), and only then deserialized into `T`.
///   Every violation is reported at its pointer into the arguments. A value the schema
///   accepts but `T`'s `Deserialize` refuses is one violation at the value, saying that the
///   schema and the type disagree (fix the type's `JsonSchema`).
/// - **Refused schemas**: a schema that refers outside itself (nothing is fetched) or has a
///   pattern that needs a backtracking regex engine checks nothing; every value of the type
///   is refused, with the reason. Lowering for a provider refuses a reference outside the
///   schema too.
/// - **Constraints**: constraints written on the field (`#[tool(length(max = ...))]`) do not
///   apply; the type's own schema is its whole contract.
/// - **Cost**: the validator is compiled once per type and kept for the life of the program.
///   Values are parsed into a `serde_json::Value` first, so checking costs more than a
///   derived `Argument` (see the crate's `BENCHMARKS.md`).
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use tool_core::{Tool, contract::ViaSchemars};
///
/// /// A range of lines, from a crate that knows nothing of tool_core.
/// #[derive(Deserialize, JsonSchema, Debug, PartialEq)]
/// #[serde(deny_unknown_fields)]
/// struct Lines {
///     #[schemars(range(min = 1))]
///     first: u32,
///     count: u32,
/// }
///
/// /// Shows lines of a file.
/// #[derive(Tool, Debug)]
/// struct Show {
///     path: String,
///     lines: ViaSchemars<Lines>,
/// }
///
/// let show = Show::parse_arguments(r#"{"path": "a.rs", "lines": {"first": 3, "count": 2}}"#)?;
/// assert_eq!(*show.lines, Lines { first: 3, count: 2 });
///
/// let errors = Show::parse_arguments(r#"{"path": "a.rs", "lines": {"first": 0, "count": 2, "x": 1}}"#)
///     .unwrap_err();
/// let pointers: Vec<String> = errors.iter().map(|v| v.pointer().into_owned()).collect();
/// assert_eq!(pointers, ["/lines/first", "/lines/x"]);
/// # Ok::<(), tool_core::ArgumentErrors>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ViaSchemars<T>(pub T);

impl<T> ViaSchemars<T> {
    /// The value.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> Deref for ViaSchemars<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for ViaSchemars<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T> From<T> for ViaSchemars<T> {
    fn from(value: T) -> Self {
        ViaSchemars(value)
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "schemars")))]
impl<T: JsonSchema + DeserializeOwned + 'static> Argument for ViaSchemars<T> {
    fn schema(generator: &mut SchemaGen, _: &Constraints) -> Value {
        generator.embed(TypeId::of::<T>(), &T::schema_name(), schemars_schema::<T>())
    }

    fn parse<'de, D: Deserializer<'de>, C: ConstConstraints>(
        de: D,
        cx: &mut Cx,
        at: &Path<'_>,
    ) -> Result<Option<Self>, D::Error> {
        let Some(value) = <Value as Argument>::parse::<D, Unconstrained>(de, cx, at)? else {
            return Ok(None);
        };
        let validator = match compiled::<T>() {
            Ok(validator) => validator,
            Err(refused) => {
                cx.report(
                    at,
                    Keyword::Other(refused.keyword),
                    standard::short(
                        format!("cannot be checked: {}", refused.reason),
                        MAX_MESSAGE,
                    ),
                );
                return Ok(None);
            }
        };
        if !validator.is_valid(&value) {
            standard::report(validator, &value, &at.pointer(), cx);
            return Ok(None);
        }
        match serde_json::from_value::<T>(value) {
            Ok(parsed) => Ok(Some(ViaSchemars(parsed))),
            Err(error) => {
                cx.report(
                    at,
                    Keyword::Other("deserialize"),
                    standard::short(
                        format!(
                            "matches the advertised schema, but the type's own reading \
                             refuses it (the two disagree): {error}"
                        ),
                        MAX_MESSAGE,
                    ),
                );
                Ok(None)
            }
        }
    }
}

/// The longest message of a violation written here, in bytes.
const MAX_MESSAGE: usize = 240;

/// The schema schemars generates for `T` as a root: Draft 2020-12, definitions under `$defs`,
/// without the `title` schemars adds from the type's name.
fn schemars_schema<T: JsonSchema>() -> Value {
    let mut schema = SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    if let Value::Object(map) = &mut schema
        && map.get("title").and_then(Value::as_str) == Some(T::schema_name().as_ref())
    {
        map.remove("title");
    }
    schema
}

/// Why a type's schema cannot be used to check values.
#[derive(Debug)]
struct Refused {
    /// The keyword at fault: `$ref`, `pattern`, or `$schema` for any other reason.
    keyword: &'static str,
    reason: String,
}

type Compiled = Result<Validator, Refused>;

/// The validator for `T`'s schema, compiled on first use and kept: one per type, so the
/// map's size is bounded by the program, not by its input.
fn compiled<T: JsonSchema + 'static>() -> &'static Compiled {
    static CACHE: OnceLock<RwLock<HashMap<TypeId, &'static Compiled>>> = OnceLock::new();
    let cache = CACHE.get_or_init(RwLock::default);
    let id = TypeId::of::<T>();
    if let Some(found) = cache
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&id)
    {
        return found;
    }
    // Compiled outside the lock: another thread may do the same, and the first one kept wins.
    let made = compile(&schemars_schema::<T>());
    let mut map = cache.write().unwrap_or_else(PoisonError::into_inner);
    map.entry(id).or_insert_with(|| Box::leak(Box::new(made)))
}

fn compile(schema: &Value) -> Compiled {
    standard::options(None)
        .with_draft(Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
        .map_err(|error| Refused {
            keyword: match error.kind() {
                ValidationErrorKind::Referencing(_) => "$ref",
                ValidationErrorKind::Format { format } if format == "regex" => "pattern",
                _ => "$schema",
            },
            reason: standard::short(
                standard::build_error(&error, Origin::Schemars),
                standard::MAX_REASON,
            )
            .into_owned(),
        })
}
