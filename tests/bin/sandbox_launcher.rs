//! The sandbox's launcher for the escape suite (`tests/sandbox_escape.rs`), whose test harness
//! owns its `main`: started by the runtime, it confines itself and runs the program.

fn main() {
    tool_core::sandbox::enter_if_launched();
    eprintln!("sandbox_launcher: started by tool-core's runtime to run a sandboxed program");
    std::process::exit(2);
}
