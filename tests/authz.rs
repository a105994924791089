//! Authorization as stacked policies: the order they are asked in, none replacing another,
//! policies that wait (bounded by the run's deadline and cancellation), `all` and `any`, the
//! resource of a call, and the ids of the deciding rules in the failure and the audit trail.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Notify, RwLock};
use tool_core::authz::{self, Decision, DecisionFuture, OwnedRequest, Request};
use tool_core::contract::ResourceRef;
use tool_core::ledger::{AuditKind, Ledger, MemoryLedger};
use tool_core::registry::{ToolError, ToolInfo};
use tool_core::{
    Argument, CancellationToken, Code, Context, Denied, Effect, Outcome, Registry, Runtime, Tool,
    ToolDef,
};

/// Refunds a payment of an account.
#[derive(Tool, Debug)]
struct Refund {
    #[tool(resource = "Account")]
    account_id: String,
    amount: u32,
}

/// Reads an account's balance.
#[derive(Tool, Debug)]
struct Balance {
    #[tool(resource = "Account")]
    account: u64,
}

/// Lists accounts, optionally of one branch.
#[derive(Tool, Debug)]
struct ListAccounts {
    #[tool(resource = "Branch")]
    branch: Option<String>,
}

#[derive(Argument, serde::Serialize)]
struct Done {
    ok: bool,
}

/// Counts the handlers that ran.
#[derive(Default)]
struct Ran(AtomicUsize);

impl Ran {
    fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

fn registry(ran: &Arc<Ran>, refund: impl FnOnce(ToolDef<Refund>) -> ToolDef<Refund>) -> Registry {
    let mut registry = Registry::new();
    let counter = Arc::clone(ran);
    let handler = move |_: Refund, _: &Context| {
        counter.0.fetch_add(1, Ordering::SeqCst);
        async { Ok::<_, ToolError>(Done { ok: true }) }
    };
    registry.register(refund(ToolDef::new(handler))).unwrap();
    let counter = Arc::clone(ran);
    let handler = move |_: Balance, _: &Context| {
        counter.0.fetch_add(1, Ordering::SeqCst);
        async { Ok::<_, ToolError>(Done { ok: true }) }
    };
    registry
        .register(ToolDef::new(handler).effect(Effect::ReadOnly))
        .unwrap();
    let handler = |_: ListAccounts, _: &Context| async { Ok::<_, ToolError>(Done { ok: true }) };
    registry
        .register(ToolDef::new(handler).effect(Effect::ReadOnly))
        .unwrap();
    registry
}

const REFUND: &str = r#"{"account_id":"acc_1","amount":5}"#;

fn alice() -> Context {
    Context::builder("alice").tenant("acme").build()
}

/// A policy that notes its name in `log` and allows.
fn noting(
    log: &Arc<Mutex<Vec<&'static str>>>,
    name: &'static str,
) -> impl Fn(&ToolInfo, &Context) -> Result<(), Denied> + Send + Sync + 'static {
    let log = Arc::clone(log);
    move |_: &ToolInfo, _: &Context| {
        log.lock().unwrap().push(name);
        Ok(())
    }
}

fn failure(outcome: &Outcome) -> &tool_core::Failure {
    outcome
        .failure()
        .unwrap_or_else(|| panic!("expected a failure: {outcome:?}"))
}

#[tokio::test]
async fn policies_stack_in_the_documented_order() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let ran = Arc::new(Ran::default());
    let tool_log = Arc::clone(&log);
    let tool_log2 = Arc::clone(&log);
    let registry = registry(&ran, |def| {
        def.authorize(move |_: &Refund, _: &Context| {
            tool_log.lock().unwrap().push("tool-1");
            Ok(())
        })
        .authorize(move |_: &Refund, _: &Context| {
            tool_log2.lock().unwrap().push("tool-2");
            Ok(())
        })
    });
    // Declared out of order on purpose: the tenant's policy is added first.
    let runtime = Runtime::builder(registry)
        .authorize_tenant("acme", noting(&log, "acme"))
        .authorize_tenant("globex", noting(&log, "globex"))
        .authorize(noting(&log, "runtime-1"))
        .authorize(noting(&log, "runtime-2"))
        .build();

    let outcome = runtime.invoke("c1", "refund", REFUND, &alice()).await;
    assert!(outcome.is_ok(), "{outcome:?}");
    assert_eq!(
        *log.lock().unwrap(),
        ["runtime-1", "runtime-2", "acme", "tool-1", "tool-2"]
    );
    assert_eq!(ran.count(), 1);

    // Another tenant's policies are not asked; without a tenant, none are.
    log.lock().unwrap().clear();
    let bob = Context::builder("bob").tenant("globex").build();
    assert!(runtime.invoke("c2", "refund", REFUND, &bob).await.is_ok());
    let nobody = Context::builder("carol").build();
    assert!(
        runtime
            .invoke("c3", "refund", REFUND, &nobody)
            .await
            .is_ok()
    );
    assert_eq!(
        *log.lock().unwrap(),
        [
            "runtime-1",
            "runtime-2",
            "globex",
            "tool-1",
            "tool-2",
            "runtime-1",
            "runtime-2",
            "tool-1",
            "tool-2"
        ]
    );
}

