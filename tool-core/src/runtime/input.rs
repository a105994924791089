//! Stages 2 and 3: the arguments fit the input byte cap, then they are parsed and validated
//! into the tool's argument type (in the registry's `prepare`), every violation reported.

use super::Shared;
use crate::contract::arguments::{Arguments, deeper_than};
use crate::contract::error::{ArgumentErrors, Keyword, Violation};
use crate::outcome::{Code, Failure};
use crate::registry::ToolInfo;

/// Stage 2: refuses arguments nested deeper than the parser allows (before anything walks
/// them) or longer, as JSON text, than the tool's or the runtime's cap.
pub(super) fn cap(
    shared: &Shared,
    info: &ToolInfo,
    arguments: Arguments<'_>,
) -> Result<(), Failure> {
    let limit = info
        .settings
        .max_input_bytes
        .unwrap_or(shared.max_input_bytes);
    // Measuring the length walks the value recursively, so its depth is bounded first.
    if let Arguments::Json(value) = arguments
        && deeper_than(value, crate::contract::MAX_DEPTH)
    {
        let too_deep = Violation::new(
            String::new(),
            Keyword::Syntax,
            format!("nesting deeper than {} levels", crate::contract::MAX_DEPTH),
        );
        return Err(invalid(ArgumentErrors::new(vec![too_deep])));
    }
    if arguments.len_up_to(limit) > limit {
        return Err(Failure::new(
            Code::InputTooLarge,
            format!("arguments are over the limit of {limit} bytes; send less data"),
        ));
    }
    Ok(())
}

/// Stage 3's failure: every violation, for the model to fix.
pub(super) fn invalid(errors: ArgumentErrors) -> Failure {
    Failure::invalid(Code::InvalidArguments, errors)
}
