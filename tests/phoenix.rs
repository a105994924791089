//! The spans of an agent run (a repair, a refusal, an approval and a replay) exported over
//! OTLP to a real backend, Arize Phoenix, and read back through its REST API: the tree
//! (`invoke_agent` > `chat`, `execute_tool`), the GenAI attributes, the stage events, and no
//! argument value anywhere.
//!
//! Needs Phoenix (`python3 -m pip install arize-phoenix`); the test starts it on free loopback
//! ports with a temporary working directory and stops it at the end. Without it the test
//! says it was skipped, unless `REQUIRE_PHOENIX=1` or `CI=true` makes that a failure. In a
//! binary of its own: it installs a `tracing` subscriber.

#[path = "observed/scenario.rs"]
mod scenario;

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use tracing_subscriber::layer::SubscriberExt as _;

const PROJECT: &str = "default";

fn python() -> String {
    std::env::var("PHOENIX_PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

/// Whether Phoenix is installed; if not, fails when it is required and otherwise says why the
/// test is skipped and how to run it.
fn phoenix_installed() -> bool {
    let found = Command::new(python())
        .args(["-c", "import phoenix.server.main"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if found {
        return true;
    }
    let required = std::env::var_os("REQUIRE_PHOENIX").is_some_and(|v| v == "1")
        || std::env::var_os("CI").is_some_and(|v| v == "true");
    assert!(
        !required,
        "Arize Phoenix is not installed for {} (REQUIRE_PHOENIX=1 or CI=true): \
         python3 -m pip install arize-phoenix",
        python()
    );
    eprintln!(
        "skipped: the spans exported to Arize Phoenix were not checked, because Phoenix is not \
         installed for {}. To run this test: python3 -m pip install arize-phoenix, then \
         cargo test -p tests --test phoenix (REQUIRE_PHOENIX=1 makes a missing Phoenix a failure)",
        python()
    );
    false
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A Phoenix server on loopback, stopped and its directory removed on drop.
struct Phoenix {
    child: Child,
    dir: PathBuf,
    url: String,
    log: PathBuf,
}

impl Phoenix {
    fn start() -> Phoenix {
        let dir = std::env::temp_dir().join(format!(
            "tool-core-phoenix-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let (port, grpc) = (free_port(), free_port());
        let log = dir.join("server.log");
        let child = Command::new(python())
            .args(["-m", "phoenix.server.main", "serve"])
            .env("PHOENIX_WORKING_DIR", &dir)
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", grpc.to_string())
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(Stdio::from(
                std::fs::File::create(dir.join("server.err")).unwrap(),
            ))
            .spawn()
            .unwrap();
        Phoenix {
            child,
            dir,
            url: format!("http://127.0.0.1:{port}"),
            log,
        }
    }

    fn logs(&self) -> String {
        let out = std::fs::read_to_string(&self.log).unwrap_or_default();
        let err = std::fs::read_to_string(self.dir.join("server.err")).unwrap_or_default();
        format!("{out}\n{err}")
    }

    async fn get(&self, client: &reqwest::Client, path: &str) -> Option<(u16, String)> {
        let response = client
            .get(format!("{}{path}", self.url))
            .send()
            .await
            .ok()?;
        let status = response.status().as_u16();
        Some((status, response.text().await.ok()?))
    }

    /// Waits until the server answers its health check.
    async fn ready(&mut self, client: &reqwest::Client) {
        let deadline = Instant::now() + Duration::from_secs(180);
        while Instant::now() < deadline {
            if let Some((200, _)) = self.get(client, "/healthz").await {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("Phoenix exited with {status}:\n{}", self.logs());
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        panic!("Phoenix did not start within 180 s:\n{}", self.logs());
    }

    /// The project's spans, once `expected` of them arrived (ingestion is asynchronous).
    async fn spans(&self, client: &reqwest::Client, expected: usize) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut last = Vec::new();
        while Instant::now() < deadline {
            let path = format!("/v1/projects/{PROJECT}/spans?limit=1000");
            if let Some((200, body)) = self.get(client, &path).await {
                let page: Value = serde_json::from_str(&body).unwrap();
                last = page["data"].as_array().cloned().unwrap_or_default();
                if last.len() >= expected {
                    return last;
                }
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        panic!(
            "Phoenix holds {} spans, expected {expected}: {last:#?}",
            last.len()
        );
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn attr<'a>(span: &'a Value, name: &str) -> Option<&'a Value> {
    span["attributes"].get(name)
}

fn attr_str<'a>(span: &'a Value, name: &str) -> Option<&'a str> {
    attr(span, name).and_then(Value::as_str)
}

fn events(span: &Value) -> Vec<&str> {
    span["events"]
        .as_array()
        .map(|events| events.iter().filter_map(|e| e["name"].as_str()).collect())
        .unwrap_or_default()
}

#[test]
fn an_agent_run_reaches_phoenix_as_gen_ai_spans_without_argument_values() {
    if !phoenix_installed() {
        return;
    }
    tool_core::observe::set_capture_content(false);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let mut phoenix = Phoenix::start();
    rt.block_on(phoenix.ready(&client));

    let otel = examples::otel::Otel::to_endpoint(
        &format!("{}/v1/traces", phoenix.url),
        "tool-core-phoenix-check",
    )
    .unwrap();
    let subscriber = tracing_subscriber::registry().with(otel.layer());
    tracing::subscriber::with_default(subscriber, || rt.block_on(scenario::run()));
    otel.flush().unwrap();

    // 2 runs, 4 model steps, 3 calls in the first run and 1 in the second.
    let spans = rt.block_on(phoenix.spans(&client, 10));
    let everything = serde_json::to_string(&spans).unwrap();
    let id = |span: &Value| span["context"]["span_id"].as_str().unwrap().to_owned();
    let parent = |span: &Value| span["parent_id"].as_str().map(str::to_owned);
    let named =
        |name: &str| -> Vec<&Value> { spans.iter().filter(|span| span["name"] == name).collect() };

    let runs = named("invoke_agent");
    assert_eq!(runs.len(), 2, "{everything}");
    for run in &runs {
        assert_eq!(parent(run), None, "{run:#}");
        assert_eq!(attr_str(run, "gen_ai.operation.name"), Some("invoke_agent"));
        assert_eq!(attr_str(run, "tool_core.agent.end"), Some("answered"));
    }
    let run_ids: Vec<String> = runs.iter().map(|run| id(run)).collect();

    let chats = named("chat");
    assert_eq!(chats.len(), 4, "{everything}");
    for chat in &chats {
        assert!(run_ids.contains(&parent(chat).unwrap()), "{chat:#}");
        assert_eq!(attr_str(chat, "gen_ai.operation.name"), Some("chat"));
        assert!(
            attr(chat, "gen_ai.usage.input_tokens").is_some(),
            "{chat:#}"
        );
        assert!(
            attr(chat, "gen_ai.response.finish_reasons").is_some(),
            "{chat:#}"
        );
    }

    let weather = named("execute_tool get_weather");
    assert_eq!(weather.len(), 2, "repaired, then replayed: {everything}");
    for call in &weather {
        assert!(run_ids.contains(&parent(call).unwrap()), "{call:#}");
        assert_eq!(attr_str(call, "gen_ai.tool.name"), Some("get_weather"));
        assert_eq!(attr_str(call, "gen_ai.tool.call.id"), Some("w1"));
        assert_eq!(attr_str(call, "gen_ai.tool.type"), Some("function"));
        assert_eq!(
            attr_str(call, "gen_ai.operation.name"),
            Some("execute_tool")
        );
    }
    let stages: Vec<Vec<&str>> = weather.iter().map(|call| events(call)).collect();
    assert!(
        stages.iter().any(|s| s.contains(&"claimed"))
            && stages.iter().any(|s| s.contains(&"replayed")),
        "{stages:?}"
    );

    let invoice = named("execute_tool create_invoice");
    assert_eq!(invoice.len(), 1, "{everything}");
    assert!(events(invoice[0]).contains(&"approved"), "{:#}", invoice[0]);

    let refused = named("execute_tool");
    assert_eq!(refused.len(), 1, "{everything}");
    assert_eq!(attr_str(refused[0], "error.type"), Some("unknown_tool"));
    assert_eq!(refused[0]["status_code"], "ERROR", "{:#}", refused[0]);
    assert!(
        attr(refused[0], "gen_ai.tool.name").is_none(),
        "{:#}",
        refused[0]
    );

    // The repair, told in the first run.
    assert!(
        runs.iter()
            .any(|run| events(run).contains(&"repaired on attempt 2")),
        "{runs:#?}"
    );

    // No argument value, invented name or message reached the backend.
    for secret in [scenario::SECRET, scenario::INVENTED, "kelvin", "cus_42"] {
        assert!(!everything.contains(secret), "{secret} in {everything}");
    }
    otel.shutdown().unwrap();
}
