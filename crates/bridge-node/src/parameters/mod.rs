//! What a node is told to do: the ROS side's configuration (`config`), the node's parameters
//! read and checked by name (`params`), and several robots and composites in one node
//! (`multi`).

pub(crate) mod config;
pub(crate) mod multi;
pub(crate) mod params;
