//! Nothing here: the tests under `tests/` each extend tool-core through one public seam, from
//! outside the crate, as a user would.
