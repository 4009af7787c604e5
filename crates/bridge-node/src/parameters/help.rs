//! The node's `--help` parameter table, made by the declarations that read the parameters (a
//! [`ParameterReader::for_help`] reader records each instead of declaring it), so no default
//! in it can be stale. Above the parameter modules: it asks each of them for its rows.

use crate::parameters::multi::declare_group_lists;
use crate::parameters::params::{
    help_table, GzParameters, HelpRow, ParameterReader, RobotBlock, RobotDefaults,
};
use crate::process::clock::ClockParameters;

/// Every parameter of a node, as its declarations record them without a node (see
/// [`ParameterReader::for_help`]), in the order a node declares them: the multi-robot lists,
/// a robot's block and options, the gz-transport settings, the process's clock.
pub fn parameter_help_rows() -> Vec<HelpRow> {
    let mut reader = ParameterReader::for_help();
    // Nothing fails without a node: every value is a default, and the defaults are valid.
    declare_group_lists(&mut reader).expect("the group lists' defaults are valid");
    RobotBlock::declare(&mut reader, None).expect("a help reader fails nothing");
    RobotDefaults::default()
        .declare(&mut reader)
        .expect("the defaults are valid");
    GzParameters::declare(&mut reader).expect("the gz defaults are valid");
    ClockParameters::declare(&mut reader).expect("the clock defaults are valid");
    let mut rows = reader.help_rows().to_vec();
    rows.push(use_sim_time_row());
    rows
}

/// `use_sim_time`, which every rclrs node declares itself (false unless set).
pub fn use_sim_time_row() -> HelpRow {
    HelpRow {
        name: "use_sim_time".into(),
        kind: "bool",
        default: Some("false".into()),
        description: "ROS's own: every stamp from ROS /clock",
    }
}

/// The node's `--help` table ([`help_table`] of [`parameter_help_rows`]).
pub fn parameters_help() -> String {
    help_table(&parameter_help_rows())
}
