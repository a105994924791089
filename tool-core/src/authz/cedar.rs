//! Cedar policies over tool calls: a schema generated from the registry, policies validated
//! against it in strict mode when they are built, and evaluated for each call.
//!
//! # The request of a call
//!
//! | Cedar | from |
//! |---|---|
//! | `principal` | `User::"<principal>"` ([`Context::principal`](crate::Context::principal)); its parent is `Tenant::"<tenant>"` when the context has a [tenant](crate::Context::tenant) |
//! | `action` | `Action::"<tool name>"`, a member of the group of the tool's [`Effect`]: `Action::"read_only"`, `Action::"idempotent"` or `Action::"side_effects"` |
//! | `resource` | the call's [resource](crate::Tool::resource) (`Account::"acc_17"` from a `#[tool(resource = "Account")]` field), else `Tool::"<tool name>"` (a tool whose resource field is an `Option` may have either) |
//! | `context` | the validated arguments, as a record typed by the tool's contract |
//!
//! The entity type names `User` and `Tenant` can be changed ([`CedarBuilder::principal_type`],
//! [`CedarBuilder::tenant_type`]). Attributes and further parents of the principal, the tenant
//! and the resource come from an [`EntityLoader`], which may wait (a directory, a database).
//!
//! # Arguments as the context
//!
//! Each tool's context type is generated from the same contract as its JSON Schema:
//!
//! | JSON Schema | Cedar |
//! |---|---|
//! | `string` (any format, enum or pattern) | `String` |
//! | `boolean` | `Bool` |
//! | `integer` whose bounds fit in 64-bit signed | `Long` |
//! | `integer` that may not fit (`u64`, `u128`, unbounded) | `Long`, optional: a value outside `i64` is left out |
//! | `number` | `decimal`, optional: present only when the number as written has at most four decimal places and fits Cedar's `decimal`; otherwise left out, never rounded |
//! | `array` of strings, booleans or 64-bit integers | `Set` of them (order and duplicates are lost) |
//! | `object` with declared properties | `Record` |
//! | `null`, an optional field that is absent | left out (the attribute is optional) |
//! | anything else (unions, maps, arrays of other items) | left out of the schema and the context |
//!
//! A policy must check that an optional attribute is there (`context has amount`) before it
//! reads it; strict validation refuses a policy that does not, when it is built.
//!
//! # Cost per call
//!
//! When the policies are built, each tool is given the policies whose scope can apply to it
//! (`action == Action::"<tool>"`, `action in` a list naming the tool or its effect group, or
//! any action), split by the one principal a scope names with `principal == ...`. A call is
//! decided over the tool's policies that name no single principal and those naming its own,
//! with the same decision and the same policy ids as over the whole set. So a call costs about
//! the same with ten policies or a thousand when they are scoped to tools and principals, and
//! grows with the policies that apply to it (each is evaluated) when they are not: write the
//! principal and the action in the scope rather than in `when` where you can.
//!
//! # Policy ids
//!
//! A tool is [hidden](super::Authorize::visible) from a principal only when no `permit`
//! policy could apply to that principal and the tool by its scope, or a `forbid` with no
//! `when` or `unless` conditions and no resource constraint applies to every principal (or
//! names this one) and to the tool. A policy whose conditions read the context, the resource or
//! the principal's attributes never hides a tool: it is decided call by call.
//!
//! A policy's id is its `@id("...")` annotation, else Cedar's `policy0`, `policy1`, ... in the
//! order of the text. A refusal names the `forbid` policies that matched, or says that no
//! `permit` matched; an allow names the `permit` policies that matched.
//!
//! ```
//! use tool_core::authz::cedar::CedarPolicies;
//! use tool_core::{Argument, Context, Effect, Registry, Runtime, Tool, ToolDef, registry::ToolError};
//!
//! /// Refunds a payment of an account.
//! #[derive(Tool, Debug)]
//! struct Refund {
//!     #[tool(resource = "Account")]
//!     account: String,
//!     amount: u32,
//! }
//! # #[derive(Argument, serde::Serialize)]
//! # struct Done { ok: bool }
//! # async fn refund(_: Refund, _: &Context) -> Result<Done, ToolError> { Ok(Done { ok: true }) }
//!
//! let mut registry = Registry::new();
//! registry.register(ToolDef::new(refund)).unwrap();
//! let policies = CedarPolicies::builder(&registry)
//!     .policies(r#"
//!         @id("small-refunds")
//!         permit(principal, action == Action::"refund", resource is Account)
//!         when { context.amount <= 100 };
//!     "#)
//!     .build()
//!     .unwrap();
//! let runtime = Runtime::builder(registry).authorize(policies).build();
//!
//! // A typo in an attribute is an error when the policies are built, not a silent deny.
//! let mut registry = Registry::new();
//! registry.register(ToolDef::new(refund)).unwrap();
//! let error = CedarPolicies::builder(&registry)
//!     .policies(r#"permit(principal, action == Action::"refund", resource) when { context.amont <= 100 };"#)
//!     .build()
//!     .unwrap_err();
//! assert!(error.to_string().contains("policy0"), "{error}");
//! # let _ = runtime;
//! ```

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use cedar_policy::{
    ActionConstraint, Authorizer, Context as CedarContext, Decision as CedarDecision,
    Effect as PolicyEffect, Entities, Entity, EntityId, EntityTypeName, EntityUid, Policy,
    PolicyId, PolicySet, PrincipalConstraint, Request as CedarRequest, ResourceConstraint,
    Response, RestrictedExpression, Schema, ValidationMode, ValidationWarning, Validator,
};
use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::{Authorize, Decision, DecisionFuture, Request, Visibility};
use crate::outcome::Denied;
use crate::registry::ToolInfo;
use crate::registry::def::Effect;
use crate::registry::list::Registry;

