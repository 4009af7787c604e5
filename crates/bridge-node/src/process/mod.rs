//! The process shell: every node program's `main` and its ROS node (`program`), the driver
//! node's run on it (`node_main`), the stop on signals, the executor's thread, log routing
//! to the ROS logger, the process's Fast DDS settings (`dds_profile`), thread priorities, and
//! several robots in one process (`multi_robot`). It knows robots only as [`crate::robot`]
//! serves them; it starts them from the [`crate::parameters`].

pub(crate) mod clock;
pub(crate) mod dds_profile;
pub(crate) mod executor_thread;
pub(crate) mod log_route;
pub(crate) mod multi_robot;
pub(crate) mod node_main;
pub(crate) mod program;
pub(crate) mod realtime;
pub(crate) mod ros_log;
pub(crate) mod stop_signals;
