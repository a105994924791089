//! What a run's tokens cost: [`Prices`] per million tokens, for the agent's money budget
//! ([`Agent::cost_budget`](super::Agent::cost_budget)).

use crate::model::Usage;

/// A model's prices: what a million input (prompt) tokens and a million output (completion)
/// tokens cost, in one currency. Costs are counted in millionths of that currency's unit
/// ("micros"), in integers, so budgets compare exactly.
///
/// ```
/// use tool_core::agent::Prices;
/// use tool_core::model::Usage;
///
/// let prices = Prices::per_million(2.50, 10.0);
/// let usage = Usage { input_tokens: 1_000, output_tokens: 200 };
/// // 1,000 × 2.50 / 1e6 + 200 × 10 / 1e6 = 0.0025 + 0.002 = 0.0045
/// assert_eq!(prices.cost_micros(usage), 4_500);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Prices {
    input_micros_per_million: u64,
    output_micros_per_million: u64,
}

impl Prices {
    /// Prices per million tokens, in the currency's unit (`2.50` is 2.50 per million input
    /// tokens). A negative or non-finite price counts as 0.
    pub fn per_million(input: f64, output: f64) -> Self {
        Prices {
            input_micros_per_million: to_micros(input),
            output_micros_per_million: to_micros(output),
        }
    }

    /// Prices per million tokens in micros (`2_500_000` is 2.50).
    pub fn per_million_micros(input: u64, output: u64) -> Self {
        Prices {
            input_micros_per_million: input,
            output_micros_per_million: output,
        }
    }

    /// What `usage` costs, in micros, rounded up (a budget is never overrun by rounding).
    pub fn cost_micros(&self, usage: Usage) -> u64 {
        let part =
            |tokens: u64, price: u64| (u128::from(tokens) * u128::from(price)).div_ceil(1_000_000);
        let total = part(usage.input_tokens, self.input_micros_per_million)
            + part(usage.output_tokens, self.output_micros_per_million);
        u64::try_from(total).unwrap_or(u64::MAX)
    }
}

fn to_micros(price: f64) -> u64 {
    if price.is_finite() && price > 0.0 {
        // Saturating: prices past u64::MAX micros are not prices.
        (price * 1_000_000.0).round() as u64
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_round_up_and_saturate() {
        let prices = Prices::per_million(0.15, 0.60);
        let one = Usage {
            input_tokens: 1,
            output_tokens: 0,
        };
        assert_eq!(prices.cost_micros(one), 1); // 0.15 micros, rounded up
        let huge = Usage {
            input_tokens: u64::MAX,
            output_tokens: u64::MAX,
        };
        assert_eq!(Prices::per_million(1e12, 1e12).cost_micros(huge), u64::MAX);
        assert_eq!(Prices::per_million(f64::NAN, -1.0), Prices::default());
    }
}