/// Nesting deeper than this in a tool's arguments is left out of the Cedar context.
pub const MAX_CONTEXT_DEPTH: usize = 16;

/// The Cedar entity type of the tools themselves, the resource of a call that names none.
pub const TOOL_TYPE: &str = "Tool";

/// Loads the entities a call's decision needs (the principal's attributes and groups, the
/// tenant's, the resource's), in Cedar's entity JSON format; it may wait. Entities it returns
/// replace the ones the runtime makes (the principal with its tenant as parent, the tenant,
/// the resource, the tool). They are checked against the schema.
pub trait EntityLoader: Send + Sync + 'static {
    /// The entities for this call.
    fn load<'a>(&'a self, request: &'a Request<'a>) -> BoxFuture<'a, Result<Vec<Value>, String>>;
}

impl<F, Fut> EntityLoader for F
where
    F: Fn(crate::authz::OwnedRequest) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Vec<Value>, String>> + Send + 'static,
{
    fn load<'a>(&'a self, request: &'a Request<'a>) -> BoxFuture<'a, Result<Vec<Value>, String>> {
        Box::pin(self(request.to_owned_request()))
    }
}

/// Why Cedar policies could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CedarError {
    /// The policy text does not parse.
    Parse(String),
    /// The generated schema (with the application's entity types) is not a valid Cedar schema.
    Schema(String),
    /// Policies that do not validate against the schema in strict mode, each with its id and
    /// position.
    Invalid(Vec<PolicyProblem>),
    /// Two policies have the same `@id`.
    DuplicateId(String),
    /// A type name that Cedar cannot take (a principal, tenant or resource type).
    TypeName(String),
}

/// One validation error of one policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyProblem {
    /// The policy's id.
    pub policy_id: String,
    /// Line (from 1) in the policy text, when the validator gave a position.
    pub line: Option<usize>,
    /// Column (from 1).
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for PolicyProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "policy `{}`", self.policy_id)?;
        if let (Some(line), Some(column)) = (self.line, self.column) {
            write!(f, " at {line}:{column}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl fmt::Display for CedarError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CedarError::Parse(e) => write!(f, "the Cedar policies do not parse: {e}"),
            CedarError::Schema(e) => write!(f, "the Cedar schema is not valid: {e}"),
            CedarError::Invalid(problems) => {
                write!(f, "the Cedar policies do not validate against the tools:")?;
                for problem in problems {
                    write!(f, "\n- {problem}")?;
                }
                Ok(())
            }
            CedarError::DuplicateId(id) => write!(f, "two Cedar policies have the id `{id}`"),
            CedarError::TypeName(e) => write!(f, "not a Cedar entity type name: {e}"),
        }
    }
}

impl std::error::Error for CedarError {}

/// A tool as the schema sees it.
#[derive(Debug, Clone)]
struct ToolSpec {
    name: String,
    effect: Effect,
    resource: Option<&'static str>,
    /// Whether a call may name no resource (its resource is then the tool).
    tool_resource: bool,
    context: Map<String, Value>,
}

