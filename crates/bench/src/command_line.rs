//! The command line of the bench binaries: their own options for clap, the ROS arguments
//! (`--ros-args …`) left for the ROS context they start.

use std::process::ExitCode;

use clap::Parser;

/// The process's arguments, whole (for the ROS context), and `C` parsed from the ones that
/// are not ROS's (clap exits there on `--help` or a bad option). Invalid ROS arguments are
/// named on stderr after `program`; the error is then the exit code of a bad command line, 2.
pub fn parse<C: Parser>(program: &str) -> Result<(C, Vec<String>), ExitCode> {
    let args: Vec<String> = std::env::args().collect();
    match rclrs::extract_non_ros_args(args.clone()) {
        Ok(own) => Ok((C::parse_from(own), args)),
        Err(err) => {
            eprintln!("{program}: invalid ROS arguments: {err}");
            Err(ExitCode::from(2))
        }
    }
}
