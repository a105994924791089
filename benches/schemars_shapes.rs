//! The argument types and texts of the schemars benchmark (`benches/schemars.rs`) and its
//! instruction count (`examples/schemars_count.rs`): one shape checked through
//! `ViaSchemars`, through the derive, and read by plain serde.

use schemars::JsonSchema;
use serde::Deserialize;
use tool_core::{Argument, Tool, contract::ViaSchemars};

/// When a job may run (the shape checked three ways). Fields are only read by the checks.
#[allow(dead_code)]
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct Window {
    #[schemars(range(max = 23))]
    start_hour: u8,
    #[schemars(length(min = 1, max = 8))]
    label: String,
    #[schemars(length(max = 3))]
    days: Vec<Day>,
}

#[derive(Deserialize, JsonSchema, Debug)]
pub(crate) enum Day {
    Mon,
    Tue,
    Wed,
}

/// The same shape as a derived argument.
#[allow(dead_code)]
#[derive(Argument, Debug)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DerivedWindow {
    #[tool(range(max = 23))]
    start_hour: u8,
    #[tool(length(min = 1, max = 8))]
    label: String,
    #[tool(length(max = 3))]
    days: Vec<DerivedDay>,
}

#[derive(Argument, Debug)]
pub(crate) enum DerivedDay {
    Mon,
    Tue,
    Wed,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct Plain {
    #[allow(dead_code)]
    window: Window,
}

/// Schedules through schemars.
#[derive(Tool, Debug)]
pub(crate) struct ViaSchemarsArgs {
    #[allow(dead_code)]
    window: ViaSchemars<Window>,
}

/// Schedules through the derive.
#[derive(Tool, Debug)]
pub(crate) struct DerivedArgs {
    #[allow(dead_code)]
    window: DerivedWindow,
}

pub(crate) const VALID: &str =
    r#"{"window": {"startHour": 3, "label": "night", "days": ["Mon", "Wed"]}}"#;
pub(crate) const INVALID3: &str =
    r#"{"window": {"startHour": 24, "label": "", "days": ["Mon", "Sun"]}}"#;
