//! What a node is told to do: the ROS side's configuration (`config`), the node's parameters
//! read and checked by name (`params`), several robots and composites in one node
//! (`multi`), and the `--help` table made by their declarations (`help`).

pub(crate) mod config;
pub(crate) mod help;
pub(crate) mod multi;
pub(crate) mod params;
