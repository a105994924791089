//! Benchmarks live in this package.
