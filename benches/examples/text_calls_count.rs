//! Reads the BFCL v4 reply mix of `benches/text_calls_corpus.rs` `n` times, for instruction
//! counts (see `benches/text_calls_instructions.py`):
//! `text_calls_count <named|detected> <dialect name|prose|all> <n>`. Prints the bytes of one
//! pass. `text_calls_count digest` prints the digest of every detection result over the mix and
//! its variants (`tests::replies::detection_digest`).

use std::hint::black_box;

use tests::replies::{bfcl_replies, detection_digest, variants};
use tool_core::text_calls::{Dialect, parse_calls};

fn main() {
    let mut args = std::env::args().skip(1);
    let way = args.next().unwrap_or_default();
    let set = args.next().unwrap_or_default();
    let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1);
    if way == "digest" {
        let replies = bfcl_replies();
        let variants = variants(&replies);
        let texts = replies.iter().map(|r| r.text.as_str());
        println!(
            "{}",
            detection_digest(texts.chain(variants.iter().map(String::as_str)))
        );
        return;
    }
    let named = match way.as_str() {
        "named" => true,
        "detected" => false,
        other => panic!("`{other}` is neither `named` nor `detected`"),
    };
    let replies: Vec<_> = bfcl_replies()
        .into_iter()
        .filter(|reply| match (set.as_str(), reply.dialect) {
            ("all", _) => true,
            ("prose", dialect) => dialect.is_none(),
            (name, Some(dialect)) => dialect.name() == name,
            (_, None) => false,
        })
        .collect();
    assert!(!replies.is_empty(), "no replies for `{set}`");
    for _ in 0..n {
        for reply in &replies {
            let dialect: Option<Dialect> = if named { reply.dialect } else { None };
            black_box(parse_calls(black_box(&reply.text), dialect).is_ok());
        }
    }
    println!("{}", replies.iter().map(|r| r.text.len()).sum::<usize>());
}
