use examples::{CreateInvoice, GetWeather, SearchFlights};
use tool_core::Tool;

fn main() {
    for schema in [
        GetWeather::input_schema(),
        CreateInvoice::input_schema(),
        SearchFlights::input_schema(),
    ] {
        println!("{}", serde_json::to_string_pretty(schema).unwrap());
    }
    for raw in [
        r#"{"customerId":"cus_42","amount":120.5,"currency":"USD"}"#,
        r#"{"customerId":"cus_42","amount":"120.5","currency":"dollars"}"#,
        r#"{"customerId":"","amount":-5,"extra":1}"#,
    ] {
        match CreateInvoice::parse_arguments(raw) {
            Ok(v) => println!("ok {v:?}"),
            Err(e) => println!("{e}"),
        }
    }
}
