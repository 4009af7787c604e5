//! `proto_message!`: a prost message struct written like its `.proto`, each field's type said
//! once. The protobuf kind follows from the Rust type as prost's own generator writes it
//! (`f64` is `double`, `Option<M>` an optional message, `Vec<M>` a repeated one, …); a field
//! written with its own `#[prost(...)]` (enumerations, oneofs, the rarer scalars) keeps it.
//!
//! ```ignore
//! proto_message! {
//!     /// `gz.msgs.Double`
//!     pub struct Double { header: Option<Header> = 1, data: f64 = 2 }
//! }
//! ```

macro_rules! proto_message {
    // Every field turned into a prost one (tags are `tt`, so the derive sees plain literals).
    (@fields [$($head:tt)*] [$($out:tt)*] $(,)?) => {
        #[derive(Clone, PartialEq, ::prost::Message)]
        $($head)* { $($out)* }
    };
    (@fields $head:tt [$($out:tt)*] #[prost($($kind:tt)*)] $f:ident: $t:ty $(, $($rest:tt)*)?) => {
        $crate::proto::proto_message!(@fields $head [$($out)* #[prost($($kind)*)] pub $f: $t,] $($($rest)*)?);
    };
    // The kinds in use; any other is written with its `#[prost(...)]`.
    (@fields $head:tt [$($out:tt)*] $f:ident: f64 = $tag:tt $(, $($rest:tt)*)?) => { $crate::proto::proto_message!(@fields $head [$($out)* #[prost(double, tag = $tag)] pub $f: f64,] $($($rest)*)?); };
    (@fields $head:tt [$($out:tt)*] $f:ident: u32 = $tag:tt $(, $($rest:tt)*)?) => { $crate::proto::proto_message!(@fields $head [$($out)* #[prost(uint32, tag = $tag)] pub $f: u32,] $($($rest)*)?); };
    (@fields $head:tt [$($out:tt)*] $f:ident: bool = $tag:tt $(, $($rest:tt)*)?) => { $crate::proto::proto_message!(@fields $head [$($out)* #[prost(bool, tag = $tag)] pub $f: bool,] $($($rest)*)?); };
    (@fields $head:tt [$($out:tt)*] $f:ident: String = $tag:tt $(, $($rest:tt)*)?) => { $crate::proto::proto_message!(@fields $head [$($out)* #[prost(string, tag = $tag)] pub $f: String,] $($($rest)*)?); };
    (@fields $head:tt [$($out:tt)*] $f:ident: Option<$m:ty> = $tag:tt $(, $($rest:tt)*)?) => { $crate::proto::proto_message!(@fields $head [$($out)* #[prost(message, optional, tag = $tag)] pub $f: Option<$m>,] $($($rest)*)?); };
    (@fields $head:tt [$($out:tt)*] $f:ident: Vec<$m:ty> = $tag:tt $(, $($rest:tt)*)?) => { $crate::proto::proto_message!(@fields $head [$($out)* #[prost(message, repeated, tag = $tag)] pub $f: Vec<$m>,] $($($rest)*)?); };
    ($(#[$attr:meta])* $vis:vis struct $name:ident { $($fields:tt)* }) => {
        $crate::proto::proto_message!(@fields [$(#[$attr])* $vis struct $name] [] $($fields)*);
    };
}

pub(crate) use proto_message;
