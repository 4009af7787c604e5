//! Several robots in one process: a [`RobotDriverGazebo`] per robot of
//! [`MultiRobotParameters`], all on one gz-transport node (one discovery participant, one set of
//! sockets), a [`RobotDriverComposite`] per composite over those drivers (reading their
//! caches: no DDS hop between a robot and its composite), and a [`RobotDriverRos`] loop for
//! each, on one ROS node.

use std::collections::HashMap;
use std::sync::Arc;

use rclrs::Node;
use sas_robot_driver_gazebo::{
    CompositePart, DriverError, PartOwnership, RobotDriver, RobotDriverComposite,
    RobotDriverGazebo, ShutdownToken,
};

use crate::error::BridgeError;
use crate::parameters::multi::MultiRobotParameters;
use crate::robot::control_loop::RobotDriverRos;

/// One control loop of a multi-robot node: its group name and the loop.
pub struct RobotLoop {
    /// The group name (`r820_sim`).
    pub name: String,
    /// The loop, over a robot or a composite.
    pub bridge: RobotDriverRos<dyn RobotDriver>,
}

/// The robots and composites of a multi-robot node, topics created, loops not yet running.
pub struct MultiRobot {
    loops: Vec<RobotLoop>,
}

impl MultiRobot {
    /// Creates one gz-transport node, a [`RobotDriverGazebo`] per robot on it, a
    /// [`RobotDriverComposite`] per composite over those drivers (reading their caches), and
    /// the topics of each on `node`. `shutdown` stops every loop.
    ///
    /// # Errors
    /// The gz-transport node cannot be created; a driver or topic is refused.
    pub fn new(
        node: &Node,
        parameters: &MultiRobotParameters,
        shutdown: &ShutdownToken,
    ) -> Result<Self, BridgeError> {
        let gz = gz_transport::Node::with_options(gz_transport::NodeOptions {
            partition: parameters.gz.partition.clone(),
            namespace: None,
            msgs_prefix: parameters.gz.msgs_prefix,
            ..Default::default()
        })
        .map_err(|source| DriverError::Node(source.into()))?;
        let mut drivers: HashMap<&str, Arc<RobotDriverGazebo>> = HashMap::new();
        let mut loops = Vec::new();
        for (name, robot) in &parameters.robots {
            let of_this_robot = |error| in_robot(name, error);
            let driver = Arc::new(
                RobotDriverGazebo::new(robot.driver.clone(), Some(gz.clone()))
                    .map_err(|error| of_this_robot(error.into()))?,
            );
            drivers.insert(name, driver.clone());
            loops.push(RobotLoop {
                name: name.clone(),
                bridge: RobotDriverRos::new(
                    node,
                    driver as Arc<dyn RobotDriver>,
                    robot.ros.clone(),
                    shutdown.clone(),
                )
                .map_err(of_this_robot)?,
            });
        }
        for composite in &parameters.composites {
            let parts = composite
                .robots
                .iter()
                .map(|name| {
                    let driver: Arc<dyn RobotDriver> = drivers[name.as_str()].clone();
                    CompositePart::new(parameters.robot_name(name), driver)
                })
                .collect();
            let of_this_robot = |error| in_robot(&composite.name, error);
            let driver = RobotDriverComposite::new(parts, PartOwnership::Shared)
                .map_err(|error| of_this_robot(error.into()))?;
            loops.push(RobotLoop {
                name: composite.name.clone(),
                bridge: RobotDriverRos::new(
                    node,
                    Arc::new(driver) as Arc<dyn RobotDriver>,
                    composite.ros.clone(),
                    shutdown.clone(),
                )
                .map_err(of_this_robot)?,
            });
        }
        Ok(MultiRobot { loops })
    }

    /// The loops: robots in `robots` order, then composites in `composites` order. Run each
    /// [`control_loop`](RobotDriverRos::control_loop) on its own thread.
    pub fn loops(&self) -> &[RobotLoop] {
        &self.loops
    }
}

/// `error` as the failure of robot (or composite) group `robot`.
fn in_robot(robot: &str, error: BridgeError) -> BridgeError {
    BridgeError::InRobot {
        robot: robot.to_string(),
        error: Box::new(error),
    }
}
