//! Deterministic, non-default test values for every field kind.
//!
//! `tests/ros/pattern.py` implements the same rule for rclpy messages by introspection, so
//! both sides build the same message from a seed without exchanging it: a field that one
//! side maps wrongly (name, order, type, bound, encoding) shows up as a mismatch.
//!
//! The rule: field `i` (1-based, IDL order) of a message with seed `s` gets seed
//! `mix(s, i)`; if the value equals the field's default it takes the seed plus one instead,
//! so every field differs from its default. Collections take element seeds `mix(s, j)`,
//! sequences have `1 + s % 3` elements (capped at the bound).

use rosidl_runtime_rs::{BoundedSequence, BoundedString, BoundedWString, SequenceAlloc};

/// A type that can build its test value from a seed.
pub trait Pattern: Sized + PartialEq {
    fn pattern(seed: u64) -> Self;
}

pub fn mix(seed: u64, index: u64) -> u64 {
    (seed * 31 + index) % 1_000_003
}

/// Sets `field` (holding its default) to the pattern value for `seed`, or for `seed + 1`
/// if that would leave it at the default.
pub fn set<T: Pattern>(field: &mut T, seed: u64) {
    let mut value = T::pattern(seed);
    if value == *field {
        value = T::pattern(seed + 1);
    }
    *field = value;
}

fn int(seed: u64) -> u64 {
    seed * 37 + 11
}

impl Pattern for bool {
    fn pattern(seed: u64) -> Self {
        seed % 2 == 1
    }
}

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl Pattern for $t {
            fn pattern(seed: u64) -> Self {
                (int(seed) % (1u64 << <$t>::BITS)) as $t
            }
        }
    )*};
}
unsigned!(u8, u16, u32);

impl Pattern for u64 {
    fn pattern(seed: u64) -> Self {
        int(seed)
    }
}

macro_rules! signed {
    ($($t:ty),*) => {$(
        impl Pattern for $t {
            /// The unsigned pattern shifted down by half the range.
            fn pattern(seed: u64) -> Self {
                let bits = <$t>::BITS;
                let modulus = 1i128 << bits;
                ((int(seed) as i128 % modulus) - modulus / 2) as $t
            }
        }
    )*};
}
signed!(i8, i16, i32, i64);

impl Pattern for f32 {
    /// Multiples of 0.25 below 250: exact in both float widths.
    fn pattern(seed: u64) -> Self {
        (seed % 1000) as f32 * 0.25 + 0.5
    }
}

impl Pattern for f64 {
    fn pattern(seed: u64) -> Self {
        (seed % 1000) as f64 * 0.25 + 0.5
    }
}

impl Pattern for String {
    /// Non-ASCII, and outside the BMP, to exercise UTF-8 and UTF-16 (surrogates).
    fn pattern(seed: u64) -> Self {
        format!("s{seed}-\u{fc}\u{1f600}")
    }
}

impl Pattern for rosidl_runtime_rs::String {
    fn pattern(seed: u64) -> Self {
        String::pattern(seed).as_str().into()
    }
}

impl Pattern for rosidl_runtime_rs::WString {
    fn pattern(seed: u64) -> Self {
        String::pattern(seed).as_str().into()
    }
}

/// Bounded strings are ASCII, cut to the bound.
fn bounded_text(seed: u64, bound: usize) -> String {
    let mut text = format!("b{seed}");
    text.truncate(bound);
    text
}

impl<const N: usize> Pattern for BoundedString<N> {
    fn pattern(seed: u64) -> Self {
        BoundedString::try_from(bounded_text(seed, N).as_str()).expect("cut to the bound")
    }
}

impl<const N: usize> Pattern for BoundedWString<N> {
    fn pattern(seed: u64) -> Self {
        BoundedWString::try_from(bounded_text(seed, N).as_str()).expect("cut to the bound")
    }
}

fn sequence_len(seed: u64) -> usize {
    1 + (seed % 3) as usize
}

impl<T: Pattern, const N: usize> Pattern for [T; N] {
    fn pattern(seed: u64) -> Self {
        std::array::from_fn(|j| T::pattern(mix(seed, j as u64 + 1)))
    }
}

impl<T: Pattern> Pattern for Vec<T> {
    fn pattern(seed: u64) -> Self {
        (0..sequence_len(seed))
            .map(|j| T::pattern(mix(seed, j as u64 + 1)))
            .collect()
    }
}

impl<T: Pattern + SequenceAlloc, const N: usize> Pattern for BoundedSequence<T, N> {
    fn pattern(seed: u64) -> Self {
        (0..sequence_len(seed).min(N))
            .map(|j| T::pattern(mix(seed, j as u64 + 1)))
            .collect()
    }
}

/// Implements [`Pattern`] for a message (field list in IDL order) and its rmw twin;
/// `pkg::msg::{A, B} { … }` for messages with the same fields.
#[macro_export]
macro_rules! message_pattern {
    ($($pkg:ident :: $kind:ident :: $names:tt $fields:tt;)*) => {$(
        $crate::message_pattern!(@each $pkg::$kind::$names $fields);
    )*};
    (@each $pkg:ident :: $kind:ident :: { $($name:ident),+ } $fields:tt) => {$(
        $crate::message_pattern!(@one $pkg::$kind::$name $fields);
    )+};
    (@each $pkg:ident :: $kind:ident :: $name:ident $fields:tt) => {
        $crate::message_pattern!(@one $pkg::$kind::$name $fields);
    };
    (@one $pkg:ident :: $kind:ident :: $name:ident { $($field:ident),* }) => {
        impl $crate::pattern::Pattern for ros_env::$pkg::$kind::$name {
            #[allow(unused_mut, unused_variables)]
            fn pattern(seed: u64) -> Self {
                let mut msg = Self::default();
                let mut index = 0;
                $(
                    index += 1;
                    $crate::pattern::set(&mut msg.$field, $crate::pattern::mix(seed, index));
                )*
                msg
            }
        }
        impl $crate::pattern::Pattern for ros_env::$pkg::$kind::rmw::$name {
            fn pattern(seed: u64) -> Self {
                let idiomatic = <ros_env::$pkg::$kind::$name as $crate::pattern::Pattern>::pattern(seed);
                <ros_env::$pkg::$kind::$name as rosidl_runtime_rs::Message>::into_rmw_message(
                    std::borrow::Cow::Owned(idiomatic),
                )
                .into_owned()
            }
        }
    };
}
