//! With the `ros` feature the extension links rclrs against the ROS 2 wheels in the venv
//! (crates/ros-link: RPATH into the venv, libpython, the RMW shim), and rclrs's node calls
//! through listener-subscription's wrappers. Python has libpython loaded already; the
//! explicit link only keeps the wheels' libraries resolvable.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "ros")]
    {
        ros_link::emit_listener_subscription_link_args();
        if let Err(error) = ros_link::emit_link_args() {
            eprintln!("error: {error}");
            std::process::exit(1);
        }
    }
}