/// Configures [`CedarPolicies`].
pub struct CedarBuilder {
    tools: Vec<ToolSpec>,
    principal_type: String,
    tenant_type: String,
    entity_types: Map<String, Value>,
    policies: String,
    loader: Option<Arc<dyn EntityLoader>>,
}

impl fmt::Debug for CedarBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CedarBuilder")
            .field("tools", &self.tools.len())
            .field("principal_type", &self.principal_type)
            .finish_non_exhaustive()
    }
}

/// The group of actions of an effect.
fn effect_group(effect: Effect) -> &'static str {
    match effect {
        Effect::ReadOnly => "read_only",
        Effect::Idempotent => "idempotent",
        Effect::NonIdempotent => "side_effects",
    }
}

impl CedarBuilder {
    /// The entity type of principals (default `User`).
    pub fn principal_type(mut self, name: impl Into<String>) -> Self {
        self.principal_type = name.into();
        self
    }

    /// The entity type of tenants, the principal's parent (default `Tenant`).
    pub fn tenant_type(mut self, name: impl Into<String>) -> Self {
        self.tenant_type = name.into();
        self
    }

    /// The application's entity types in Cedar's JSON schema format (an object from type name
    /// to its declaration, e.g. `{"User": {"shape": {"type": "Record", "attributes":
    /// {"department": {"type": "String"}}}}}`); they replace the generated declarations of
    /// the same names (the principal's stays a member of the tenant type).
    pub fn entity_types(mut self, types: Value) -> Self {
        if let Value::Object(types) = types {
            self.entity_types.extend(types);
        }
        self
    }

    /// The policies, in Cedar's text syntax.
    pub fn policies(mut self, text: impl Into<String>) -> Self {
        self.policies = text.into();
        self
    }

    /// The hook that loads entities for each decision.
    pub fn entities(mut self, loader: impl EntityLoader) -> Self {
        self.loader = Some(Arc::new(loader));
        self
    }

    /// The Cedar schema generated from the registry, in Cedar's JSON schema format.
    pub fn schema_json(&self) -> Value {
        let mut entity_types = Map::new();
        entity_types.insert(self.tenant_type.clone(), json!({}));
        entity_types.insert(
            self.principal_type.clone(),
            json!({ "memberOfTypes": [self.tenant_type] }),
        );
        entity_types.insert(TOOL_TYPE.to_owned(), json!({}));
        for tool in &self.tools {
            if let Some(kind) = tool.resource {
                entity_types.entry(kind).or_insert_with(|| json!({}));
            }
        }
        for (name, declaration) in &self.entity_types {
            let mut declaration = declaration.clone();
            if *name == self.principal_type
                && let Value::Object(object) = &mut declaration
            {
                let parents = object
                    .entry("memberOfTypes")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(parents) = parents
                    && !parents
                        .iter()
                        .any(|p| p == &Value::from(&*self.tenant_type))
                {
                    parents.push(Value::from(&*self.tenant_type));
                }
            }
            entity_types.insert(name.clone(), declaration);
        }
        let mut actions = Map::new();
        for group in ["read_only", "idempotent", "side_effects"] {
            actions.insert(group.to_owned(), json!({}));
        }
        for tool in &self.tools {
            let mut resources = Vec::new();
            if let Some(kind) = tool.resource {
                resources.push(kind);
            }
            if tool.tool_resource {
                resources.push(TOOL_TYPE);
            }
            actions.insert(
                tool.name.clone(),
                json!({
                    "memberOf": [{ "id": effect_group(tool.effect) }],
                    "appliesTo": {
                        "principalTypes": [self.principal_type],
                        "resourceTypes": resources,
                        "context": { "type": "Record", "attributes": tool.context },
                    },
                }),
            );
        }
        json!({ "": { "entityTypes": entity_types, "actions": actions } })
    }

