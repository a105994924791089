//! tool-core's modules are layered as `lib.rs` declares them: in groups separated by blank
//! lines, from the bottom up. A module uses only modules of its own group or of a group before
//! it, and no two modules use each other. This test reads the sources and holds the crate to
//! that, so a new import that climbs a layer or closes a cycle fails here, naming the files.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tool-core/src")
}

/// The groups of top-level modules, in the order `lib.rs` declares them.
fn groups(lib: &str) -> Vec<Vec<String>> {
    let mut groups: Vec<Vec<String>> = vec![Vec::new()];
    for line in lib.lines() {
        let line = line.trim();
        if line.is_empty() {
            if !groups.last().is_some_and(Vec::is_empty) {
                groups.push(Vec::new());
            }
            continue;
        }
        let declared = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("mod "))
            .and_then(|rest| rest.strip_suffix(';'));
        if let Some(name) = declared {
            groups.last_mut().unwrap().push(name.to_owned());
        }
    }
    groups.retain(|group| !group.is_empty());
    groups
}

/// The top-level module each name re-exported at the crate root comes from
/// (`pub use outcome::{Code, Outcome}` → `Code` and `Outcome` come from `outcome`).
fn root_names(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    let mut rest = lib;
    while let Some(at) = rest.find("pub use ") {
        rest = &rest[at + "pub use ".len()..];
        let end = rest.find(';').unwrap_or(rest.len());
        let statement = &rest[..end];
        rest = &rest[end..];
        let Some((module, tail)) = statement.split_once("::") else {
            continue;
        };
        for name in tail.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if name.chars().next().is_some_and(char::is_uppercase) {
                names.insert(name.to_owned(), module.trim().to_owned());
            }
        }
    }
    names
}

/// The `.rs` files of a top-level module: `name.rs` and everything under `name/`.
fn files(name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let file = src().join(format!("{name}.rs"));
    if file.is_file() {
        found.push(file);
    }
    let mut dirs = vec![src().join(name)];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    found
}

/// The top-level modules a file's code (comments and doc links left out) names through
/// `crate::`, with the line of the first mention of each.
fn uses(code: &str, root: &BTreeMap<String, String>) -> BTreeMap<String, usize> {
    let ident = |text: &str| -> String {
        text.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut used = BTreeMap::new();
    for (number, line) in code.lines().enumerate() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let mut named = Vec::new();
            if let Some(inner) = rest.strip_prefix('{') {
                let close = inner.find('}').unwrap_or(inner.len());
                named.extend(inner[..close].split(',').map(|item| ident(item.trim())));
            } else {
                named.push(ident(rest));
            }
            for name in named {
                let module = root.get(&name).cloned().unwrap_or(name);
                used.entry(module).or_insert(number + 1);
            }
        }
    }
    used
}

#[test]
fn modules_use_only_their_own_group_or_earlier_ones_and_never_each_other() {
    let lib = fs::read_to_string(src().join("lib.rs")).unwrap();
    let groups = groups(&lib);
    let root = root_names(&lib);
    let group_of: BTreeMap<&str, usize> = groups
        .iter()
        .enumerate()
        .flat_map(|(index, group)| group.iter().map(move |name| (name.as_str(), index)))
        .collect();
    assert!(
        group_of.len() > 10,
        "lib.rs should declare the crate's modules in groups; found {groups:?}"
    );

    // Every module on disk is declared in a group.
    for entry in fs::read_dir(src()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
        if name != "lib" && (path.is_dir() || path.extension().is_some_and(|e| e == "rs")) {
            assert!(
                group_of.contains_key(name.as_str()),
                "tool-core/src/{name} is not declared in a group of lib.rs"
            );
        }
    }

    let mut edges: BTreeMap<&str, BTreeMap<String, String>> = BTreeMap::new();
    let mut climbs = Vec::new();
    for (&module, &group) in &group_of {
        for file in files(module) {
            let code = fs::read_to_string(&file).unwrap();
            let shown = file.strip_prefix(src()).unwrap().display().to_string();
            for (used, line) in uses(&code, &root) {
                let Some(&used_group) = group_of.get(used.as_str()) else {
                    continue; // a root item of another crate (`CancellationToken`), or a macro
                };
                if used == module {
                    continue;
                }
                if used_group > group {
                    climbs.push(format!(
                        "{shown}:{line}: `{module}` (group {group}) uses `{used}` (group {used_group}, above it)"
                    ));
                }
                edges
                    .entry(module)
                    .or_default()
                    .entry(used)
                    .or_insert(format!("{shown}:{line}"));
            }
        }
    }
    let mut cycles = BTreeSet::new();
    for (&a, used) in &edges {
        for (b, at) in used {
            if let Some(back) = edges.get(b.as_str()).and_then(|used| used.get(a))
                && a < b.as_str()
            {
                let _ = cycles.insert(format!("`{a}` and `{b}` use each other ({at}; {back})"));
            }
        }
    }
    assert!(
        climbs.is_empty() && cycles.is_empty(),
        "the layering of tool-core/src/lib.rs does not hold:\n{}",
        climbs
            .into_iter()
            .chain(cycles)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_layering_check_sees_a_climb_and_a_cycle() {
    // The reader the test above relies on: it must see imports written every way the crate
    // writes them, or the check would pass on anything.
    let lib = "mod a;\n\n// b\npub mod b;\npub use b::{Thing, Other};\n";
    assert_eq!(
        groups(lib),
        vec![vec!["a".to_owned()], vec!["b".to_owned()]]
    );
    let root = root_names(lib);
    assert_eq!(root.get("Thing").map(String::as_str), Some("b"));
    let code = "//! docs name crate::c\nuse crate::{Thing, d::X};\nfn f() { crate::e::g(); }\n";
    let used: Vec<String> = uses(code, &root).into_keys().collect();
    assert_eq!(used, ["b", "d", "e"]);
}
