//! Authorization's cost per call: a closure policy against Cedar policy sets of 10, 100 and
//! 1,000 policies on the same tool (the request built from the validated arguments included),
//! and the cost of generating the Cedar schema for 100 tools and validating 100 policies
//! against it when the runtime is built.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use futures_util::FutureExt as _;
use serde_json::{Value, json};
use tool_core::authz::cedar::CedarPolicies;
use tool_core::authz::{Authorize, Request};
use tool_core::registry::{DynamicTool, ToolError, ToolInfo};
use tool_core::{Argument, Context, Denied, Registry, Tool, ToolDef};

/// Refunds a payment of an account.
#[derive(Tool, Debug)]
struct Refund {
    #[tool(resource = "Account")]
    account: String,
    amount: f64,
    note: Option<String>,
}

#[derive(Argument, serde::Serialize)]
struct Done {
    ok: bool,
}

const ARGUMENTS: &str = r#"{"account":"acc_7","amount":120.5,"note":"late delivery"}"#;

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(|_: Refund, _: &Context| async {
            Ok::<_, ToolError>(Done { ok: true })
        }))
        .expect("refund registers");
    registry
}

/// `n` policies on `refund`, one per principal; the caller is the last principal, so every
/// policy is evaluated and one matches.
fn policies(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "@id(\"p{i}\")\npermit(principal == User::\"u{i}\", action == Action::\"refund\", resource is Account)\nwhen {{ context has amount && context.amount.lessThan(decimal(\"{i}000.0\")) }};\n"
            )
        })
        .collect()
}

/// `n` policies on `refund` that all apply to every call (the principal is tested in the
/// condition, not the scope), so every one is evaluated; the last one matches.
fn unscoped(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "@id(\"p{i}\")\npermit(principal, action == Action::\"refund\", resource is Account)\nwhen {{ principal == User::\"u{i}\" && context has amount && context.amount.lessThan(decimal(\"{i}000.0\")) }};\n"
            )
        })
        .collect()
}

/// `n` policies, one per principal, each on one of 100 other tools; none applies to `refund`
/// but the one permit naming it.
fn elsewhere(n: usize) -> String {
    let mut text: String = (0..n)
        .map(|i| {
            format!(
                "@id(\"p{i}\")\npermit(principal == User::\"u{i}\", action == Action::\"other_{}\", resource);\n",
                i % 100
            )
        })
        .collect();
    text.push_str(
        "@id(\"refund\")\npermit(principal, action == Action::\"refund\", resource is Account);\n",
    );
    text
}

fn decide(policy: &dyn Authorize, info: &ToolInfo, principal: &str, arguments: &str) -> bool {
    let cx = Context::builder(principal).build();
    let args = Refund::parse_arguments(arguments).expect("valid arguments");
    let resource = args.resource();
    let request = Request::new(info, &cx, arguments.into(), resource.as_ref());
    policy
        .decide(&request)
        .now_or_never()
        .is_some_and(|decision| decision.is_allowed())
}

/// `refund` and 100 other tools.
fn registry_with_others() -> Registry {
    let mut registry = registry();
    for i in 0..100 {
        registry
            .register(ToolDef::dynamic(
                DynamicTool::new(
                    format!("other_{i}"),
                    "another tool",
                    json!({"type": "object"}),
                ),
                |_: Value, _: &Context| async { Ok::<_, ToolError>(json!({})) },
            ))
            .expect("tool registers");
    }
    registry
}

fn bench(c: &mut Criterion) {
    let registry = registry();
    let info = registry.get("refund").expect("refund");
    let mut group = c.benchmark_group("authz/decide");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));

    let closure = |_: &ToolInfo, cx: &Context| {
        if cx.principal().starts_with('u') {
            Ok(())
        } else {
            Err(Denied::new("unknown principal"))
        }
    };
    assert!(decide(&closure, info, "u1", ARGUMENTS));
    group.bench_function("closure", |b| {
        b.iter(|| decide(&closure, info, black_box("u1"), black_box(ARGUMENTS)))
    });
    for n in [10, 100, 1000] {
        let cedar = CedarPolicies::builder(&registry)
            .policies(policies(n))
            .build()
            .expect("the generated policies validate");
        let principal = format!("u{}", n - 1);
        assert!(decide(&cedar, info, &principal, ARGUMENTS));
        group.bench_with_input(BenchmarkId::new("cedar", n), &n, |b, _| {
            b.iter(|| decide(&cedar, info, black_box(&principal), black_box(ARGUMENTS)))
        });
    }
    for n in [10, 100, 1000] {
        let cedar = CedarPolicies::builder(&registry)
            .policies(unscoped(n))
            .build()
            .expect("the generated policies validate");
        let principal = format!("u{}", n - 1);
        assert!(decide(&cedar, info, &principal, ARGUMENTS));
        group.bench_with_input(BenchmarkId::new("cedar_all_apply", n), &n, |b, _| {
            b.iter(|| decide(&cedar, info, black_box(&principal), black_box(ARGUMENTS)))
        });
    }
    let others = registry_with_others();
    let others_info = others.get("refund").expect("refund");
    for n in [10, 100, 1000] {
        let cedar = CedarPolicies::builder(&others)
            .policies(elsewhere(n))
            .build()
            .expect("the generated policies validate");
        assert!(decide(&cedar, others_info, "u0", ARGUMENTS));
        group.bench_with_input(BenchmarkId::new("cedar_other_tools", n), &n, |b, _| {
            b.iter(|| decide(&cedar, others_info, black_box("u0"), black_box(ARGUMENTS)))
        });
    }
    group.finish();

    // 100 tools of 6 arguments each, and one policy per tool reading two of them.
    let mut many = Registry::new();
    for i in 0..100 {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": { "type": "string" },
                "count": { "type": "integer", "minimum": 0, "maximum": 1000 },
                "price": { "type": "number" },
                "urgent": { "type": "boolean" },
                "tags": { "type": "array", "items": { "type": "string" } },
                "address": { "type": "object", "properties": { "city": { "type": "string" } },
                             "required": ["city"], "additionalProperties": false },
            },
            "required": ["id", "count", "urgent", "tags", "address"],
            "additionalProperties": false,
        });
        many.register(ToolDef::dynamic(
            DynamicTool::new(format!("tool_{i}"), "a tool", schema),
            |_: Value, _: &Context| async { Ok::<_, ToolError>(json!({})) },
        ))
        .expect("tool registers");
    }
    let text: String = (0..100)
        .map(|i| format!("permit(principal, action == Action::\"tool_{i}\", resource) when {{ context.count < {i} && context.address.city == \"Paris\" }};\n"))
        .collect();
    let mut group = c.benchmark_group("authz/build");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("cedar_100_tools_100_policies", |b| {
        b.iter(|| {
            CedarPolicies::builder(black_box(&many))
                .policies(text.as_str())
                .build()
                .expect("valid")
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
