//! Cedar policies over tool calls: the schema generated from the tools' contracts, strict
//! validation when the policies are built (typos, wrong types, missing tools are errors with
//! the policy id and position), decisions naming their policies, effect groups, resources,
//! tenants, entities loaded while deciding, the arguments as the context, hostile ids.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};
use tool_core::authz::OwnedRequest;
use tool_core::authz::cedar::{CedarError, CedarPolicies, decimal};
use tool_core::ledger::{AuditKind, Ledger, MemoryLedger};
use tool_core::registry::ToolError;
use tool_core::{Argument, Code, Context, Effect, Outcome, Registry, Runtime, Tool, ToolDef};

/// Refunds a payment of an account.
#[derive(Tool, Debug)]
struct Refund {
    #[tool(resource = "Account")]
    account: String,
    amount: f64,
    reason: Option<String>,
}

/// Reads an account's balance.
#[derive(Tool, Debug)]
struct Balance {
    #[tool(resource = "Account")]
    account: String,
}

/// Sets a limit, idempotently.
#[derive(Tool, Debug)]
struct SetLimit {
    limit: u32,
    big: u64,
    tags: Vec<String>,
}

#[derive(Argument, serde::Serialize)]
struct Done {
    ok: bool,
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(|_: Refund, _: &Context| async {
            Ok::<_, ToolError>(Done { ok: true })
        }))
        .unwrap();
    registry
        .register(
            ToolDef::new(|_: Balance, _: &Context| async { Ok::<_, ToolError>(Done { ok: true }) })
                .effect(Effect::ReadOnly),
        )
        .unwrap();
    registry
        .register(
            ToolDef::new(|_: SetLimit, _: &Context| async {
                Ok::<_, ToolError>(Done { ok: true })
            })
            .effect(Effect::Idempotent),
        )
        .unwrap();
    registry
}

const POLICIES: &str = r#"
@id("read-anything")
permit(principal, action in Action::"read_only", resource);

@id("refund-own-accounts")
permit(principal, action == Action::"refund", resource is Account)
when { resource.owner == principal && context has amount && context.amount.lessThanOrEqual(decimal("500.0")) };

@id("no-refunds-for-interns")
forbid(principal, action == Action::"refund", resource)
when { principal.role == "intern" };

@id("acme-limits")
permit(principal in Tenant::"acme", action == Action::"set_limit", resource)
when { context.limit <= 1000 };
"#;

/// Users with a role; accounts with an owner: loaded while deciding, as a directory would.
async fn directory(request: OwnedRequest) -> Result<Vec<Value>, String> {
    tokio::task::yield_now().await;
    let principal = request.context.principal().to_owned();
    let role = if principal == "ivan" {
        "intern"
    } else {
        "staff"
    };
    let mut parents = Vec::new();
    if let Some(tenant) = request.context.tenant() {
        parents.push(json!({ "type": "Tenant", "id": tenant }));
    }
    let mut entities = vec![json!({
        "uid": { "type": "User", "id": principal },
        "attrs": { "role": role },
        "parents": parents,
    })];
    if let Some(resource) = &request.resource {
        let owner = if resource.id() == "acc_ivan" {
            "ivan"
        } else {
            "alice"
        };
        entities.push(json!({
            "uid": { "type": resource.kind(), "id": resource.id() },
            "attrs": { "owner": { "__entity": { "type": "User", "id": owner } } },
            "parents": [],
        }));
    }
    Ok(entities)
}

fn entity_types() -> Value {
    json!({
        "User": { "shape": { "type": "Record", "attributes": { "role": { "type": "String" } } } },
        "Account": { "shape": { "type": "Record", "attributes": {
            "owner": { "type": "Entity", "name": "User" } } } },
    })
}

fn policies(text: &str) -> Result<CedarPolicies, CedarError> {
    CedarPolicies::builder(&registry())
        .entity_types(entity_types())
        .entities(directory)
        .policies(text)
        .build()
}

fn runtime(ledger: &Arc<MemoryLedger>) -> Runtime {
    Runtime::builder(registry())
        .authorize(policies(POLICIES).unwrap())
        .ledger(Arc::clone(ledger))
        .build()
}

fn who(principal: &str, tenant: Option<&str>) -> Context {
    let builder = Context::builder(principal).scope("run");
    match tenant {
        Some(tenant) => builder.tenant(tenant).build(),
        None => builder.build(),
    }
}

