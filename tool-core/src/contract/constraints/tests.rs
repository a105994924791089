use super::*;

#[test]
fn compares_across_representations_exactly() {
    assert_eq!(
        Num::U(u64::MAX).compare(Num::F(18446744073709551616.0)),
        Ordering::Less
    );
    assert_eq!(Num::I(-1).compare(Num::U(0)), Ordering::Less);
    assert_eq!(Num::F(-0.0).compare(Num::U(0)), Ordering::Equal);
    assert_eq!(
        Num::U(9007199254740993).compare(Num::F(9007199254740992.0)),
        Ordering::Greater
    );
}

#[test]
fn merges_to_the_tighter_bound() {
    let c = Constraints {
        minimum: Some(Num::U(1)),
        maximum: Some(Num::U(1000)),
        ..Constraints::NONE
    };
    assert!(matches!(c.merged_minimum(Some(Num::U(0))), Some(Num::U(1))));
    assert!(matches!(
        c.merged_maximum(Some(Num::U(255))),
        Some(Num::U(255))
    ));
}

/// Whether `x` meets every bound of `c`, exactly.
fn meets(c: &Constraints, x: Num) -> bool {
    c.minimum.is_none_or(|b| x.compare(b) != Ordering::Less)
        && c.maximum.is_none_or(|b| x.compare(b) != Ordering::Greater)
        && c.exclusive_minimum
            .is_none_or(|b| x.compare(b) == Ordering::Greater)
        && c.exclusive_maximum
            .is_none_or(|b| x.compare(b) == Ordering::Less)
}

fn in_f32_range(x: Num) -> bool {
    let max = Num::F(f64::from(f32::MAX));
    x.compare(max) != Ordering::Greater && x.compare(Num::F(-f64::from(f32::MAX))) != Ordering::Less
}

/// Bounds on either side of which rounding to `f32` lands: representable or not, tiny,
/// huge, and integers past 2^53.
fn f32_bound_values() -> Vec<Num> {
    let mut values = vec![
        Num::U(0),
        Num::U(1),
        Num::I(-1),
        Num::F(-1.5),
        Num::F(0.1),
        Num::F(-0.1),
        Num::F(1e-46),
        Num::F(-1e-46),
        Num::F(f64::from(f32::MAX)),
        Num::F(-f64::from(f32::MAX)),
        Num::F(3.4028235677973366e38),
        Num::F(1e38),
        Num::U(16_777_217),
        Num::U((1 << 60) + 1),
        Num::I(-(1 << 60) - 1),
        Num::U(1_152_921_573_326_323_713),
        Num::U(u64::MAX),
        Num::I(i64::MIN),
    ];
    // Midpoints of f32 neighbours, where ties go to the even one.
    for y in [1.0f32, 0.75, 3.0, f32::from_bits(1), 16_777_216.0] {
        values.push(Num::F((f64::from(y) + f64::from(y.next_up())) / 2.0));
        values.push(Num::F(-(f64::from(y) + f64::from(y.next_up())) / 2.0));
    }
    values
}

/// Numbers around `b`: `b` itself, its f64 and f32 neighbours and the midpoints between
/// those, and integers next to it.
fn numbers_near(b: Num) -> Vec<Num> {
    let f = b.as_f64();
    let mut near = vec![b, Num::F(f), Num::F(f.next_up()), Num::F(f.next_down())];
    let y = b.to_f32();
    for z in [y.next_down(), y, y.next_up()] {
        if z.is_finite() {
            let z64 = f64::from(z);
            near.push(Num::F(z64));
            for w in [z.next_down(), z.next_up()] {
                if w.is_finite() {
                    let mid = (z64 + f64::from(w)) / 2.0;
                    near.extend([Num::F(mid), Num::F(mid.next_up()), Num::F(mid.next_down())]);
                    if let Some(i) = Num::F(mid).as_i128() {
                        for d in -2..=2 {
                            let k = i + d;
                            if let Ok(u) = u64::try_from(k) {
                                near.push(Num::U(u));
                            } else if let Ok(i) = i64::try_from(k) {
                                near.push(Num::I(i));
                            }
                        }
                    }
                }
            }
        }
    }
    near
}

#[test]
fn advertised_f32_bounds_hold_on_the_rounded_value() {
    // Every declared bound, alone and in pairs: a number meets the advertised bounds
    // exactly when it is within the f32 range and both it and its nearest f32 meet the
    // declared ones.
    let values = f32_bound_values();
    let mut declared = Vec::new();
    for &v in &values {
        declared.push(Constraints {
            minimum: Some(v),
            ..Constraints::NONE
        });
        declared.push(Constraints {
            exclusive_minimum: Some(v),
            ..Constraints::NONE
        });
        declared.push(Constraints {
            maximum: Some(v),
            ..Constraints::NONE
        });
        declared.push(Constraints {
            exclusive_maximum: Some(v),
            ..Constraints::NONE
        });
        declared.push(Constraints {
            minimum: Some(v),
            exclusive_minimum: Some(Num::F(v.as_f64().next_down())),
            exclusive_maximum: Some(Num::F(1.5)),
            ..Constraints::NONE
        });
    }
    let mut numbers: Vec<Num> = values.iter().flat_map(|&v| numbers_near(v)).collect();
    // And numbers anywhere, from random bits.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..2000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let f = f64::from_bits(state);
        if f.is_finite() {
            numbers.push(Num::F(f));
            numbers.push(Num::F(f64::from(f as f32)));
        }
        numbers.push(Num::U(state >> (state % 64)));
    }
    for c in &declared {
        let advertised = c.rounded_to_f32();
        for &x in &numbers {
            let expected =
                in_f32_range(x) && meets(c, x) && meets(c, Num::F(f64::from(x.to_f32())));
            assert_eq!(
                in_f32_range(x) && meets(&advertised, x),
                expected,
                "{x:?} under {c:?}, advertised as {advertised:?}"
            );
        }
    }
}

