"""rosidl_rust_gen: ROS 2 interface definitions (.idl) -> Rust crates for rclrs.

Reads the interface packages registered in the ament index of one or more
prefixes, parses their `.idl` files with the wheels' `rosidl_parser`, and
writes one crate per package under `<out>/share/<pkg>/rust/` in the layout
that `ros-env` 0.3 discovers and that implements `rosidl_runtime_rs` 0.7's
traits (`Message`, `RmwMessage`, `SequenceAlloc`, `Service`, `Action`).

Each crate has two layers per interface kind (msg, srv, action):
- `rmw`: `#[repr(C)]` structs with the exact layout of the C structs of
  `rosidl_generator_c`, bound to the package's C libraries (init for IDL
  defaults, sequence alloc, type support handles);
- idiomatic: the same fields with `String`/`Vec`/nested idiomatic types,
  converted to and from the rmw layer.

The emitted code is deterministic: the same inputs give the same bytes.
"""
