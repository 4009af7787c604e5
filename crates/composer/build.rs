fn main() -> Result<(), ros_link::Error> {
    ros_link::emit_link_args()
}