#[test]
fn keeps_f32_bounds_that_rounding_cannot_cross() {
    let c = Constraints {
        minimum: Some(Num::U(0)),
        maximum: Some(Num::U(100)),
        ..Constraints::NONE
    };
    let advertised = c.rounded_to_f32();
    assert!(matches!(advertised.minimum, Some(Num::U(0))));
    assert!(matches!(advertised.maximum, Some(Num::U(100))));
    let c = Constraints {
        exclusive_minimum: Some(Num::U(0)),
        exclusive_maximum: Some(Num::U(1)),
        ..Constraints::NONE
    };
    let advertised = c.rounded_to_f32();
    // Half the least subnormal rounds to 0; just below 1, the midpoint rounds to 1.
    assert!(matches!(advertised.exclusive_minimum, Some(Num::F(x)) if x == 2f64.powi(-150)));
    assert!(matches!(advertised.exclusive_maximum, Some(Num::F(x)) if x == 1.0 - 2f64.powi(-25)));
    assert!(advertised.minimum.is_none() && advertised.maximum.is_none());
}

#[test]
fn admits_only_ranges_that_hold_a_value_of_the_type() {
    let u8_range = Domain::Integer { min: 0, max: 255 };
    let u32_range = Domain::Integer {
        min: 0,
        max: u32::MAX.into(),
    };
    let i64_range = Domain::Integer {
        min: i64::MIN.into(),
        max: i64::MAX.into(),
    };
    let c = |minimum, maximum, exclusive_minimum, exclusive_maximum| Constraints {
        minimum,
        maximum,
        exclusive_minimum,
        exclusive_maximum,
        ..Constraints::NONE
    };
    let refused = [
        (c(Some(Num::U(300)), None, None, None), u8_range),
        (c(None, Some(Num::I(-1)), None, None), u32_range),
        (c(Some(Num::F(255.5)), None, None, None), u8_range),
        (c(None, None, Some(Num::U(255)), None), u8_range),
        (c(None, None, Some(Num::U(0)), Some(Num::U(1))), i64_range),
        (
            c(Some(Num::F(0.2)), Some(Num::F(0.8)), None, None),
            i64_range,
        ),
        (c(Some(Num::F(1e39)), None, None, None), Domain::F32),
        (c(None, Some(Num::F(-1e39)), None, None), Domain::F32),
        (
            c(None, None, Some(Num::U(0)), Some(Num::F(1e-46))),
            Domain::F32,
        ),
        (
            c(None, None, Some(Num::U(0)), Some(Num::F(5e-324))),
            Domain::F64,
        ),
        (c(None, None, Some(Num::F(f64::MAX)), None), Domain::F64),
    ];
    for (constraints, domain) in refused {
        assert!(!constraints.admits(domain), "{constraints:?} on {domain:?}");
    }
    let admitted = [
        (c(Some(Num::U(255)), None, None, None), u8_range),
        (c(None, None, Some(Num::F(254.5)), None), u8_range),
        (c(None, Some(Num::U(0)), None, None), u32_range),
        (
            c(None, None, Some(Num::F(-0.5)), Some(Num::F(0.5))),
            i64_range,
        ),
        (
            c(Some(Num::U(u64::MAX)), None, None, None),
            Domain::Integer {
                min: 0,
                max: u64::MAX.into(),
            },
        ),
        (c(Some(Num::F(3.4e38)), None, None, None), Domain::F32),
        (
            c(None, None, Some(Num::U(0)), Some(Num::F(1.5e-45))),
            Domain::F32,
        ),
        (
            c(None, None, Some(Num::U(0)), Some(Num::F(1e-46))),
            Domain::F64,
        ),
        (Constraints::NONE, Domain::F64),
    ];
    for (constraints, domain) in admitted {
        assert!(constraints.admits(domain), "{constraints:?} on {domain:?}");
    }
}

#[test]
fn patterns_follow_ecma_digit_classes() {
    static DIGITS: Pattern = Pattern::new(r"^\d+$");
    assert_eq!(DIGITS.is_match("123"), Some(true));
    // ECMA-262 `\d` is ASCII only.
    assert_eq!(DIGITS.is_match("١٢٣"), Some(false));
}
