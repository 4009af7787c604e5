//! The Python module `sas_robot_driver_gazebo` (compiled part:
//! `sas_robot_driver_gazebo._sas_robot_driver_gazebo`): the Gazebo robot driver core and,
//! with the `ros` feature, the ROS 2 control loop and the controller's `RobotDriverClient`,
//! exposed with the surface of the original SmartArmStack bindings.
//!
//! Key design decision: no Rust thread ever needs the GIL, and every call that can wait
//! releases it (one helper, `gil.rs`). The original's control loop held the GIL while it
//! slept, so Python callbacks starved and joint states arrived seconds late; here Python can
//! do anything meanwhile and the loop keeps its rate. Errors become Python exceptions in one
//! place (`errors.rs`).

mod arrays;
#[cfg(feature = "ros")]
mod client;
#[cfg(feature = "ros")]
mod client_ros;
mod config;
mod driver;
mod errors;
mod gil;
#[cfg(feature = "ros")]
mod ros;

use pyo3::prelude::*;
use tracing_subscriber::EnvFilter;

/// Log filter variable for the lines written while no node runs; `info` by default. They go
/// to stderr, written by Rust without the GIL; while a node runs (`run_node`, a
/// `RobotDriverROS` loop), to that node's ROS logger instead.
const LOG_FILTER_VARIABLE: &str = "SAS_ROBOT_DRIVER_GAZEBO_LOG";

#[pymodule]
fn _sas_robot_driver_gazebo(module: &Bound<'_, PyModule>) -> PyResult<()> {
    // Another extension may have installed a subscriber first; then logs go there.
    let filter =
        EnvFilter::try_from_env(LOG_FILTER_VARIABLE).unwrap_or_else(|_| EnvFilter::new("info"));
    #[cfg(feature = "ros")]
    bridge_node::install_log_route(filter);
    #[cfg(not(feature = "ros"))]
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
    // NumPy's C API is loaded on first use; a first getter interrupted by Ctrl-C while numpy
    // imports would leave it unloadable and panic. Loaded here, a failure is this import's.
    module.py().import("numpy")?;
    drop(arrays::f64_array(module.py(), &[]));
    module.add_class::<config::Configuration>()?;
    module.add_class::<driver::RobotDriverGazebo>()?;
    module.add_class::<driver::ShutdownSignaler>()?;
    #[cfg(feature = "ros")]
    {
        module.add_class::<ros::RosConfiguration>()?;
        module.add_class::<ros::RobotDriverRos>()?;
        module.add_function(wrap_pyfunction!(ros::run_node, module)?)?;
        module.add_class::<client::RobotDriverClient>()?;
        module.add_class::<client::Functionality>()?;
        module.add_class::<client::ModeBlacklistFlag>()?;
        let close_all_clients = wrap_pyfunction!(client::_close_all_clients, module)?;
        module.add_function(close_all_clients.clone())?;
        // Clients still alive at exit are closed before the interpreter finalizes.
        module
            .py()
            .import("atexit")?
            .call_method1("register", (close_all_clients,))?;
    }
    Ok(())
}