#[tokio::test]
async fn a_second_policy_adds_to_the_first_never_replaces_it() {
    let ran = Arc::new(Ran::default());
    let runtime = Runtime::builder(registry(&ran, |def| def))
        .authorize(|_: &ToolInfo, cx: &Context| match cx.principal() {
            "mallory" => Err(Denied::new("mallory is blocked")),
            _ => Ok(()),
        })
        .authorize(|_: &ToolInfo, _: &Context| Ok(()))
        .build();
    let mallory = Context::builder("mallory").build();
    let outcome = runtime.invoke("c1", "refund", REFUND, &mallory).await;
    assert_eq!(failure(&outcome).code(), Code::Unauthorized);
    assert_eq!(failure(&outcome).detail(), Some("mallory is blocked"));
    assert_eq!(ran.count(), 0);

    // The same for the tool's own checks: the first still refuses after a second is added.
    let ran = Arc::new(Ran::default());
    let runtime = Runtime::new(registry(&ran, |def| {
        def.authorize(|args: &Refund, _: &Context| {
            if args.amount > 100 {
                Err(Denied::new("over 100").with_message("refunds over 100 need a manager"))
            } else {
                Ok(())
            }
        })
        .authorize(|_: &Refund, _: &Context| Ok(()))
    }));
    let big = r#"{"account_id":"acc_1","amount":500}"#;
    let outcome = runtime.invoke("c1", "refund", big, &alice()).await;
    assert!(
        failure(&outcome)
            .message()
            .starts_with("refunds over 100 need a manager (reference ")
    );
    assert!(
        runtime
            .invoke("c2", "refund", REFUND, &alice())
            .await
            .is_ok()
    );
    assert_eq!(ran.count(), 1);
}

/// Grants per principal: the tools each may call, loaded while deciding.
#[derive(Default)]
struct GrantTable {
    grants: RwLock<HashMap<String, HashSet<String>>>,
    reads: AtomicUsize,
}

/// The table as a policy.
struct Grants(Arc<GrantTable>);

impl authz::Authorize for Grants {
    fn decide<'a>(&'a self, request: &'a Request<'a>) -> DecisionFuture<'a> {
        DecisionFuture::new(async move {
            // A real table is a database round trip; yield so the decision is truly pending.
            tokio::task::yield_now().await;
            self.0.reads.fetch_add(1, Ordering::SeqCst);
            let grants = self.0.grants.read().await;
            let principal = request.context().principal();
            let tool = request.tool().name();
            if grants
                .get(principal)
                .is_some_and(|tools| tools.contains(tool))
            {
                Decision::allow_by([format!("grant:{principal}:{tool}")])
            } else {
                Decision::deny(
                    Denied::new(format!("{principal} holds no grant for {tool}"))
                        .with_policy_ids(["grant-table"]),
                )
            }
        })
    }
}