    /// Generates the schema, parses the policies and validates them against it in strict
    /// mode: a policy naming an attribute a tool does not have, comparing one at the wrong
    /// type, or naming an action of no tool is an error here, with its id and position. So is
    /// a policy that can never apply (Cedar's validator only warns of it), such as one that
    /// tests `context has amont` with a typo.
    pub fn build(self) -> Result<CedarPolicies, CedarError> {
        for name in [&self.principal_type, &self.tenant_type] {
            EntityTypeName::from_str(name)
                .map_err(|e| CedarError::TypeName(format!("{name:?}: {e}")))?;
        }
        for tool in &self.tools {
            if let Some(kind) = tool.resource
                && kind.contains("::")
            {
                return Err(CedarError::TypeName(format!(
                    "{kind:?} (tool `{}`): the generated schema has no namespaces; name the \
                     resource type without `::`",
                    tool.name
                )));
            }
        }
        let schema = Schema::from_json_value(self.schema_json())
            .map_err(|e| CedarError::Schema(e.to_string()))?;
        let parsed =
            PolicySet::from_str(&self.policies).map_err(|e| CedarError::Parse(e.to_string()))?;
        let mut policies = PolicySet::new();
        let mut ids = HashSet::new();
        for policy in parsed.policies() {
            let id = policy
                .annotation("id")
                .map_or_else(|| policy.id().to_string(), str::to_owned);
            if !ids.insert(id.clone()) {
                return Err(CedarError::DuplicateId(id));
            }
            policies
                .add(policy.new_id(PolicyId::new(&id)))
                .map_err(|e| CedarError::Parse(e.to_string()))?;
        }
        let validator = Validator::new(schema.clone());
        let result = validator.validate(&policies, ValidationMode::Strict);
        let problem = |id: &PolicyId, error: &dyn miette::Diagnostic| {
            let (line, column) = position(&self.policies, error);
            PolicyProblem {
                policy_id: id.to_string(),
                line,
                column,
                message: error.to_string(),
            }
        };
        let mut problems: Vec<PolicyProblem> = result
            .validation_errors()
            .map(|error| problem(error.policy_id(), error))
            .collect();
        // A policy that can never apply is a mistake too: `context has amont && ...` with a
        // typo validates, and would silently never match.
        problems.extend(
            result
                .validation_warnings()
                .filter(|warning| {
                    matches!(
                        warning,
                        ValidationWarning::ImpossiblePolicy(_)
                            | ValidationWarning::InvalidActionApplication(_)
                    )
                })
                .map(|warning| problem(warning.policy_id(), warning)),
        );
        if !problems.is_empty() {
            return Err(CedarError::Invalid(problems));
        }
        let principal_type = EntityTypeName::from_str(&self.principal_type)
            .map_err(|e| CedarError::TypeName(e.to_string()))?;
        let tenant_type = EntityTypeName::from_str(&self.tenant_type)
            .map_err(|e| CedarError::TypeName(e.to_string()))?;
        let contexts = self
            .tools
            .iter()
            .map(|tool| (tool.name.clone(), tool.context.clone()))
            .collect();
        let actions = schema
            .action_entities()
            .map_err(|e| CedarError::Schema(e.to_string()))?;
        let mut slices = HashMap::new();
        for tool in &self.tools {
            let slice = Slice::of(&policies, &tool.name, effect_group(tool.effect))
                .map_err(CedarError::Parse)?;
            let action = action_uid(&tool.name).map_err(CedarError::Schema)?;
            let group = action_uid(effect_group(tool.effect)).map_err(CedarError::Schema)?;
            let entities = actions
                .iter()
                .filter(|entity| entity.uid() == action || entity.uid() == group)
                .cloned()
                .collect();
            slices.insert(tool.name.clone(), (slice, entities));
        }
        Ok(CedarPolicies {
            inner: Arc::new(Inner {
                schema,
                policies,
                principal_type,
                tenant_type,
                contexts,
                slices,
                loader: self.loader,
                authorizer: Authorizer::new(),
            }),
        })
    }
}

/// Line and column (from 1) of the first labelled span of a validation error.
fn position(text: &str, error: &dyn miette::Diagnostic) -> (Option<usize>, Option<usize>) {
    let Some(offset) = error
        .labels()
        .and_then(|mut labels| labels.next())
        .map(|label| label.offset())
    else {
        return (None, None);
    };
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rfind('\n').map_or(before.chars().count(), |at| {
        before[at + 1..].chars().count()
    }) + 1;
    (Some(line), Some(column))
}

/// `Action::"<name>"`.
fn action_uid(name: &str) -> Result<EntityUid, String> {
    Ok(EntityUid::from_type_name_and_id(
        EntityTypeName::from_str("Action").map_err(|e| e.to_string())?,
        EntityId::new(name),
    ))
}

/// The policies that can apply to one tool, split by the principal they name: a policy
/// whose scope says `action == Action::"other"` (or `action in [...]` without this tool or
/// its group) can never match a call of this tool, and one whose scope says `principal ==
/// User::"bob"` can never match a call by anyone else. Leaving them out changes no decision
/// (a scope that does not match ends a policy before its conditions are evaluated), and makes
/// a call's cost grow with the policies that can apply to it, not with all of them.
struct Slice {
    /// The policies of the tool that name no single principal.
    general: PolicySet,
    /// The policies of the tool that name one principal (`principal == ...`), by principal.
    by_principal: HashMap<EntityUid, PolicySet>,
}

