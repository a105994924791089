//! What a newcomer runs first: `cargo run --example quickstart`, `cargo run --example agent` and
//! `cargo run --example text_model`.
//! Each builds with only the features it uses, as cargo builds it for them (not with the features
//! this test package unifies), and what it prints can be read.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

/// An example as `cargo build --example <name>` builds it from the repository root.
#[derive(Debug)]
struct Built {
    executable: PathBuf,
    /// The name of every crate compiled into it, build scripts aside.
    crates: BTreeSet<String>,
}

fn build(example: &str) -> Built {
    build_with(example, &[])
}

/// `cargo build --example <name> --features <features>`.
fn build_with(example: &str, features: &[&str]) -> Built {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let output = Command::new(cargo)
        .args(["build", "--quiet", "--example", example])
        .args(features.iter().flat_map(|feature| ["--features", feature]))
        .arg("--message-format=json")
        .arg("--manifest-path")
        .arg(&manifest)
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "building the {example} example failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut crates = BTreeSet::new();
    let mut executable = None;
    for message in String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-artifact")
    {
        let target = &message["target"];
        if target["kind"] == serde_json::json!(["custom-build"]) {
            continue;
        }
        if let Some(name) = target["name"].as_str() {
            crates.insert(name.to_owned());
        }
        if target["name"] == example
            && let Some(path) = message["executable"].as_str()
        {
            executable = Some(PathBuf::from(path));
        }
    }
    let executable = executable.unwrap_or_else(|| panic!("cargo built no {example} executable"));
    Built { executable, crates }
}

fn quickstart() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| build("quickstart"))
}

fn agent() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| build("agent"))
}

fn text_model() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| build("text_model"))
}

fn run(built: &Built) -> String {
    let output = Command::new(&built.executable).output().unwrap();
    assert!(
        output.status.success(),
        "{} failed:\n{}",
        built.executable.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn quickstart_builds_without_the_mcp_stack() {
    let crates = &quickstart().crates;
    assert!(
        crates.contains("tool_core"),
        "the build lists no tool_core: {crates:?}"
    );
    let unused: Vec<&str> = [
        "rmcp",
        "schemars",
        "chrono",
        "uuid",
        "tracing_subscriber",
        "opentelemetry",
    ]
    .into_iter()
    .filter(|name| crates.contains(*name))
    .collect();
    assert_eq!(unused, Vec::<&str>::new(), "{} crates built", crates.len());
}

#[test]
fn quickstart_names_the_call_of_each_repair_request() {
    let stdout = run(quickstart());
    let headings: Vec<&str> = stdout
        .lines()
        .filter(|line| line.contains("asking for attempt"))
        .collect();
    // r2 is repaired on its second attempt; r3 asks for a second and a third.
    assert_eq!(headings.len(), 3, "{stdout}");
    let distinct: BTreeSet<&str> = headings.iter().copied().collect();
    assert_eq!(distinct.len(), headings.len(), "{headings:#?}");
    for (heading, call) in headings.iter().zip(["r2", "r3", "r3"]) {
        assert!(heading.contains(&format!(" {call} ")), "{heading}");
    }
}

#[test]
fn agent_prints_the_receipt_expiry_as_a_utc_date() {
    let stdout = run(agent());
    let receipt = stdout
        .lines()
        .find(|line| line.starts_with("receipt:"))
        .unwrap_or_else(|| panic!("no receipt printed:\n{stdout}"));
    let expiry = receipt
        .split_once("expires at ")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("no expiry: {receipt}"));
    // RFC 3339 in UTC: 2025-01-31T09:30:00Z.
    let date: Vec<char> = expiry.chars().take(20).collect();
    let shape: String = date
        .iter()
        .map(|c| if c.is_ascii_digit() { '9' } else { *c })
        .collect();
    assert_eq!(shape, "9999-99-99T99:99:99Z", "{receipt}");
}

#[test]
fn the_examples_with_a_scripted_model_say_so_first() {
    for (built, file) in [
        (agent(), "examples/agent.rs"),
        (text_model(), "examples/text_model.rs"),
    ] {
        let stdout = run(built);
        let first = stdout.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("The model here is scripted: ") && first.contains(file),
            "{stdout}"
        );
    }
}

/// Run by an MCP client, whose pipe is its stdin, the stdio server writes nothing but the
/// protocol: the greeting is for a terminal only. (A client that closes at once gets no
/// answer, and the server says on stderr why it stopped.)
#[test]
fn the_stdio_mcp_server_greets_no_client() {
    let built = build_with("mcp_server", &["examples/mcp"]);
    let output = Command::new(&built.executable)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("initialize"), "{stderr}");
    assert!(!stderr.contains("an MCP server on stdio"), "{stderr}");
}

/// The README is also the crate's documentation, read on docs.rs where none of the
/// repository's other files are: every link it has goes to a web address, a heading of its own
/// or an item of the crate.
#[test]
fn the_readme_links_to_no_file_the_crate_docs_lack() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .unwrap();
    let mut in_code = false;
    let mut targets = Vec::new();
    for line in readme.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        // Inline links, `[text](target)`.
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let tail = &rest[at + 2..];
            let end = tail.find(')').unwrap_or(tail.len());
            targets.push(tail[..end].to_owned());
            rest = &tail[end..];
        }
        // Reference definitions, `[text]: target`.
        if line.starts_with('[')
            && let Some((_, target)) = line.split_once("]: ")
        {
            targets.push(target.trim().to_owned());
        }
    }
    let local: Vec<&String> = targets
        .iter()
        .filter(|target| {
            !(target.starts_with("https://")
                || target.starts_with('#')
                || target.starts_with("crate::")
                || target.contains("@crate::"))
        })
        .collect();
    assert_eq!(local, Vec::<&String>::new());
    // The scan found the links.
    assert!(targets.len() > 3, "{targets:?}");
}