fn detail(outcome: &Outcome) -> String {
    let failure = outcome
        .failure()
        .unwrap_or_else(|| panic!("expected a refusal: {outcome:?}"));
    assert_eq!(failure.code(), Code::Unauthorized, "{failure:?}");
    failure.detail().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn decisions_follow_the_policies_and_name_them() {
    let ledger = Arc::new(MemoryLedger::new());
    let runtime = runtime(&ledger);
    let alice = who("alice", Some("acme"));

    // The resource-scoped rule: alice's own account, under the limit.
    let own = r#"{"account":"acc_alice","amount":120.5}"#;
    assert!(runtime.invoke("c1", "refund", own, &alice).await.is_ok());
    let other = r#"{"account":"acc_ivan","amount":120.5}"#;
    assert_eq!(
        detail(&runtime.invoke("c2", "refund", other, &alice).await),
        "no permit policy matched"
    );
    let big = r#"{"account":"acc_alice","amount":900}"#;
    assert_eq!(
        detail(&runtime.invoke("c3", "refund", big, &alice).await),
        "no permit policy matched"
    );

    // A forbid wins over the permit that matches.
    let ivan = who("ivan", Some("acme"));
    let his = r#"{"account":"acc_ivan","amount":10}"#;
    assert_eq!(
        detail(&runtime.invoke("c4", "refund", his, &ivan).await),
        "forbidden by no-refunds-for-interns (policies: no-refunds-for-interns)"
    );

    // Effect groups: reading is allowed to all, interns included.
    let read = r#"{"account":"acc_alice"}"#;
    assert!(runtime.invoke("c5", "balance", read, &ivan).await.is_ok());

    // The tenant is the principal's parent.
    let limit = r#"{"limit":10,"big":1,"tags":["a"]}"#;
    assert!(
        runtime
            .invoke("c6", "set_limit", limit, &alice)
            .await
            .is_ok()
    );
    let globex = who("bob", Some("globex"));
    assert_eq!(
        detail(&runtime.invoke("c7", "set_limit", limit, &globex).await),
        "no permit policy matched"
    );
    let over = r#"{"limit":5000,"big":1,"tags":[]}"#;
    assert!(
        !runtime
            .invoke("c8", "set_limit", over, &alice)
            .await
            .is_ok()
    );

    // The audit trail names the deciding policies and no argument values.
    let trail = ledger.trail("run").await.unwrap();
    let decisions: Vec<_> = trail
        .iter()
        .filter(|r| matches!(r.event.kind, AuditKind::Authorized | AuditKind::Denied))
        .map(|r| (&*r.event.call_id, r.event.note.as_deref()))
        .collect();
    assert_eq!(
        decisions,
        [
            ("c1", Some("policies: refund-own-accounts")),
            ("c2", None),
            ("c3", None),
            ("c4", Some("policies: no-refunds-for-interns")),
            ("c5", Some("policies: read-anything")),
            ("c6", Some("policies: acme-limits")),
            ("c7", None),
            ("c8", None),
        ]
    );
    for record in &trail {
        let text = serde_json::to_string(&record.event).unwrap();
        assert!(!text.contains("acc_"), "{text}");
    }
}

fn problems(error: CedarError) -> Vec<(String, Option<usize>, String)> {
    match error {
        CedarError::Invalid(problems) => problems
            .into_iter()
            .map(|p| (p.policy_id, p.line, p.message))
            .collect(),
        other => panic!("expected validation errors: {other}"),
    }
}

#[test]
fn policies_that_do_not_fit_the_tools_are_build_errors_with_id_and_position() {
    // An attribute the tool does not have.
    let typo = "@id(\"typo\")\npermit(principal, action == Action::\"refund\", resource)\n  when { context.amont == decimal(\"1.0\") };";
    let found = problems(policies(typo).unwrap_err());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "typo");
    assert_eq!(found[0].1, Some(3));
    assert!(found[0].2.contains("amont"), "{found:?}");

    // A comparison at the wrong type: `account` is a string.
    let wrong =
        "permit(principal, action == Action::\"balance\", resource)\nwhen { context.account > 5 };";
    let found = problems(policies(wrong).unwrap_err());
    assert_eq!(found[0].0, "policy0");
    assert_eq!(found[0].1, Some(2));

    // An action of a tool that does not exist.
    let missing = "permit(principal, action == Action::\"delete_account\", resource);";
    let found = problems(policies(missing).unwrap_err());
    assert!(found[0].2.contains("delete_account"), "{found:?}");

    // An optional attribute read without `has`: `reason` is an `Option`, `amount` a float.
    let unguarded = "permit(principal, action == Action::\"refund\", resource) when { context.reason == \"x\" };";
    assert!(matches!(
        policies(unguarded).unwrap_err(),
        CedarError::Invalid(_)
    ));

    // A typo behind `has` validates in Cedar, but the policy could never apply.
    let guarded = "@id(\"guarded\") permit(principal, action == Action::\"refund\", resource)\n  when { context has amont && context.amont.lessThan(decimal(\"10.0\")) };";
    let found = problems(policies(guarded).unwrap_err());
    assert_eq!(found[0].0, "guarded", "{found:?}");

    // The error message carries it all.
    let text = policies(typo).unwrap_err().to_string();
    assert!(text.contains("policy `typo` at 3:"), "{text}");

    // Syntax errors and duplicate ids.
    assert!(matches!(
        policies("permit(principal, action, resource").unwrap_err(),
        CedarError::Parse(_)
    ));
    let twice = "@id(\"a\") permit(principal, action, resource);\n@id(\"a\") forbid(principal, action, resource);";
    assert_eq!(
        policies(twice).unwrap_err(),
        CedarError::DuplicateId("a".into())
    );
}

#[test]
fn the_schema_comes_from_the_contracts() {
    let builder = CedarPolicies::builder(&registry()).entity_types(entity_types());
    let schema = builder.schema_json();
    let actions = &schema[""]["actions"];
    assert_eq!(
        actions["refund"]["memberOf"],
        json!([{ "id": "side_effects" }])
    );
    assert_eq!(
        actions["balance"]["memberOf"],
        json!([{ "id": "read_only" }])
    );
    assert_eq!(
        actions["set_limit"]["memberOf"],
        json!([{ "id": "idempotent" }])
    );
    assert_eq!(
        actions["refund"]["appliesTo"]["resourceTypes"],
        json!(["Account"])
    );
    assert_eq!(
        actions["refund"]["appliesTo"]["context"]["attributes"],
        json!({
            "account": { "type": "String" },
            "amount": { "type": "Extension", "name": "decimal", "required": false },
            "reason": { "type": "String", "required": false },
        })
    );
    assert_eq!(
        actions["set_limit"]["appliesTo"]["context"]["attributes"],
        json!({
            "limit": { "type": "Long" },
            "big": { "type": "Long", "required": false },
            "tags": { "type": "Set", "element": { "type": "String" } },
        })
    );
    assert_eq!(
        schema[""]["entityTypes"]["User"]["memberOfTypes"],
        json!(["Tenant"])
    );
}

#[test]
fn numbers_become_decimals_only_when_exact() {
    let n = |text: &str| serde_json::from_str::<serde_json::Number>(text).unwrap();
    assert_eq!(decimal(&n("120.5")).as_deref(), Some("120.5000"));
    assert_eq!(decimal(&n("0.1")).as_deref(), Some("0.1000"));
    assert_eq!(decimal(&n("-3")).as_deref(), Some("-3.0"));
    assert_eq!(decimal(&n("1.23456")), None);
    assert_eq!(decimal(&n("1e-7")), None);
    assert_eq!(decimal(&n("1e300")), None);
    assert_eq!(decimal(&n("18446744073709551615")), None);
}