impl Slice {
    fn of(policies: &PolicySet, tool: &str, group: &str) -> Result<Self, String> {
        let names = |uid: &EntityUid| {
            uid.type_name().to_string() == "Action"
                && (uid.id().unescaped() == tool || uid.id().unescaped() == group)
        };
        let mut general = PolicySet::new();
        let mut by_principal: HashMap<EntityUid, PolicySet> = HashMap::new();
        for policy in policies.policies() {
            let applies = match policy.action_constraint() {
                ActionConstraint::Any => true,
                ActionConstraint::Eq(uid) => names(&uid),
                ActionConstraint::In(uids) => uids.iter().any(names),
            };
            if !applies {
                continue;
            }
            let set = match policy.principal_constraint() {
                PrincipalConstraint::Eq(uid) => by_principal.entry(uid).or_default(),
                _ => &mut general,
            };
            set.add(Policy::clone(policy)).map_err(|e| e.to_string())?;
        }
        Ok(Self {
            general,
            by_principal,
        })
    }
}

struct Inner {
    schema: Schema,
    policies: PolicySet,
    principal_type: EntityTypeName,
    tenant_type: EntityTypeName,
    contexts: BTreeMap<String, Map<String, Value>>,
    /// Per tool, the policies that can apply to it and its action entities (the tool's
    /// action and its effect group).
    slices: HashMap<String, (Slice, Vec<Entity>)>,
    loader: Option<Arc<dyn EntityLoader>>,
    authorizer: Authorizer,
}

/// One decision from two disjoint parts of a policy set, exactly as Cedar would decide over
/// their union: any satisfied `forbid` denies (naming all of them), else any satisfied
/// `permit` allows (naming all of them), else nothing matched.
fn combine(responses: &[Response]) -> (CedarDecision, Vec<String>, Vec<String>) {
    let reasons = |decision: CedarDecision| -> Vec<String> {
        responses
            .iter()
            .filter(|r| r.decision() == decision)
            .flat_map(|r| r.diagnostics().reason().map(ToString::to_string))
            .collect()
    };
    let errors = responses
        .iter()
        .flat_map(|r| r.diagnostics().errors().map(ToString::to_string))
        .collect();
    // A Deny response with reasons is one where a `forbid` was satisfied.
    let forbids = reasons(CedarDecision::Deny);
    if !forbids.is_empty() {
        return (CedarDecision::Deny, forbids, errors);
    }
    let permits = reasons(CedarDecision::Allow);
    if !permits.is_empty() {
        return (CedarDecision::Allow, permits, errors);
    }
    (CedarDecision::Deny, Vec::new(), errors)
}

/// Cedar policies, validated against the registry's tools, as an [`Authorize`] policy.
#[derive(Clone)]
pub struct CedarPolicies {
    inner: Arc<Inner>,
}

impl fmt::Debug for CedarPolicies {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CedarPolicies")
            .field("policies", &self.inner.policies.policies().count())
            .finish_non_exhaustive()
    }
}

impl CedarPolicies {
    /// Policies for the tools of `registry`.
    pub fn builder(registry: &Registry) -> CedarBuilder {
        CedarBuilder {
            tools: registry.tools().map(spec).collect(),
            principal_type: "User".to_owned(),
            tenant_type: "Tenant".to_owned(),
            entity_types: Map::new(),
            policies: String::new(),
            loader: None,
        }
    }

    /// Decides one call (the runtime's [`Authorize`] does the same).
    pub async fn decide_request(&self, request: &Request<'_>) -> Decision {
        let inner = &*self.inner;
        let loaded = match &inner.loader {
            Some(loader) => match loader.load(request).await {
                Ok(loaded) => loaded,
                Err(error) => {
                    return Decision::deny(Denied::new(format!(
                        "the entities of the call could not be loaded: {error}"
                    )));
                }
            },
            None => Vec::new(),
        };
        match self.evaluate(request, loaded) {
            Ok(decision) => decision,
            Err(detail) => Decision::deny(Denied::new(detail)),
        }
    }