#[tokio::test]
async fn an_async_policy_reads_a_grant_table_while_deciding() {
    let table = Arc::new(GrantTable::default());
    table
        .grants
        .write()
        .await
        .insert("alice".into(), HashSet::from(["refund".to_owned()]));
    let ran = Arc::new(Ran::default());
    let ledger = Arc::new(MemoryLedger::new());
    let runtime = Runtime::builder(registry(&ran, |def| def))
        .authorize(Grants(Arc::clone(&table)))
        .ledger(Arc::clone(&ledger))
        .build();
    let cx = |principal: &str| Context::builder(principal).scope("run").build();

    assert!(
        runtime
            .invoke("c1", "refund", REFUND, &cx("alice"))
            .await
            .is_ok()
    );
    let outcome = runtime
        .invoke("c2", "balance", r#"{"account":7}"#, &cx("alice"))
        .await;
    assert_eq!(failure(&outcome).code(), Code::Unauthorized);
    assert_eq!(
        failure(&outcome).detail(),
        Some("alice holds no grant for balance (policies: grant-table)")
    );
    // A grant added at run time applies to the next call: nothing was loaded beforehand.
    table
        .grants
        .write()
        .await
        .get_mut("alice")
        .unwrap()
        .insert("balance".into());
    assert!(
        runtime
            .invoke("c3", "balance", r#"{"account":7}"#, &cx("alice"))
            .await
            .is_ok()
    );
    assert_eq!(table.reads.load(Ordering::SeqCst), 3);
    assert_eq!(ran.count(), 2);

    // The audit trail names the deciding rules, never the arguments.
    let trail = ledger.trail("run").await.unwrap();
    let decisions: Vec<_> = trail
        .iter()
        .filter(|r| matches!(r.event.kind, AuditKind::Authorized | AuditKind::Denied))
        .map(|r| (&*r.event.call_id, r.event.kind, r.event.note.as_deref()))
        .collect();
    assert_eq!(
        decisions,
        [
            (
                "c1",
                AuditKind::Authorized,
                Some("policies: grant:alice:refund")
            ),
            ("c2", AuditKind::Denied, Some("policies: grant-table")),
            (
                "c3",
                AuditKind::Authorized,
                Some("policies: grant:alice:balance")
            ),
        ]
    );
    for record in &trail {
        let text = serde_json::to_string(&record.event).unwrap();
        assert!(!text.contains("acc_1"), "{text}");
    }
}

#[tokio::test]
async fn an_async_closure_is_a_policy_and_sees_the_owned_request() {
    let seen = Arc::new(Mutex::new(None::<OwnedRequest>));
    let seen_by = Arc::clone(&seen);
    let ran = Arc::new(Ran::default());
    let runtime = Runtime::builder(registry(&ran, |def| def))
        .authorize(authz::from_async(move |request: OwnedRequest| {
            let seen = Arc::clone(&seen_by);
            async move {
                tokio::task::yield_now().await;
                let big = request.arguments["amount"].as_u64().unwrap_or(0) > 100;
                *seen.lock().unwrap() = Some(request);
                if big {
                    Decision::deny(Denied::new("too big"))
                } else {
                    Decision::allow()
                }
            }
        }))
        .build();
    assert!(
        runtime
            .invoke("c1", "refund", REFUND, &alice())
            .await
            .is_ok()
    );
    let request = seen.lock().unwrap().take().unwrap();
    assert_eq!(&*request.tool, "refund");
    assert_eq!(request.effect, Effect::NonIdempotent);
    assert_eq!(request.context.principal(), "alice");
    assert_eq!(request.resource, Some(ResourceRef::new("Account", "acc_1")));
    let big = r#"{"account_id":"acc_1","amount":500}"#;
    let outcome = runtime.invoke("c2", "refund", big, &alice()).await;
    assert_eq!(failure(&outcome).code(), Code::Unauthorized);
    assert_eq!(ran.count(), 1);
}

/// A policy that never answers, and says when it was asked.
struct Stuck(Arc<Notify>);

impl authz::Authorize for Stuck {
    fn decide<'a>(&'a self, _: &'a Request<'a>) -> DecisionFuture<'a> {
        self.0.notify_one();
        DecisionFuture::new(std::future::pending())
    }
}

#[tokio::test(start_paused = true)]
async fn a_policy_that_outlives_the_deadline_ends_the_call_as_timeout() {
    let ran = Arc::new(Ran::default());
    let runtime = Runtime::builder(registry(&ran, |def| def))
        .authorize(Stuck(Arc::new(Notify::new())))
        .build();
    let cx = Context::builder("alice")
        .timeout(Duration::from_secs(5))
        .build();
    let outcome = runtime.invoke("c1", "refund", REFUND, &cx).await;
    let failure = failure(&outcome);
    assert_eq!(failure.code(), Code::Timeout);
    assert!(
        failure
            .message()
            .starts_with("the run's deadline passed while the call was being authorized"),
        "{failure:?}"
    );
    assert_eq!(ran.count(), 0);
}

