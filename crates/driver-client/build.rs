//! Links the crate's tests as a binary that uses listener-subscription must be linked (the
//! rcl node wrappers, the ROS wheels' libraries).

fn main() -> Result<(), ros_link::Error> {
    ros_link::emit_listener_subscription_link_args();
    ros_link::emit_link_args()
}