    fn evaluate(&self, request: &Request<'_>, loaded: Vec<Value>) -> Result<Decision, String> {
        let inner = &*self.inner;
        let tool = request.tool();
        let cx = request.context();
        let uid = |kind: &EntityTypeName, id: &str| {
            EntityUid::from_type_name_and_id(kind.clone(), EntityId::new(id))
        };
        let tool_type = EntityTypeName::from_str(TOOL_TYPE).map_err(|e| e.to_string())?;
        let principal = uid(&inner.principal_type, cx.principal());
        let tenant = cx.tenant().map(|tenant| uid(&inner.tenant_type, tenant));
        let action = EntityUid::from_type_name_and_id(
            EntityTypeName::from_str("Action").map_err(|e| e.to_string())?,
            EntityId::new(tool.name()),
        );
        let resource = match request.resource() {
            Some(resource) => uid(
                &EntityTypeName::from_str(resource.kind()).map_err(|e| e.to_string())?,
                resource.id(),
            ),
            None => uid(&tool_type, tool.name()),
        };
        let context = inner
            .contexts
            .get(tool.name())
            .map(|shape| record(shape, &request.arguments_json(), 0))
            .unwrap_or_default();
        // Built as Cedar values directly (not through Cedar's JSON form), and checked against
        // the tool's context type with the request below.
        let context = CedarContext::from_pairs(context)
            .map_err(|e| format!("the arguments do not make a Cedar context: {e}"))?;
        let slice = inner.slices.get(tool.name());
        let entities = match slice {
            Some((_, actions)) if loaded.is_empty() => {
                // The runtime's own entities have no attributes and fit the schema by
                // construction, so they are not checked against it again on each call.
                let mut made = actions.clone();
                made.push(Entity::new_no_attrs(
                    principal.clone(),
                    tenant.iter().cloned().collect(),
                ));
                if let Some(tenant) = &tenant {
                    made.push(Entity::new_no_attrs(tenant.clone(), HashSet::new()));
                }
                if resource != principal && tenant.as_ref() != Some(&resource) {
                    made.push(Entity::new_no_attrs(resource.clone(), HashSet::new()));
                }
                Entities::from_entities(made, None)
                    .map_err(|e| format!("the entities of the call are not valid: {e}"))?
            }
            _ => {
                let request_uid = |uid: &EntityUid| json!({ "type": uid.type_name().to_string(), "id": uid.id().unescaped() });
                // The runtime's entities, then the loaded ones replacing those with the same
                // uid, all checked against the schema.
                let mut entities: BTreeMap<String, Value> = BTreeMap::new();
                let mut put = |value: Value| {
                    let key = value.get("uid").map(Value::to_string).unwrap_or_default();
                    entities.insert(key, value);
                };
                put(json!({
                    "uid": request_uid(&principal),
                    "attrs": {},
                    "parents": tenant.iter().map(request_uid).collect::<Vec<_>>(),
                }));
                if let Some(tenant) = &tenant {
                    put(json!({ "uid": request_uid(tenant), "attrs": {}, "parents": [] }));
                }
                put(json!({ "uid": request_uid(&resource), "attrs": {}, "parents": [] }));
                for value in loaded {
                    put(value);
                }
                Entities::from_json_value(
                    Value::Array(entities.into_values().collect()),
                    Some(&inner.schema),
                )
                .map_err(|e| format!("the entities of the call are not valid: {e}"))?
            }
        };
        let cedar_request = CedarRequest::new(
            principal.clone(),
            action,
            resource,
            context,
            Some(&inner.schema),
        )
        .map_err(|e| format!("the call is not a valid Cedar request: {e}"))?;
        let authorize = |policies: &PolicySet| {
            inner
                .authorizer
                .is_authorized(&cedar_request, policies, &entities)
        };
        let responses = match slice {
            Some((slice, _)) => {
                let mut responses = vec![authorize(&slice.general)];
                if let Some(named) = slice.by_principal.get(&principal) {
                    responses.push(authorize(named));
                }
                responses
            }
            // A tool the policies were not built for: the whole set decides.
            None => vec![authorize(&inner.policies)],
        };
        let (decision, reasons, errors) = combine(&responses);
        Ok(decided(decision, reasons, errors))
    }
}

/// The runtime's decision from Cedar's.
fn decided(decision: CedarDecision, reasons: Vec<String>, errors: Vec<String>) -> Decision {
    match decision {
        CedarDecision::Allow => Decision::Allow {
            policy_ids: reasons,
        },
        CedarDecision::Deny => {
            let mut detail = if reasons.is_empty() {
                "no permit policy matched".to_owned()
            } else {
                format!("forbidden by {}", reasons.join(", "))
            };
            if !errors.is_empty() {
                detail.push_str(&format!(
                    "; policies that failed to evaluate: {}",
                    errors.join("; ")
                ));
            }
            Decision::Deny(Denied::new(detail).with_policy_ids(reasons))
        }
    }
}