#[tokio::test]
async fn values_cedar_cannot_hold_are_left_out_not_changed() {
    let ledger = Arc::new(MemoryLedger::new());
    // Allowed only when the amount is absent from the context.
    let text = r#"
        @id("no-amount")
        permit(principal, action == Action::"refund", resource) unless { context has amount };
        @id("big-absent")
        permit(principal, action == Action::"set_limit", resource) unless { context has big };
    "#;
    let runtime = Runtime::builder(registry())
        .authorize(policies(text).unwrap())
        .ledger(Arc::clone(&ledger))
        .build();
    let cx = who("alice", None);
    let precise = r#"{"account":"acc_alice","amount":1.23456}"#;
    assert!(runtime.invoke("c1", "refund", precise, &cx).await.is_ok());
    let plain = r#"{"account":"acc_alice","amount":1.5}"#;
    assert!(!runtime.invoke("c2", "refund", plain, &cx).await.is_ok());
    let huge = r#"{"limit":1,"big":18446744073709551615,"tags":[]}"#;
    assert!(runtime.invoke("c3", "set_limit", huge, &cx).await.is_ok());
    let small = r#"{"limit":1,"big":7,"tags":[]}"#;
    assert!(!runtime.invoke("c4", "set_limit", small, &cx).await.is_ok());
}

