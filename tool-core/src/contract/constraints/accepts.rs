//! The field types each constraint applies to, checked when the derive's code compiles.

use super::Domain;

/// Field types that `length(min = .., max = ..)` applies to.
#[diagnostic::on_unimplemented(
    message = "`length` does not apply to `{Self}`",
    label = "`length` applies to strings (characters), arrays (items) and maps (entries)",
    note = "use `range(..)` for numbers"
)]
pub trait AcceptsLength {}

/// Field types that `range(min = .., max = .., exclusive_min = .., exclusive_max = ..)` applies to.
#[diagnostic::on_unimplemented(
    message = "`range` does not apply to `{Self}`",
    label = "`range` applies to integers and floats",
    note = "use `length(..)` for strings and arrays"
)]
pub trait AcceptsRange {
    /// The values of the type.
    const DOMAIN: Domain;
}

/// Field types that `pattern` / `regex(pattern = ..)` applies to.
#[diagnostic::on_unimplemented(
    message = "`pattern` does not apply to `{Self}`",
    label = "`pattern` applies to strings"
)]
pub trait AcceptsPattern {}

/// Field types that `format = ".."` applies to.
#[diagnostic::on_unimplemented(
    message = "`format` does not apply to `{Self}`",
    label = "`format` applies to strings"
)]
pub trait AcceptsFormat {}

impl AcceptsLength for String {}
impl<T> AcceptsLength for Vec<T> {}
impl AcceptsPattern for String {}
impl AcceptsFormat for String {}
macro_rules! accepts_range {
    ($($ty:ty)*) => {$(
        impl AcceptsRange for $ty {
            const DOMAIN: Domain = Domain::Integer {
                min: <$ty>::MIN as i128,
                max: <$ty>::MAX as i128,
            };
        }
    )*};
}
accepts_range!(u8 u16 u32 u64 usize i8 i16 i32 i64 isize);
impl AcceptsRange for f32 {
    const DOMAIN: Domain = Domain::F32;
}
impl AcceptsRange for f64 {
    const DOMAIN: Domain = Domain::F64;
}
macro_rules! through_wrappers {
    ($($marker:ident)*) => {$(
        impl<T: $marker> $marker for Option<T> {}
        impl<T: $marker> $marker for Box<T> {}
    )*};
}
through_wrappers!(AcceptsLength AcceptsPattern AcceptsFormat);
impl<T: AcceptsRange> AcceptsRange for Option<T> {
    const DOMAIN: Domain = T::DOMAIN;
}
impl<T: AcceptsRange> AcceptsRange for Box<T> {
    const DOMAIN: Domain = T::DOMAIN;
}

/// Collections whose items `inner(..)` constrains: the items of an array or set, the values
/// of a map.
#[diagnostic::on_unimplemented(
    message = "`inner(..)` does not apply to `{Self}`",
    label = "`inner` applies to collections: arrays, sets and maps",
    note = "put the constraints on the field itself"
)]
pub trait HasItems {
    /// The type of each item.
    type Item: ?Sized;
}

impl<T> HasItems for Vec<T> {
    type Item = T;
}
impl<C: HasItems> HasItems for Option<C> {
    type Item = C::Item;
}
impl<C: HasItems> HasItems for Box<C> {
    type Item = C::Item;
}
impl<K, V> HasItems for std::collections::BTreeMap<K, V> {
    type Item = V;
}
impl<K, V, S> HasItems for std::collections::HashMap<K, V, S> {
    type Item = V;
}
impl<T> HasItems for std::collections::BTreeSet<T> {
    type Item = T;
}
impl<T, S> HasItems for std::collections::HashSet<T, S> {
    type Item = T;
}
impl<T, const N: usize> HasItems for [T; N] {
    type Item = T;
}
