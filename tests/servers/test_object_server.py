"""sas_object_server_gazebo_node against gz-joint-sim's entity poses (Pose_V) and set_pose
service, used as a client uses it (rclpy PoseStamped), judged by what Gazebo reports."""

import math
import time

from geometry_msgs.msg import PoseStamped

from conftest import DEPTH_ONE

START_S = 30


def pose(x, y, z, q=(0.0, 0.0, 0.0, 1.0)) -> PoseStamped:
    message = PoseStamped()
    message.header.frame_id = 'world'
    message.pose.position.x, message.pose.position.y, message.pose.position.z = x, y, z
    (message.pose.orientation.x, message.pose.orientation.y,
     message.pose.orientation.z, message.pose.orientation.w) = q
    return message


def position(message: PoseStamped):
    p = message.pose.position
    return (p.x, p.y, p.z)


def close_to(a, b, tolerance=1e-6) -> bool:
    return all(abs(x - y) <= tolerance for x, y in zip(a, b))


def collect(world, received: list, seconds: float) -> list:
    start = len(received)
    world.spin_for(seconds)
    return received[start:]


def test_the_frames_poses_come_from_gazebo_and_set_pose_moves_them(world):
    world.sim()
    server = world.object_server()
    frame_x = world.subscribe(PoseStamped, '/frame_x/get/pose')
    frame_xd = world.subscribe(PoseStamped, '/frame_xd/get/pose')
    world.wait_for(lambda: frame_x and frame_xd, START_S, 'the frames\' poses')
    # The SDF's poses (sdf/ur3e_world.sdf), in the world frame.
    assert close_to(position(frame_x[-1]), (0.3, 0.2, 0.3)), position(frame_x[-1])
    assert close_to(position(frame_xd[-1]), (0.3, -0.2, 0.3)), position(frame_xd[-1])
    assert frame_x[-1].header.frame_id == 'world'

    # Unchanged, a pose comes with the 1 s heartbeat, not with every Gazebo message.
    window = collect(world, frame_x, 3.0)
    assert 1 <= len(window) <= 5, f'{len(window)} unchanged poses in 3 s'

    # A quarter turn about z, not quite unit length: normalised, then set.
    s = math.sqrt(0.5)
    world.publisher(PoseStamped, '/frame_x/set/pose').publish(
        pose(0.5, 0.1, 0.4, (0.0, 0.0, s * 1.001, s * 1.001)))
    world.wait_for(lambda: close_to(position(frame_x[-1]), (0.5, 0.1, 0.4)), START_S,
                   'frame_x at its new pose, as Gazebo reports it')
    q = frame_x[-1].pose.orientation
    assert close_to((q.x, q.y, q.z, q.w), (0.0, 0.0, s, s), 1e-6), (q.x, q.y, q.z, q.w)
    assert close_to(position(frame_xd[-1]), (0.3, -0.2, 0.3)), 'frame_xd did not move'
    assert server.alive(), server.output()


def test_a_pose_that_is_not_finite_or_not_a_rotation_is_refused_and_gazebo_is_untouched(world):
    world.sim()
    server = world.object_server()
    frame_x = world.subscribe(PoseStamped, '/frame_x/get/pose')
    world.wait_for(lambda: frame_x, START_S, 'frame_x\'s pose')
    setter = world.publisher(PoseStamped, '/frame_x/set/pose')
    setter.publish(pose(float('nan'), 0.0, 0.0))
    server.wait_output('frame_x/set/pose: refused a pose: the position', START_S)
    setter.publish(pose(1.0, 0.0, 0.0, (0.0, 0.0, 0.0, 0.0)))
    server.wait_output('is not a unit quaternion', START_S)
    # Then a good one goes through: the refused ones were not queued before it.
    setter.publish(pose(0.7, 0.0, 0.2))
    world.wait_for(lambda: close_to(position(frame_x[-1]), (0.7, 0.0, 0.2)), START_S,
                   'the good pose at Gazebo')
    assert all(not math.isnan(position(m)[0]) and position(m)[0] != 1.0 for m in frame_x)


def test_an_entity_gazebo_does_not_know_is_reported_and_the_others_are_served(world):
    world.sim()
    server = world.object_server('entity_names:=[frame_x, no_such_frame]')
    frame_x = world.subscribe(PoseStamped, '/frame_x/get/pose')
    world.wait_for(lambda: frame_x, START_S, 'frame_x\'s pose')
    server.wait_output('reports no pose of no_such_frame', START_S)
    world.publisher(PoseStamped, '/no_such_frame/set/pose').publish(pose(1.0, 1.0, 1.0))
    server.wait_output('no_such_frame/set/pose: Gazebo\'s /world/ur3e_world/set_pose refused',
                       START_S)
    assert server.alive(), server.output()


def test_without_gazebo_a_set_pose_is_dropped_saying_why_and_the_node_keeps_serving(world):
    server = world.object_server('gazebo_timeout_sec:=0.5')
    server.wait_output('Serving 2 entities', START_S)
    setter = world.publisher(PoseStamped, '/frame_x/set/pose')
    setter.publish(pose(0.5, 0.0, 0.5))
    server.wait_output('was not found within', START_S)
    frame_x = world.subscribe(PoseStamped, '/frame_x/get/pose')
    world.spin_for(1.0)
    assert not frame_x, 'no pose is published while Gazebo reports none'
    # Gazebo comes: poses flow, and a new set_pose goes through.
    world.sim()
    world.wait_for(lambda: frame_x, START_S, 'frame_x\'s pose once Gazebo runs')
    setter.publish(pose(0.6, 0.0, 0.5))
    world.wait_for(lambda: close_to(position(frame_x[-1]), (0.6, 0.0, 0.5)), START_S,
                   'the pose set once Gazebo runs')