#[tokio::test]
async fn a_run_cancelled_while_a_policy_decides_ends_as_cancelled() {
    let ran = Arc::new(Ran::default());
    let asked = Arc::new(Notify::new());
    let runtime = Runtime::builder(registry(&ran, |def| def))
        .authorize(Stuck(Arc::clone(&asked)))
        .build();
    let token = CancellationToken::new();
    let cx = Context::builder("alice")
        .cancellation(token.clone())
        .build();
    let canceller = tokio::spawn(async move {
        asked.notified().await;
        token.cancel();
    });
    let outcome = runtime.invoke("c1", "refund", REFUND, &cx).await;
    canceller.await.unwrap();
    assert_eq!(failure(&outcome).code(), Code::Cancelled);
    assert_eq!(ran.count(), 0);
}

#[tokio::test]
async fn a_panicking_async_policy_refuses_the_call() {
    struct Boom;
    impl authz::Authorize for Boom {
        fn decide<'a>(&'a self, _: &'a Request<'a>) -> DecisionFuture<'a> {
            DecisionFuture::new(async {
                tokio::task::yield_now().await;
                panic!("the policy service returned garbage")
            })
        }
    }
    let ran = Arc::new(Ran::default());
    let runtime = Runtime::builder(registry(&ran, |def| def))
        .authorize(Boom)
        .build();
    let outcome = runtime.invoke("c1", "refund", REFUND, &alice()).await;
    let failure = failure(&outcome);
    assert_eq!(failure.code(), Code::Unauthorized);
    assert!(
        failure.detail().unwrap().contains("panicked"),
        "{failure:?}"
    );
    assert!(!failure.message().contains("garbage"));
    assert_eq!(ran.count(), 0);
}

fn allow(id: &'static str) -> Box<dyn authz::Authorize> {
    authz::boxed(authz::named(id, |_: &ToolInfo, _: &Context| Ok(())))
}

fn deny(id: &'static str) -> Box<dyn authz::Authorize> {
    authz::boxed(authz::named(id, move |_: &ToolInfo, _: &Context| {
        Err(Denied::new(format!("{id} says no")).with_message(format!("refused by {id}")))
    }))
}

async fn decide(policy: impl authz::Authorize) -> Decision {
    let registry = registry(&Arc::new(Ran::default()), |def| def);
    let info = registry.get("refund").unwrap();
    let cx = alice();
    let request = Request::new(info, &cx, REFUND.into(), None);
    policy.decide(&request).await
}