#[tokio::test]
async fn hostile_ids_are_ids_not_policy_text() {
    let ledger = Arc::new(MemoryLedger::new());
    let text = r#"permit(principal == User::"alice", action, resource);"#;
    let runtime = Runtime::builder(registry())
        .authorize(
            CedarPolicies::builder(&registry())
                .policies(text)
                .build()
                .unwrap(),
        )
        .ledger(Arc::clone(&ledger))
        .build();
    for (i, principal) in [
        r#"alice", action, resource); permit(principal"#,
        "User::\"alice\"",
        "alice\u{0}",
        "",
    ]
    .into_iter()
    .enumerate()
    {
        let cx = Context::builder(principal).scope("run").build();
        let account = r#"{"account":"x\"::Account::\"y"}"#;
        let outcome = runtime
            .invoke(&format!("c{i}"), "balance", account, &cx)
            .await;
        assert_eq!(
            detail(&outcome),
            "no permit policy matched",
            "{principal:?}"
        );
    }
    let alice = Context::builder("alice").scope("run").build();
    let deep = format!(r#"{{"account":"{}"}}"#, "a".repeat(100_000));
    assert!(
        runtime
            .invoke("ok", "balance", deep.as_str(), &alice)
            .await
            .is_ok()
    );
}

/// A tool whose arguments nest `depth` objects deep (`{"n": {"n": ... {"leaf": "x"}}}`), and
/// one with `width` string arguments, each declared in its JSON Schema.
fn deep_and_wide(depth: usize, width: usize) -> Registry {
    let mut node = json!({
        "type": "object",
        "properties": { "leaf": { "type": "string" } },
        "required": ["leaf"],
    });
    for _ in 0..depth {
        node = json!({ "type": "object", "properties": { "n": node }, "required": ["n"] });
    }
    let properties: serde_json::Map<String, Value> = (0..width)
        .map(|i| (format!("p{i}"), json!({ "type": "string" })))
        .collect();
    let wide = json!({ "type": "object", "properties": properties });
    let mut registry = Registry::new();
    for (name, schema) in [("deep", node), ("wide", wide)] {
        registry
            .register(ToolDef::dynamic(
                tool_core::registry::DynamicTool::new(name, "a hostile shape", schema),
                |_: Value, _: &Context| async { Ok::<_, ToolError>(json!({})) },
            ))
            .unwrap();
    }
    registry
}

#[tokio::test]
async fn deep_and_huge_arguments_are_decided_or_refused_never_a_panic() {
    let depth = 40;
    let width = 2_000;
    let text = r#"
        @id("shallow-leaf")
        permit(principal, action == Action::"deep", resource)
        when { context.n.n.n has n };
        @id("wide-last")
        permit(principal, action == Action::"wide", resource)
        when { context has p1999 && context.p1999 == "yes" };
    "#;
    let policies = CedarPolicies::builder(&deep_and_wide(depth, width))
        .policies(text)
        .build()
        .unwrap();
    // Nesting beyond the context's depth is left out of the schema: a policy reaching for it
    // is a build error, not a silent deny.
    let deeper = format!(
        "permit(principal, action == Action::\"deep\", resource) when {{ context{} has leaf }};",
        ".n".repeat(depth)
    );
    assert!(
        CedarPolicies::builder(&deep_and_wide(depth, width))
            .policies(deeper)
            .build()
            .is_err()
    );
    let runtime = Runtime::builder(deep_and_wide(depth, width))
        .authorize(policies)
        .build();
    let cx = Context::builder("alice").scope("run").build();

    let mut deep = json!({ "leaf": "x" });
    for _ in 0..depth {
        deep = json!({ "n": deep });
    }
    assert!(
        runtime
            .invoke("d1", "deep", deep.to_string().as_str(), &cx)
            .await
            .is_ok()
    );

    let mut wide: serde_json::Map<String, Value> = (0..width)
        .map(|i| (format!("p{i}"), Value::from("a".repeat(100))))
        .collect();
    let refused = runtime
        .invoke(
            "w1",
            "wide",
            Value::Object(wide.clone()).to_string().as_str(),
            &cx,
        )
        .await;
    assert_eq!(detail(&refused), "no permit policy matched");
    wide.insert("p1999".to_owned(), Value::from("yes"));
    assert!(
        runtime
            .invoke("w2", "wide", Value::Object(wide).to_string().as_str(), &cx)
            .await
            .is_ok()
    );

    // Arguments nested far past what the tool declares, or past the JSON parser's limit:
    // refused with a clear error before or by the policies, never a panic.
    let hostile = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let outcome = runtime.invoke("h1", "deep", hostile.as_str(), &cx).await;
    assert!(!outcome.is_ok());
    let nested = format!(
        r#"{{"n":{}"x"{}}}"#,
        r#"{"n":"#.repeat(5_000),
        "}".repeat(5_000)
    );
    let outcome = runtime.invoke("h2", "deep", nested.as_str(), &cx).await;
    assert!(!outcome.is_ok());
}

mod properties {
    use futures_util::FutureExt as _;
    use proptest::prelude::*;
    use tool_core::authz::{Authorize, Request};

    use super::*;

    /// One generated rule: its effect, the principal it names (if any), the tool or effect
    /// group it names (if any; `action in [tool, also]` with a second name), and a bound on
    /// `context.limit` (if any).
    #[derive(Debug, Clone)]
    struct Rule {
        permit: bool,
        principal: Option<&'static str>,
        tool: Option<&'static str>,
        also: Option<&'static str>,
        below: Option<u32>,
    }

    const ACTIONS: [&str; 6] = [
        "refund",
        "balance",
        "set_limit",
        "read_only",
        "idempotent",
        "side_effects",
    ];

    fn rule() -> impl Strategy<Value = Rule> {
        let principal = prop::option::of(prop::sample::select(vec!["alice", "bob", "ivan"]));
        let tool = prop::option::of(prop::sample::select(ACTIONS.to_vec()));
        let also = prop::option::of(prop::sample::select(ACTIONS.to_vec()));
        (
            any::<bool>(),
            principal,
            tool,
            also,
            prop::option::of(0u32..2000),
        )
            .prop_map(|(permit, principal, tool, also, below)| {
                let also = also.filter(|_| tool.is_some());
                Rule {
                    permit,
                    principal,
                    tool,
                    also,
                    // Only `set_limit` has a `limit`.
                    below: below.filter(|_| tool == Some("set_limit") && also.is_none()),
                }
            })
    }

    /// Whether the action `name` (a tool or a group) covers a call of `tool`.
    fn covers(name: &str, tool: &str) -> bool {
        let group = match tool {
            "balance" => "read_only",
            "set_limit" => "idempotent",
            _ => "side_effects",
        };
        name == tool || name == group
    }

    /// What Cedar's semantics say of `rules` for `call`, worked out from the rules alone: the
    /// decision and the ids of the policies that made it.
    fn expected(
        rules: &[Rule],
        (principal, tool, arguments): &(&str, &str, String),
    ) -> (bool, Vec<String>) {
        let limit = serde_json::from_str::<Value>(arguments).unwrap()["limit"].as_u64();
        let matching = |permit: bool| -> Vec<String> {
            let mut ids: Vec<String> = rules
                .iter()
                .enumerate()
                .filter(|(_, r)| r.permit == permit)
                .filter(|(_, r)| r.principal.is_none_or(|p| p == *principal))
                .filter(|(_, r)| {
                    r.tool
                        .is_none_or(|t| covers(t, tool) || r.also.is_some_and(|a| covers(a, tool)))
                })
                .filter(|(_, r)| {
                    r.below
                        .is_none_or(|n| limit.is_some_and(|l| l < u64::from(n)))
                })
                .map(|(i, _)| format!("policy{i}"))
                .collect();
            ids.sort();
            ids
        };
        let forbids = matching(false);
        if !forbids.is_empty() {
            return (false, forbids);
        }
        let permits = matching(true);
        (!permits.is_empty(), permits)
    }

    fn text(rule: &Rule) -> String {
        let effect = if rule.permit { "permit" } else { "forbid" };
        let principal = rule.principal.map_or("principal".to_owned(), |p| {
            format!("principal == User::{p:?}")
        });
        let action = match (rule.tool, rule.also) {
            (None, _) => "action".to_owned(),
            (Some(t), None) if ["read_only", "idempotent", "side_effects"].contains(&t) => {
                format!("action in Action::{t:?}")
            }
            (Some(t), None) => format!("action == Action::{t:?}"),
            (Some(t), Some(a)) => format!("action in [Action::{t:?}, Action::{a:?}]"),
        };
        let when = rule.below.map_or(String::new(), |n| {
            format!(" when {{ context.limit < {n} }}")
        });
        format!("{effect}({principal}, {action}, resource){when};\n")
    }

    /// A call: principal, tool and arguments.
    fn call() -> impl Strategy<Value = (&'static str, &'static str, String)> {
        (
            prop::sample::select(vec!["alice", "bob", "ivan", "mallory"]),
            prop::sample::select(vec!["refund", "balance", "set_limit"]),
            0u32..3000,
        )
            .prop_map(|(principal, tool, limit)| {
                let arguments = match tool {
                    "refund" => r#"{"account":"acc_alice","amount":1.5}"#.to_owned(),
                    "balance" => r#"{"account":"acc_alice"}"#.to_owned(),
                    _ => format!(r#"{{"limit":{limit},"big":1,"tags":[]}}"#),
                };
                (principal, tool, arguments)
            })
    }

    fn decide(policies: &CedarPolicies, call: &(&str, &str, String)) -> bool {
        decision(policies, call).0
    }

    /// The decision and the ids of the policies that made it (sorted).
    fn decision(
        policies: &CedarPolicies,
        (principal, tool, arguments): &(&str, &str, String),
    ) -> (bool, Vec<String>) {
        let registry = registry();
        let info = registry.get(tool).unwrap();
        let cx = Context::builder(*principal).build();
        let args = match *tool {
            "refund" => Refund::parse_arguments(arguments).unwrap().resource(),
            "balance" => Balance::parse_arguments(arguments).unwrap().resource(),
            _ => None,
        };
        let request = Request::new(info, &cx, arguments.as_str().into(), args.as_ref());
        let decision = policies
            .decide(&request)
            .now_or_never()
            .expect("these policies decide at once");
        let mut ids = decision.policy_ids().to_vec();
        ids.sort();
        (decision.is_allowed(), ids)
    }

    fn build(rules: &[Rule]) -> CedarPolicies {
        let text: String = rules.iter().map(text).collect();
        CedarPolicies::builder(&registry())
            .policies(text)
            .build()
            .unwrap()
    }

    /// The same policies with a loader that supplies the principal (as the runtime would make
    /// it), so the entities go through the loaded path.
    fn build_loading(rules: &[Rule]) -> CedarPolicies {
        let text: String = rules.iter().map(text).collect();
        CedarPolicies::builder(&registry())
            .entities(|request: OwnedRequest| async move {
                Ok(vec![json!({
                    "uid": { "type": "User", "id": request.context.principal() },
                    "attrs": {},
                    "parents": [],
                })])
            })
            .policies(text)
            .build()
            .unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn without_a_permit_everything_is_denied(
            rules in prop::collection::vec(rule(), 0..8),
            calls in prop::collection::vec(call(), 1..6),
        ) {
            let forbids: Vec<Rule> = rules.into_iter().map(|r| Rule { permit: false, ..r }).collect();
            let policies = build(&forbids);
            for call in &calls {
                prop_assert!(!decide(&policies, call), "{call:?} allowed by {forbids:?}");
            }
        }

        #[test]
        fn a_matching_forbid_always_wins(
            rules in prop::collection::vec(rule(), 0..8),
            call in call(),
        ) {
            // Whatever the permits, a forbid naming this principal and tool denies it.
            let mut rules: Vec<Rule> = rules.into_iter().map(|r| Rule { permit: true, ..r }).collect();
            rules.push(Rule { permit: true, principal: None, tool: None, also: None, below: None });
            let allowed_before = decide(&build(&rules), &call);
            prop_assert!(allowed_before, "an unconditional permit with no forbid of this call");
            rules.push(Rule { permit: false, principal: Some(call.0), tool: Some(call.1), also: None, below: None });
            prop_assert!(!decide(&build(&rules), &call));
        }

        #[test]
        fn decisions_and_their_policies_follow_cedars_semantics(
            rules in prop::collection::vec(rule(), 0..24),
            calls in prop::collection::vec(call(), 1..8),
        ) {
            // Policies naming other tools, groups or principals are set aside per call; the
            // decision and the policies named must be those of the whole set.
            let policies = build(&rules);
            let loading = build_loading(&rules);
            for call in &calls {
                prop_assert_eq!(decision(&policies, call), expected(&rules, call), "{:?} under {:?}", call, rules);
                prop_assert_eq!(decision(&loading, call), expected(&rules, call), "loaded: {:?} under {:?}", call, rules);
            }
        }
    }
}

/// A decision a ported example application documents: principal, tool, arguments, and the
/// policy that allows the call or the start of the refusal's detail.
type Case<'a> = (&'a str, &'a str, &'a str, Result<&'a str, &'a str>);

/// Runs each case through a runtime with `policies` over `tools`, checks its decision, and for
/// each allowed call that the audit trail names the policy that allowed it.
async fn assert_decisions(
    tools: Registry,
    policies: CedarPolicies,
    scope: &str,
    cases: &[Case<'_>],
) {
    let ledger = Arc::new(MemoryLedger::new());
    let runtime = Runtime::builder(tools)
        .authorize(policies)
        .ledger(Arc::clone(&ledger))
        .build();
    for (i, (principal, tool, arguments, expected)) in cases.iter().enumerate() {
        let cx = Context::builder(*principal).scope(scope).build();
        let outcome = runtime
            .invoke(&format!("c{i}"), tool, *arguments, &cx)
            .await;
        match (expected, outcome.failure()) {
            (Ok(_), None) => {}
            (Err(why), Some(failure)) => {
                let detail = failure.detail().unwrap_or_default();
                assert!(detail.starts_with(why), "{principal} {tool}: {detail}");
            }
            (expected, got) => panic!("{principal} {tool}: expected {expected:?}, got {got:?}"),
        }
    }
    // The policy that allowed each call, from the audit trail.
    let allowed: HashMap<String, String> = ledger
        .trail(scope)
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.event.kind == AuditKind::Authorized)
        .map(|r| {
            (
                r.event.call_id.to_string(),
                r.event.note.unwrap_or_default(),
            )
        })
        .collect();
    for (i, (principal, tool, _, expected)) in cases.iter().enumerate() {
        if let Ok(policy) = expected {
            assert_eq!(
                allowed.get(&format!("c{i}")).map(String::as_str),
                Some(format!("policies: {policy}").as_str()),
                "{principal} {tool}"
            );
        }
    }
}

/// The policies of the Cedar project's TinyTodo example application, ported to tools: each
/// TinyTodo action is a tool, a task list is the resource named by its `list` field, and the
/// application entity is the tool itself. The decisions below are the ones its policies
/// document (policy numbers as in its policy file).
mod tinytodo {
    use super::*;

    macro_rules! list_tool {
        ($name:ident, $doc:literal $(, $field:ident : $ty:ty)*) => {
            #[doc = $doc]
            #[derive(Tool, Debug)]
            struct $name {
                #[tool(resource = "List")]
                list: String,
                $($field: $ty,)*
            }
        };
    }

    /// Creates a task list.
    #[derive(Tool, Debug)]
    struct CreateList {
        name: String,
    }

    /// Lists the principal's task lists.
    #[derive(Tool, Debug)]
    struct GetLists {}

    list_tool!(GetList, "Reads a task list.");
    list_tool!(UpdateList, "Renames a task list.", name: String);
    list_tool!(DeleteList, "Deletes a task list.");
    list_tool!(CreateTask, "Adds a task to a list.", name: String);
    list_tool!(UpdateTask, "Updates a task of a list.", task: u32, done: bool);
    list_tool!(DeleteTask, "Deletes a task of a list.", task: u32);

    fn tools() -> Registry {
        async fn done() -> Result<Done, ToolError> {
            Ok(Done { ok: true })
        }
        let mut registry = Registry::new();
        registry
            .register(ToolDef::new(|_: CreateList, _: &Context| done()))
            .unwrap();
        registry
            .register(ToolDef::new(|_: GetLists, _: &Context| done()).effect(Effect::ReadOnly))
            .unwrap();
        registry
            .register(ToolDef::new(|_: GetList, _: &Context| done()).effect(Effect::ReadOnly))
            .unwrap();
        registry
            .register(ToolDef::new(|_: UpdateList, _: &Context| done()).effect(Effect::Idempotent))
            .unwrap();
        registry
            .register(ToolDef::new(|_: DeleteList, _: &Context| done()))
            .unwrap();
        registry
            .register(ToolDef::new(|_: CreateTask, _: &Context| done()))
            .unwrap();
        registry
            .register(ToolDef::new(|_: UpdateTask, _: &Context| done()))
            .unwrap();
        registry
            .register(ToolDef::new(|_: DeleteTask, _: &Context| done()))
            .unwrap();
        registry
    }

    const POLICIES: &str = r#"
        // Policy 0: any user can create a list and see the lists they own.
        @id("policy0")
        permit(principal, action in [Action::"create_list", Action::"get_lists"], resource);

        // Policy 1: a user can perform any action on a list they own.
        @id("policy1")
        permit(principal, action, resource) when { resource is List && resource.owner == principal };

        // Policy 2: a user can see a list if they are a reader or an editor.
        @id("policy2")
        permit(principal, action == Action::"get_list", resource)
        when { principal in resource.readers || principal in resource.editors };

        // Policy 3: a user can update a list and its tasks if they are an editor.
        @id("policy3")
        permit(principal, action in [Action::"update_list", Action::"create_task",
                                     Action::"update_task", Action::"delete_task"], resource)
        when { principal in resource.editors };

        // Policy 4: admins can perform any action on any resource.
        @id("admin-omnipotence")
        permit(principal in Team::"admin", action, resource);

        // Policy 5: interns may not create new task lists.
        @id("interns-no-lists")
        forbid(principal in Team::"interns", action == Action::"create_list", resource);
    "#;

    fn entity_types() -> Value {
        json!({
            "User": { "memberOfTypes": ["Team"], "shape": { "type": "Record", "attributes": {
                "joblevel": { "type": "Long" }, "location": { "type": "String" } } } },
            "Team": { "memberOfTypes": ["Team", "Application"] },
            "Application": {},
            "List": { "shape": { "type": "Record", "attributes": {
                "name": { "type": "String" },
                "owner": { "type": "Entity", "name": "User" },
                "readers": { "type": "Entity", "name": "Team" },
                "editors": { "type": "Entity", "name": "Team" } } } },
        })
    }

    /// TinyTodo's users, teams and one list of emina's, as its entity store holds them.
    fn store() -> Vec<Value> {
        let user = |id: &str, level: i64, teams: &[&str]| {
            json!({
                "uid": { "type": "User", "id": id },
                "attrs": { "joblevel": level, "location": "ABC17" },
                "parents": teams.iter().map(|t| json!({ "type": "Team", "id": t })).collect::<Vec<_>>(),
            })
        };
        let team =
            |id: &str| json!({ "uid": { "type": "Team", "id": id }, "attrs": {}, "parents": [] });
        vec![
            user("emina", 9, &[]),
            user("andrew", 5, &["list0-readers"]),
            user("kesha", 5, &["list0-editors"]),
            user("aaron", 3, &["interns"]),
            user("ada", 8, &["admin"]),
            team("admin"),
            team("interns"),
            team("list0-readers"),
            team("list0-editors"),
            json!({
                "uid": { "type": "List", "id": "0" },
                "attrs": {
                    "name": "Cedar blog post",
                    "owner": { "__entity": { "type": "User", "id": "emina" } },
                    "readers": { "__entity": { "type": "Team", "id": "list0-readers" } },
                    "editors": { "__entity": { "type": "Team", "id": "list0-editors" } },
                },
                "parents": [],
            }),
        ]
    }

    #[tokio::test]
    async fn the_ported_policies_give_tinytodos_decisions() {
        let policies = CedarPolicies::builder(&tools())
            .entity_types(entity_types())
            .entities(|_: OwnedRequest| async { Ok(store()) })
            .policies(POLICIES)
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let cases: &[Case<'_>] = &[
            (
                "andrew",
                "create_list",
                r#"{"name":"groceries"}"#,
                Ok("policy0"),
            ),
            ("andrew", "get_lists", "{}", Ok("policy0")),
            (
                "aaron",
                "create_list",
                r#"{"name":"mine"}"#,
                Err("forbidden by interns-no-lists"),
            ),
            ("aaron", "get_lists", "{}", Ok("policy0")),
            ("emina", "delete_list", r#"{"list":"0"}"#, Ok("policy1")),
            (
                "emina",
                "update_task",
                r#"{"list":"0","task":1,"done":true}"#,
                Ok("policy1"),
            ),
            ("andrew", "get_list", r#"{"list":"0"}"#, Ok("policy2")),
            (
                "andrew",
                "update_list",
                r#"{"list":"0","name":"x"}"#,
                Err("no permit policy matched"),
            ),
            ("kesha", "get_list", r#"{"list":"0"}"#, Ok("policy2")),
            (
                "kesha",
                "create_task",
                r#"{"list":"0","name":"review"}"#,
                Ok("policy3"),
            ),
            (
                "kesha",
                "delete_list",
                r#"{"list":"0"}"#,
                Err("no permit policy matched"),
            ),
            (
                "aaron",
                "get_list",
                r#"{"list":"0"}"#,
                Err("no permit policy matched"),
            ),
            (
                "ada",
                "delete_list",
                r#"{"list":"0"}"#,
                Ok("admin-omnipotence"),
            ),
        ];
        assert_decisions(tools(), policies, "todo", cases).await;
    }
}

/// How a temperature is given.
#[derive(Argument, Debug)]
#[allow(dead_code)]
enum Units {
    Celsius,
    Fahrenheit,
}

/// Sets a thermostat.
#[derive(Tool, Debug)]
#[allow(dead_code)]
struct SetThermostat {
    units: Units,
    fallback: Option<Units>,
    degrees: u8,
}

#[tokio::test]
async fn enum_arguments_are_strings_policies_can_compare() {
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(|_: SetThermostat, _: &Context| async {
            Ok::<_, ToolError>(Done { ok: true })
        }))
        .unwrap();
    let schema = CedarPolicies::builder(&registry).schema_json();
    assert_eq!(
        schema[""]["actions"]["set_thermostat"]["appliesTo"]["context"]["attributes"],
        json!({
            "units": { "type": "String" },
            "fallback": { "type": "String", "required": false },
            "degrees": { "type": "Long" },
        })
    );

    // A typo in the attribute is a build error, as for any other field.
    let typo = CedarPolicies::builder(&registry)
        .policies(
            r#"@id("t") permit(principal, action, resource) when { context.unit == "Celsius" };"#,
        )
        .build()
        .expect_err("an attribute the tool does not have is a build error");
    assert!(typo.to_string().contains("unit"), "{typo}");

    let policies = CedarPolicies::builder(&registry)
        .policies(
            r#"@id("celsius-only") permit(principal, action == Action::"set_thermostat", resource)
               when { context.units == "Celsius" };"#,
        )
        .build()
        .unwrap();
    let runtime = Runtime::builder(registry).authorize(policies).build();
    let cx = who("alice", None);
    let allowed = runtime
        .invoke(
            "t1",
            "set_thermostat",
            r#"{"units": "Celsius", "fallback": null, "degrees": 21}"#,
            &cx,
        )
        .await;
    assert!(allowed.is_ok(), "{allowed:?}");
    let refused = runtime
        .invoke(
            "t2",
            "set_thermostat",
            r#"{"units": "Fahrenheit", "fallback": null, "degrees": 70}"#,
            &cx,
        )
        .await;
    assert!(detail(&refused).contains("no permit"), "{refused:?}");
}

#[tokio::test]
async fn tools_no_call_could_be_permitted_are_hidden_from_that_principal() {
    let text = r#"
        @id("alice-refunds")
        permit(principal == User::"alice", action == Action::"refund", resource);

        @id("refund-reasons-reviewed")
        forbid(principal, action == Action::"refund", resource) when { context has reason };

        @id("read-anything")
        permit(principal, action in Action::"read_only", resource);

        @id("small-limits")
        permit(principal, action == Action::"set_limit", resource) when { context.limit < 10 };

        @id("mallory-nothing")
        forbid(principal == User::"mallory", action, resource);
    "#;
    let policies = CedarPolicies::builder(&registry())
        .policies(text)
        .build()
        .unwrap();
    let runtime = Runtime::builder(registry()).authorize(policies).build();
    let names = |cx: &Context| -> Vec<String> {
        runtime
            .visible_tools(cx)
            .into_iter()
            .map(|info| info.name().to_owned())
            .collect()
    };
    // A permit naming her, though a conditional forbid could refuse some calls: shown.
    assert_eq!(
        names(&who("alice", None)),
        ["refund", "balance", "set_limit"]
    );
    // No permit could ever apply to bob's refunds: hidden. The `when` on the context of
    // `set_limit` cannot be decided without the arguments: shown.
    assert_eq!(names(&who("bob", Some("acme"))), ["balance", "set_limit"]);
    // An unconditional forbid of every action hides everything.
    assert!(names(&who("mallory", None)).is_empty());

    // Calls to a hidden tool are refused as before; the shown ones still decide per call.
    let refund = r#"{"account":"a1","amount":5}"#;
    let bob = who("bob", Some("acme"));
    let outcome = runtime.invoke("c1", "refund", refund, &bob).await;
    assert_eq!(outcome.code(), Some(Code::Unauthorized));
    let alice = who("alice", None);
    assert!(runtime.invoke("c2", "refund", refund, &alice).await.is_ok());
    let limit = r#"{"limit":50,"big":1,"tags":[]}"#;
    let outcome = runtime.invoke("c3", "set_limit", limit, &alice).await;
    assert_eq!(outcome.code(), Some(Code::Unauthorized));
}

/// The policies of the Cedar project's GitHub example application, ported to tools: each
/// repository action is a tool whose `repo` field names the resource, and the roles (readers,
/// triagers, writers, maintainers, admins) are user groups nested as the example nests them.
/// The documented decisions are the example's allow and deny requests; the last two cases
/// follow from its policy text.
mod github {
    use super::*;

    macro_rules! repo_tool {
        ($name:ident, $doc:literal $(, $field:ident : $ty:ty)*) => {
            #[doc = $doc]
            #[derive(Tool, Debug)]
            #[allow(dead_code)]
            struct $name {
                #[tool(resource = "Repository")]
                repo: String,
                $($field: $ty,)*
            }
        };
    }

    repo_tool!(Pull, "Reads a repository.");
    repo_tool!(Fork, "Forks a repository.");
    repo_tool!(Push, "Pushes to a branch of a repository.", branch: String);
    repo_tool!(AddReader, "Gives a user read access to a repository.", user: String);

    fn tools() -> Registry {
        async fn done() -> Result<Done, ToolError> {
            Ok(Done { ok: true })
        }
        let mut registry = Registry::new();
        registry
            .register(ToolDef::new(|_: Pull, _: &Context| done()).effect(Effect::ReadOnly))
            .unwrap();
        registry
            .register(ToolDef::new(|_: Fork, _: &Context| done()))
            .unwrap();
        registry
            .register(ToolDef::new(|_: Push, _: &Context| done()))
            .unwrap();
        registry
            .register(ToolDef::new(|_: AddReader, _: &Context| done()).effect(Effect::Idempotent))
            .unwrap();
        registry
    }

    const POLICIES: &str = r#"
        // Actions for readers.
        @id("readers-pull")
        permit(principal, action == Action::"pull", resource) when { principal in resource.readers };

        @id("readers-fork")
        permit(principal, action == Action::"fork", resource) when { principal in resource.readers };

        // Actions for writers.
        @id("writers-push")
        permit(principal, action == Action::"push", resource) when { principal in resource.writers };

        // Actions for admins.
        @id("admins-add-reader")
        permit(principal, action == Action::"add_reader", resource) when { principal in resource.admins };
    "#;

    fn entity_types() -> Value {
        let group = json!({ "type": "Entity", "name": "UserGroup" });
        json!({
            "User": { "memberOfTypes": ["UserGroup", "Team", "Organization"] },
            "UserGroup": { "memberOfTypes": ["UserGroup"] },
            "Team": { "memberOfTypes": ["UserGroup"] },
            "Organization": { "memberOfTypes": ["UserGroup"] },
            "Repository": { "shape": { "type": "Record", "attributes": {
                "readers": group, "triagers": group, "writers": group,
                "maintainers": group, "admins": group } } },
        })
    }

    /// The example's users, teams, organization and three repositories, each with its five
    /// groups nested readers < triagers < writers < maintainers < admins.
    fn store() -> Vec<Value> {
        let entity = |ty: &str, id: &str, parents: &[(&str, &str)]| {
            json!({
                "uid": { "type": ty, "id": id },
                "attrs": {},
                "parents": parents
                    .iter()
                    .map(|(ty, id)| json!({ "type": ty, "id": id }))
                    .collect::<Vec<_>>(),
            })
        };
        let roles = ["readers", "triagers", "writers", "maintainers", "admins"];
        let mut store = vec![
            entity(
                "User",
                "alice",
                &[
                    ("UserGroup", "common_knowledge_writers"),
                    ("UserGroup", "uncommon_knowledge_writers"),
                ],
            ),
            entity(
                "User",
                "jane",
                &[
                    ("UserGroup", "common_knowledge_maintainers"),
                    ("Team", "team_that_can_read_everything"),
                ],
            ),
            entity("User", "bob", &[("Organization", "tiny_corp_owners")]),
        ];
        let repos = ["common_knowledge", "secret", "uncommon_knowledge"];
        let readers: Vec<String> = repos.iter().map(|r| format!("{r}_readers")).collect();
        let admins: Vec<String> = repos.iter().map(|r| format!("{r}_admins")).collect();
        let groups = |names: &[String]| -> Vec<(String, String)> {
            names
                .iter()
                .map(|n| ("UserGroup".to_owned(), n.clone()))
                .collect()
        };
        let as_refs = |v: &[(String, String)]| -> Vec<Value> {
            v.iter()
                .map(|(ty, id)| json!({ "type": ty, "id": id }))
                .collect()
        };
        store.push(json!({
            "uid": { "type": "Team", "id": "team_that_can_read_everything" },
            "attrs": {},
            "parents": as_refs(&groups(&readers)),
        }));
        store.push(json!({
            "uid": { "type": "Organization", "id": "tiny_corp_owners" },
            "attrs": {},
            "parents": as_refs(&groups(&admins)),
        }));
        for repo in repos {
            let mut attrs = serde_json::Map::new();
            for (i, role) in roles.iter().enumerate() {
                let id = format!("{repo}_{role}");
                attrs.insert(
                    (*role).to_owned(),
                    json!({ "__entity": { "type": "UserGroup", "id": id } }),
                );
                let parents: Vec<(&str, &str)> = Vec::new();
                let mut group = entity("UserGroup", &id, &parents);
                if i > 0 {
                    group["parents"] =
                        json!([{ "type": "UserGroup", "id": format!("{repo}_{}", roles[i - 1]) }]);
                }
                store.push(group);
            }
            store.push(json!({
                "uid": { "type": "Repository", "id": repo },
                "attrs": attrs,
                "parents": [],
            }));
        }
        store
    }

    #[tokio::test]
    async fn the_ported_policies_give_the_github_examples_decisions() {
        let policies = CedarPolicies::builder(&tools())
            .entity_types(entity_types())
            .entities(|_: OwnedRequest| async { Ok(store()) })
            .policies(POLICIES)
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let cases: &[Case<'_>] = &[
            // The example's allow requests.
            (
                "alice",
                "pull",
                r#"{"repo":"common_knowledge"}"#,
                Ok("readers-pull"),
            ),
            (
                "alice",
                "pull",
                r#"{"repo":"uncommon_knowledge"}"#,
                Ok("readers-pull"),
            ),
            (
                "alice",
                "push",
                r#"{"repo":"uncommon_knowledge","branch":"main"}"#,
                Ok("writers-push"),
            ),
            (
                "bob",
                "push",
                r#"{"repo":"secret","branch":"main"}"#,
                Ok("writers-push"),
            ),
            ("jane", "pull", r#"{"repo":"secret"}"#, Ok("readers-pull")),
            // The example's deny requests.
            (
                "alice",
                "pull",
                r#"{"repo":"secret"}"#,
                Err("no permit policy matched"),
            ),
            (
                "alice",
                "push",
                r#"{"repo":"secret","branch":"main"}"#,
                Err("no permit policy matched"),
            ),
            // From the policy text: maintainers are not admins; an organization owner is.
            (
                "jane",
                "add_reader",
                r#"{"repo":"common_knowledge","user":"alice"}"#,
                Err("no permit policy matched"),
            ),
            (
                "bob",
                "add_reader",
                r#"{"repo":"common_knowledge","user":"alice"}"#,
                Ok("admins-add-reader"),
            ),
        ];
        assert_decisions(tools(), policies, "github", cases).await;
    }
}
