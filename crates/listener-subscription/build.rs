//! Compiles the C shim over rcl against the headers of the sourced ROS 2 environment, and
//! links the crate's own tests as a binary that uses it must be linked.

fn main() -> Result<(), ros_link::Error> {
    println!("cargo:rerun-if-changed=src/shim.c");
    let includes = ros_link::include_dirs();
    if !includes
        .iter()
        .any(|dir| dir.join("rcl/subscription.h").is_file())
    {
        eprintln!(
            "error: no rcl/subscription.h under AMENT_PREFIX_PATH ({:?}): source scripts/env",
            std::env::var("AMENT_PREFIX_PATH").unwrap_or_default()
        );
        std::process::exit(1);
    }
    println!("cargo:rerun-if-changed=src/participant.cpp");
    cc::Build::new()
        .file("src/shim.c")
        .includes(&includes)
        .flag_if_supported("-std=c11")
        .warnings(true)
        .compile("listener_subscription_shim");
    cc::Build::new()
        .cpp(true)
        .file("src/participant.cpp")
        .includes(&includes)
        .flag_if_supported("-std=c++17")
        .flag_if_supported("-Wno-deprecated-declarations")
        .compile("listener_subscription_participant");
    // The participant teardown calls Fast DDS and its RMW directly.
    println!("cargo:rustc-link-lib=dylib=rmw_fastrtps_cpp");
    println!("cargo:rustc-link-lib=dylib=fastrtps");
    ros_link::emit_listener_subscription_link_args();
    ros_link::emit_link_args()
}