impl Authorize for CedarPolicies {
    fn decide<'a>(&'a self, request: &'a Request<'a>) -> DecisionFuture<'a> {
        if self.inner.loader.is_none() {
            return DecisionFuture::ready(match self.evaluate(request, Vec::new()) {
                Ok(decision) => decision,
                Err(detail) => Decision::deny(Denied::new(detail)),
            });
        }
        DecisionFuture::new(self.decide_request(request))
    }

    /// Hidden only on a refusal that no call's arguments, resource or loaded entities could
    /// change: when no `permit` policy could apply to this principal and tool by its scope (a
    /// permit whose scope names another principal, or another action, cannot), or when a
    /// `forbid` with no `when` or `unless` conditions applies to every principal (or names this
    /// one), to this tool's action and to every resource. Otherwise shown.
    fn visible(&self, tool: &ToolInfo, cx: &crate::context::Context) -> Visibility {
        let inner = &*self.inner;
        let Some((slice, _)) = inner.slices.get(&*tool.name) else {
            return Visibility::Shown;
        };
        let principal = EntityUid::from_type_name_and_id(
            inner.principal_type.clone(),
            EntityId::new(cx.principal()),
        );
        let named = slice.by_principal.get(&principal);
        let applying = || {
            slice
                .general
                .policies()
                .chain(named.into_iter().flat_map(PolicySet::policies))
        };
        let unconditional_forbid = applying().any(|policy| {
            policy.effect() == PolicyEffect::Forbid
                && !policy.has_non_scope_constraint()
                && matches!(policy.resource_constraint(), ResourceConstraint::Any)
                && match policy.principal_constraint() {
                    PrincipalConstraint::Any => true,
                    PrincipalConstraint::Eq(uid) => uid == principal,
                    _ => false,
                }
        });
        let possible_permit = applying().any(|policy| policy.effect() == PolicyEffect::Permit);
        if unconditional_forbid || !possible_permit {
            Visibility::Hidden
        } else {
            Visibility::Shown
        }
    }
}

/// A tool's spec: its name, effect, resource type and context record type.
fn spec(info: &ToolInfo) -> ToolSpec {
    let schema = info.input_schema();
    let context = match cedar_type(schema, schema, 0) {
        Some((Value::Object(mut record), _)) => match record.remove("attributes") {
            Some(Value::Object(attributes)) => attributes,
            _ => Map::new(),
        },
        _ => Map::new(),
    };
    ToolSpec {
        name: info.name().to_owned(),
        effect: info.effect(),
        resource: info.resource_kind(),
        // Without a resource field, or with an `Option` one, a call's resource may be the tool.
        tool_resource: info.resource.is_none_or(|(_, optional)| optional),
        context,
    }
}

/// The Cedar type of a JSON Schema node, and whether every valid value has a Cedar value
/// (so the attribute may be required); `None` when it is left out.
fn cedar_type(root: &Value, node: &Value, depth: usize) -> Option<(Value, bool)> {
    if depth > MAX_CONTEXT_DEPTH {
        return None;
    }
    let node = resolve(root, node)?;
    let (kind, nullable) = node_type(node)?;
    let (ty, total) = match kind {
        "string" => (json!({ "type": "String" }), true),
        "boolean" => (json!({ "type": "Bool" }), true),
        "integer" => {
            let fits = |key: &str, ok: fn(f64) -> bool| {
                node.get(key).and_then(Value::as_f64).is_some_and(ok)
            };
            let total = fits("minimum", |v| v >= i64::MIN as f64)
                && fits("maximum", |v| v <= i64::MAX as f64);
            (json!({ "type": "Long" }), total)
        }
        "number" => (json!({ "type": "Extension", "name": "decimal" }), false),
        "array" => {
            let items = node.get("items")?;
            let (element, total) = cedar_type(root, items, depth + 1)?;
            let scalar = matches!(
                element.get("type").and_then(Value::as_str),
                Some("String" | "Bool" | "Long")
            );
            if !scalar || !total {
                return None;
            }
            (json!({ "type": "Set", "element": element }), true)
        }
        "object" => {
            let properties = node.get("properties")?.as_object()?;
            let required: HashSet<&str> = node
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut attributes = Map::new();
            for (name, property) in properties {
                let Some((mut ty, total)) = cedar_type(root, property, depth + 1) else {
                    continue;
                };
                if let Value::Object(ty) = &mut ty
                    && !(total && required.contains(name.as_str()))
                {
                    ty.insert("required".to_owned(), Value::Bool(false));
                }
                attributes.insert(name.clone(), ty);
            }
            (json!({ "type": "Record", "attributes": attributes }), true)
        }
        _ => return None,
    };
    Some((ty, total && !nullable))
}

