//! `tool-derive` carries its own copy of the runtime's pattern engine module, since a published
//! crate may read no file outside itself. The derive accepts a pattern only if that module
//! builds it, so the copy must stay byte for byte the runtime's.

use std::path::Path;

const RUNTIME_COPY: &str = "tool-core/src/contract/constraints/engine.rs";
const DERIVE_COPY: &str = "tool-derive/src/engine.rs";

fn read(path: &str) -> String {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace");
    std::fs::read_to_string(workspace.join(path)).unwrap_or_else(|error| panic!("{path}: {error}"))
}

#[test]
fn derive_engine_is_a_byte_identical_copy_of_the_runtime_engine() {
    let (runtime, derive) = (read(RUNTIME_COPY), read(DERIVE_COPY));
    if runtime != derive {
        let line = runtime
            .lines()
            .zip(derive.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| runtime.lines().count().min(derive.lines().count()));
        panic!(
            "{DERIVE_COPY} differs from {RUNTIME_COPY} from line {}: make the same change in both",
            line + 1
        );
    }
}
