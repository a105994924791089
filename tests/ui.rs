//! Compile-time diagnostics of the derives: each `ui/*.rs` must fail to build with exactly the
//! errors in its `.stderr`, and each `ui/pass/*.rs` must build.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
    t.pass("ui/pass/*.rs");
}
