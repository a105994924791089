//! The replay server as a program, for runs of the agent example against it (`.ci/run`):
//! plays `tests::replay::agent_example_script` on a loopback port and exits when the script
//! is played out, with status 0 when every request was as expected and 1 otherwise (the
//! problems on standard error). It gives up after `--idle-seconds` (default 120) without a
//! request.
//!
//! ```sh
//! OPENAI_API_KEY=sk-replay cargo run -p tests --bin replay_server -- --port 0
//! ```
//!
//! Prints `listening on http://127.0.0.1:<port>` once it accepts connections. The key the
//! requests must carry is `OPENAI_API_KEY`.

use std::time::{Duration, Instant};

use tests::replay::{ReplayServer, agent_example_script};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut port = 0u16;
    let mut idle = 120u64;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next();
        let parsed = match (arg.as_str(), value.as_deref()) {
            ("--port", Some(v)) => v.parse().map(|v| port = v).is_ok(),
            ("--idle-seconds", Some(v)) => v.parse().map(|v| idle = v).is_ok(),
            _ => false,
        };
        if !parsed {
            eprintln!("usage: replay_server [--port N] [--idle-seconds N]");
            std::process::exit(2);
        }
    }
    let Ok(key) = std::env::var("OPENAI_API_KEY") else {
        eprintln!("replay_server: set OPENAI_API_KEY to the key the requests must carry");
        std::process::exit(2);
    };
    let server = match ReplayServer::start_on(port, agent_example_script(&key)).await {
        Ok(server) => server,
        Err(error) => {
            eprintln!("replay_server: cannot listen on 127.0.0.1:{port}: {error}");
            std::process::exit(2);
        }
    };
    println!("listening on {}", server.url(""));
    let mut heard = (0, Instant::now());
    while server.remaining() > 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let count = server.received().len();
        if count != heard.0 {
            heard = (count, Instant::now());
        } else if heard.1.elapsed() > Duration::from_secs(idle) {
            eprintln!("replay_server: no request for {idle} s; giving up");
            std::process::exit(1);
        }
    }
    // Let the last response finish streaming before the server stops.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let problems = server.problems();
    for problem in &problems {
        eprintln!("replay_server: {problem}");
    }
    println!("served {} requests", server.received().len());
    std::process::exit(i32::from(!problems.is_empty()));
}
