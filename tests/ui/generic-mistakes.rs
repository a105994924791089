use tool_core::Argument;

#[derive(Argument)]
struct Borrowed<'a> {
    name: &'a str,
}

#[derive(Argument)]
struct Constrained<T> {
    #[tool(length(max = 3))]
    items: Vec<T>,
}

#[derive(Argument)]
enum Either<T> {
    One(T),
}

fn main() {}
