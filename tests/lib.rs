//! Integration tests live in this package.