#[tokio::test]
async fn all_needs_every_policy_and_any_needs_one() {
    assert_eq!(
        decide(authz::all([allow("a"), allow("b")])).await,
        Decision::allow_by(["a", "b"])
    );
    let Decision::Deny(denied) = decide(authz::all([allow("a"), deny("b"), deny("c")])).await
    else {
        panic!("all with a refusal allowed")
    };
    assert_eq!(denied.detail(), "b says no");
    assert_eq!(denied.policy_ids(), ["b"]);
    assert_eq!(
        decide(authz::all(Vec::<Box<dyn authz::Authorize>>::new())).await,
        Decision::allow()
    );

    assert_eq!(
        decide(authz::any([deny("a"), allow("b"), allow("c")])).await,
        Decision::allow_by(["b"])
    );
    let Decision::Deny(denied) = decide(authz::any([deny("a"), deny("b")])).await else {
        panic!("any without an allow allowed")
    };
    assert_eq!(denied.detail(), "a says no; b says no");
    assert_eq!(denied.policy_ids(), ["a", "b"]);
    assert_eq!(denied.message(), Some("refused by a"));
    assert!(
        !decide(authz::any(Vec::<Box<dyn authz::Authorize>>::new()))
            .await
            .is_allowed()
    );

    // Nested, and with a policy that waits.
    let table = Arc::new(GrantTable::default());
    let nested = authz::any([
        authz::boxed(authz::all([deny("x"), allow("y")])),
        authz::boxed(Grants(Arc::clone(&table))),
        allow("z"),
    ]);
    assert_eq!(decide(nested).await, Decision::allow_by(["z"]));
    assert_eq!(table.reads.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn policies_after_one_that_waits_are_still_asked_in_order() {
    let table = Arc::new(GrantTable::default());
    table
        .grants
        .write()
        .await
        .insert("alice".into(), HashSet::from(["refund".to_owned()]));
    let ran = Arc::new(Ran::default());
    let ledger = Arc::new(MemoryLedger::new());
    // At once, then a wait, then at once again: the last one refuses `balance` only.
    let runtime = Runtime::builder(registry(&ran, |def| def))
        .authorize(allow("first"))
        .authorize(Grants(Arc::clone(&table)))
        .authorize(authz::named(
            "no-balance",
            |info: &ToolInfo, _: &Context| {
                if info.name() == "balance" {
                    Err(Denied::new("balance is closed"))
                } else {
                    Ok(())
                }
            },
        ))
        .ledger(Arc::clone(&ledger))
        .build();
    let cx = Context::builder("alice").scope("run").build();
    assert!(runtime.invoke("c1", "refund", REFUND, &cx).await.is_ok());
    table
        .grants
        .write()
        .await
        .get_mut("alice")
        .unwrap()
        .insert("balance".into());
    let outcome = runtime
        .invoke("c2", "balance", r#"{"account":7}"#, &cx)
        .await;
    assert_eq!(
        failure(&outcome).detail(),
        Some("balance is closed (policies: no-balance)")
    );
    assert_eq!(table.reads.load(Ordering::SeqCst), 2);
    assert_eq!(ran.count(), 1);
    let notes: Vec<_> = ledger
        .trail("run")
        .await
        .unwrap()
        .into_iter()
        .filter(|r| matches!(r.event.kind, AuditKind::Authorized | AuditKind::Denied))
        .map(|r| r.event.note)
        .collect();
    assert_eq!(
        notes,
        [
            Some("policies: first, grant:alice:refund, no-balance".to_owned()),
            Some("policies: no-balance".to_owned()),
        ]
    );

    // The same order inside `all` and `any`, the wait in the middle.
    let waits = || authz::boxed(Grants(Arc::clone(&table)));
    assert_eq!(
        decide(authz::all([allow("a"), waits(), allow("b")])).await,
        Decision::allow_by(["a", "grant:alice:refund", "b"])
    );
    let Decision::Deny(denied) = decide(authz::all([allow("a"), waits(), deny("b")])).await else {
        panic!("all with a refusal after a wait allowed")
    };
    assert_eq!(denied.policy_ids(), ["b"]);
    assert_eq!(
        decide(authz::any([deny("a"), waits(), allow("b")])).await,
        Decision::allow_by(["grant:alice:refund"])
    );
    table.grants.write().await.clear();
    let Decision::Deny(denied) = decide(authz::any([deny("a"), waits(), deny("b")])).await else {
        panic!("any without an allow allowed")
    };
    assert_eq!(denied.policy_ids(), ["a", "grant-table", "b"]);
    assert_eq!(table.reads.load(Ordering::SeqCst), 6);
}

#[tokio::test]
async fn a_combined_policy_on_the_runtime_names_its_rules_in_the_failure() {
    let ran = Arc::new(Ran::default());
    let runtime = Runtime::builder(registry(&ran, |def| def))
        .authorize(authz::any([deny("owners-only"), deny("support-role")]))
        .build();
    let outcome = runtime.invoke("c1", "refund", REFUND, &alice()).await;
    let failure = failure(&outcome);
    assert!(
        failure
            .message()
            .starts_with("refused by owners-only (reference ")
    );
    assert_eq!(
        failure.detail(),
        Some("owners-only says no; support-role says no (policies: owners-only, support-role)")
    );
    assert_eq!(ran.count(), 0);
}

#[tokio::test]
async fn the_resource_of_a_call_comes_from_its_marked_field() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen_by = Arc::clone(&seen);
    struct Resources(Arc<Mutex<Vec<Option<ResourceRef>>>>);
    impl authz::Authorize for Resources {
        fn decide<'a>(&'a self, request: &'a Request<'a>) -> DecisionFuture<'a> {
            self.0.lock().unwrap().push(request.resource().cloned());
            // Only the principal's own account.
            let own = request
                .resource()
                .is_none_or(|r| r.kind() != "Account" || r.id() == "acc_1" || r.id() == "1");
            DecisionFuture::ready(if own {
                Decision::allow()
            } else {
                Decision::deny(Denied::new("not the principal's account"))
            })
        }
    }
    let ran = Arc::new(Ran::default());
    let runtime = Runtime::builder(registry(&ran, |def| def))
        .authorize(Resources(seen_by))
        .build();
    let cx = alice();
    assert!(runtime.invoke("c1", "refund", REFUND, &cx).await.is_ok());
    let other = r#"{"account_id":"acc_2","amount":5}"#;
    let outcome = runtime.invoke("c2", "refund", other, &cx).await;
    assert_eq!(failure(&outcome).code(), Code::Unauthorized);
    assert!(
        runtime
            .invoke("c3", "balance", r#"{"account":1}"#, &cx)
            .await
            .is_ok()
    );
    assert!(
        runtime
            .invoke("c4", "list_accounts", "{}", &cx)
            .await
            .is_ok()
    );
    let branch = r#"{"branch":"north"}"#;
    assert!(
        runtime
            .invoke("c5", "list_accounts", branch, &cx)
            .await
            .is_ok()
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [
            Some(ResourceRef::new("Account", "acc_1")),
            Some(ResourceRef::new("Account", "acc_2")),
            Some(ResourceRef::new("Account", "1")),
            None,
            Some(ResourceRef::new("Branch", "north")),
        ]
    );
    assert_eq!(ran.count(), 2);

    // The typed value says the same.
    let args = Refund::parse_arguments(REFUND).unwrap();
    assert_eq!(args.resource().unwrap().to_string(), r#"Account::"acc_1""#);
}

fn names(runtime: &Runtime, cx: &Context) -> Vec<String> {
    runtime
        .visible_tools(cx)
        .into_iter()
        .map(|info| info.name().to_owned())
        .collect()
}

#[tokio::test]
async fn a_closure_policy_hides_the_tools_it_refuses_from_that_principal_only() {
    let ran = Arc::new(Ran::default());
    let runtime = Runtime::builder(registry(&ran, |def| def))
        .authorize(|tool: &ToolInfo, cx: &Context| {
            if tool.name() == "refund" && cx.principal() != "alice" {
                Err(Denied::new("only alice refunds"))
            } else {
                Ok(())
            }
        })
        .build();
    let bob = Context::builder("bob").tenant("acme").build();
    assert_eq!(
        names(&runtime, &alice()),
        ["refund", "balance", "list_accounts"]
    );
    assert_eq!(names(&runtime, &bob), ["balance", "list_accounts"]);
    // Hidden from the listing, and still refused when called anyway.
    let outcome = runtime.invoke("c1", "refund", REFUND, &bob).await;
    assert_eq!(outcome.code(), Some(Code::Unauthorized));
    assert_eq!(ran.count(), 0);
}

#[tokio::test]
async fn tenant_policies_hide_too_and_a_panicking_one_hides() {
    let runtime = Runtime::builder(registry(&Arc::new(Ran::default()), |def| def))
        .authorize_tenant("acme", |tool: &ToolInfo, _: &Context| {
            if tool.effect() == Effect::ReadOnly {
                Ok(())
            } else {
                Err(Denied::new("acme only reads"))
            }
        })
        .authorize_tenant("globex", |tool: &ToolInfo, _: &Context| {
            if tool.name() == "balance" {
                panic!("broken policy");
            }
            Ok(())
        })
        .build();
    assert_eq!(names(&runtime, &alice()), ["balance", "list_accounts"]);
    let globex = Context::builder("carol").tenant("globex").build();
    assert_eq!(names(&runtime, &globex), ["refund", "list_accounts"]);
    let no_tenant = Context::builder("dave").build();
    assert_eq!(
        names(&runtime, &no_tenant),
        ["refund", "balance", "list_accounts"]
    );
}

#[tokio::test]
async fn all_hides_when_one_hides_and_any_only_when_all_hide() {
    use authz::Authorize as _;
    use authz::Visibility::{Hidden, Shown};
    let registry = registry(&Arc::new(Ran::default()), |def| def);
    let info = registry.get("refund").unwrap();
    let cx = alice();
    assert_eq!(
        authz::all([allow("a"), allow("b")]).visible(info, &cx),
        Shown
    );
    assert_eq!(
        authz::all([allow("a"), deny("b")]).visible(info, &cx),
        Hidden
    );
    assert_eq!(
        authz::any([deny("a"), allow("b")]).visible(info, &cx),
        Shown
    );
    assert_eq!(
        authz::any([deny("a"), deny("b")]).visible(info, &cx),
        Hidden
    );
    assert_eq!(authz::named("n", deny("a")).visible(info, &cx), Hidden);
    assert_eq!(authz::named("n", allow("a")).visible(info, &cx), Shown);
    // A policy that needs the arguments to decide never hides, even if it refuses the call.
    let refuses =
        authz::from_async(|_: OwnedRequest| async { Decision::deny(Denied::new("never")) });
    assert_eq!(refuses.visible(info, &cx), Shown);
    assert!(!decide(refuses).await.is_allowed());
}
