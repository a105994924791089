//! Checks one string against one format `n` times, for instruction counting under
//! `valgrind --tool=callgrind`: `format_count FORMAT TEXT N`, with FORMAT a format's name
//! (`email`, `date-time`, `uri`, ...). The instructions of one check are the difference
//! between two counts (N = 3000 and N = 1000) over 2000.

use std::hint::black_box;

use tool_core::contract::Format;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, format, text, n] = args.as_slice() else {
        panic!("usage: format_count FORMAT TEXT N");
    };
    let format = Format::from_name(format).unwrap_or_else(|| panic!("unknown format {format}"));
    let n: usize = n.parse().expect("N is a count");
    let valid = (0..n).filter(|_| format.is_valid(black_box(text))).count();
    println!("{valid}");
}
