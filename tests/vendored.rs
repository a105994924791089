//! The third-party data under `tests/data`: every file is listed in `SHA256SUMS` with the bytes
//! it was vendored with, nothing unlisted rides along, and each source's licence is there.
//! The tests that read the data fail when it is missing; these catch a changed or stray file.

use std::collections::BTreeSet;
use std::path::Path;

use sha2::{Digest, Sha256};

/// Files that describe the data rather than being data.
const NOT_DATA: [&str; 3] = ["README.md", "SHA256SUMS", ".gitattributes"];

/// `SHA256SUMS` as (checksum, path relative to `tests/data`).
fn listed() -> Vec<(String, String)> {
    tests::read_data("SHA256SUMS")
        .lines()
        .map(|line| {
            let (sum, path) = line
                .split_once("  ")
                .unwrap_or_else(|| panic!("not a `sha256sum` line: {line}"));
            (sum.to_owned(), path.to_owned())
        })
        .collect()
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Every file under `dir`, relative to `base`, with `/` separators.
fn files(dir: &Path, base: &Path, out: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, base, out);
        } else {
            let relative = path.strip_prefix(base).unwrap();
            out.insert(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}

#[test]
fn vendored_files_match_their_checksums() {
    let listed = listed();
    assert!(!listed.is_empty(), "SHA256SUMS lists nothing");
    let mut wrong = Vec::new();
    for (sum, path) in &listed {
        match std::fs::read(tests::data_dir().join(path)) {
            Ok(bytes) if sha256_hex(&bytes) == *sum => {}
            Ok(_) => wrong.push(format!("{path}: changed since it was vendored")),
            Err(error) => wrong.push(format!("{path}: {error}")),
        }
    }
    assert_eq!(wrong, Vec::<String>::new());
}

#[test]
fn every_vendored_file_is_listed_in_the_checksums() {
    let listed: BTreeSet<String> = listed().into_iter().map(|(_, path)| path).collect();
    let root = tests::data_dir();
    let mut present = BTreeSet::new();
    files(&root, &root, &mut present);
    let unlisted: Vec<&String> = present
        .iter()
        .filter(|path| !NOT_DATA.contains(&path.as_str()) && !listed.contains(*path))
        .collect();
    assert_eq!(unlisted, Vec::<&String>::new());
}

#[test]
fn every_vendored_source_carries_its_licence() {
    let listed: Vec<String> = listed().into_iter().map(|(_, path)| path).collect();
    let sources: BTreeSet<&str> = listed
        .iter()
        .filter_map(|path| path.split_once('/').map(|(folder, _)| folder))
        .collect();
    assert_eq!(
        sources,
        BTreeSet::from([
            "bfcl-v4",
            "json-schema-test-suite",
            "livemcpbench-tools",
            "providers"
        ])
    );
    for source in sources {
        let licences = listed
            .iter()
            .filter(|path| {
                path.strip_prefix(source)
                    .and_then(|rest| rest.strip_prefix('/'))
                    .is_some_and(|rest| rest.starts_with("LICENSE"))
            })
            .count();
        assert!(licences > 0, "{source} has no licence file");
    }
    // One licence per source repository of the provider recordings.
    let providers = listed
        .iter()
        .filter(|path| path.starts_with("providers/LICENSES/"))
        .count();
    assert_eq!(providers, 4);
}
