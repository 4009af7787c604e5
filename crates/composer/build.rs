fn main() -> Result<(), ros_link::Error> {
    ros_link::emit_listener_subscription_link_args();
    ros_link::emit_link_args()
}