/// A `$ref` to `#/$defs/...` followed (once per level), else the node itself.
fn resolve<'a>(root: &'a Value, node: &'a Value) -> Option<&'a Value> {
    match node.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let name = reference.strip_prefix("#/$defs/")?;
            root.get("$defs")?.get(name)
        }
        None => Some(node),
    }
}

/// The one JSON type of a node, and whether `null` is also allowed.
fn node_type(node: &Value) -> Option<(&str, bool)> {
    let Some(kind) = node.get("type") else {
        return enum_type(node);
    };
    match kind {
        Value::String(kind) => Some((kind, false)),
        Value::Array(kinds) => {
            let kinds: Vec<&str> = kinds.iter().filter_map(Value::as_str).collect();
            match kinds.as_slice() {
                [kind, "null"] | ["null", kind] => Some((kind, true)),
                [kind] => Some((kind, false)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The type of an `enum` without a `type` (how unit-variant enums are advertised): a string
/// when every value but `null` is one, nullable when `null` is among them.
fn enum_type(node: &Value) -> Option<(&'static str, bool)> {
    let values = node.get("enum")?.as_array()?;
    let nullable = values.iter().any(Value::is_null);
    let mut strings = values.iter().filter(|value| !value.is_null()).peekable();
    strings.peek()?;
    strings
        .all(Value::is_string)
        .then_some(("string", nullable))
}

/// The Cedar record of `value` for the attributes `shape` (as generated by [`cedar_type`]).
fn record(
    shape: &Map<String, Value>,
    value: &Value,
    depth: usize,
) -> Vec<(String, RestrictedExpression)> {
    let mut out = Vec::new();
    let Value::Object(object) = value else {
        return out;
    };
    for (name, ty) in shape {
        if let Some(converted) = object.get(name).and_then(|v| cedar_value(ty, v, depth + 1)) {
            out.push((name.clone(), converted));
        }
    }
    out
}

/// One value as a Cedar value, or `None` when it is left out.
fn cedar_value(ty: &Value, value: &Value, depth: usize) -> Option<RestrictedExpression> {
    if depth > MAX_CONTEXT_DEPTH + 1 {
        return None;
    }
    match (ty.get("type").and_then(Value::as_str)?, value) {
        ("String", Value::String(text)) => Some(RestrictedExpression::new_string(text.clone())),
        ("Bool", Value::Bool(b)) => Some(RestrictedExpression::new_bool(*b)),
        ("Long", Value::Number(n)) => n.as_i64().map(RestrictedExpression::new_long),
        ("Extension", Value::Number(n)) => decimal(n).map(RestrictedExpression::new_decimal),
        ("Set", Value::Array(items)) => {
            let element = ty.get("element")?;
            let items: Option<Vec<RestrictedExpression>> = items
                .iter()
                .map(|item| cedar_value(element, item, depth + 1))
                .collect();
            items.map(RestrictedExpression::new_set)
        }
        ("Record", Value::Object(_)) => {
            let attributes = ty.get("attributes")?.as_object()?;
            // The attribute names are the keys of a map, so they are distinct.
            RestrictedExpression::new_record(record(attributes, value, depth)).ok()
        }
        _ => None,
    }
}

/// The largest magnitude of Cedar's `decimal` (a 64-bit integer of ten-thousandths).
const DECIMAL_MAX: f64 = 922_337_203_685_477.0;

/// A number as the text of a Cedar `decimal`, when the number as written (its shortest
/// decimal form) has at most four decimal places and fits; else `None`, never rounded.
pub fn decimal(number: &serde_json::Number) -> Option<String> {
    if let Some(integer) = number.as_i64() {
        return (integer.unsigned_abs() as f64 <= DECIMAL_MAX).then(|| format!("{integer}.0"));
    }
    if number.as_u64().is_some() {
        return None;
    }
    let value = number.as_f64()?;
    if !value.is_finite() || value.abs() > DECIMAL_MAX {
        return None;
    }
    let text = format!("{value:.4}");
    (text.parse::<f64>().ok()? == value).then_some(text)
}
