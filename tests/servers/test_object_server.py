"""sas_object_server_gazebo_node against gz-joint-sim's entity poses (Pose_V) and set_pose
service, used as a client uses it (rclpy PoseStamped), judged by what Gazebo reports."""

import math
import signal
import time

from geometry_msgs.msg import PoseStamped
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

START_S = 30
# Deep enough that none of the node's poses is lost while this process is busy.
DEEP = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                  reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)


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
    server.wait_output('frame_x/set/pose: refused a pose (1 refused so far), nothing sent to '
                       'Gazebo: the position', START_S)
    setter.publish(pose(1.0, 0.0, 0.0, (0.0, 0.0, 0.0, 0.0)))
    server.wait_output('refused a pose (2 refused so far)', START_S)
    assert 'is not a unit quaternion' in server.output()
    setter.publish(pose(1.0, 0.0, 0.0, (0.0, 0.0, 0.5, 0.5)))
    server.wait_output('refused a pose (3 refused so far)', START_S)
    # Then a good one goes through: the refused ones were not queued before it.
    setter.publish(pose(0.7, 0.0, 0.2))
    world.wait_for(lambda: close_to(position(frame_x[-1]), (0.7, 0.0, 0.2)), START_S,
                   'the good pose at Gazebo')
    assert all(not math.isnan(position(m)[0]) and position(m)[0] != 1.0 for m in frame_x)
    # Nothing of the refused ones reached Gazebo: the node's count when it stops.
    server.signal(signal.SIGINT)
    assert server.wait_exit(START_S) == 0, server.output()
    assert '1 sent to Gazebo, 3 refused here, 0 refused by Gazebo' in server.output(), \
        server.output()


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
    # It says that it waits for Gazebo, and says it again a few seconds later.
    waiting = "waiting for Gazebo's poses on /world/ur3e_world/pose/info"
    server.wait_output(waiting, START_S, count=2)
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
    # Heard: no more waiting notes (the next would be due within 5 s).
    notes = server.count(waiting)
    world.spin_for(6.0)
    assert server.count(waiting) == notes, server.output()


POSE_RATE = 10.0  # gz-joint-sim's --pose-rate: the period is 0.1 s


def test_a_pose_set_is_reported_on_get_pose_within_two_pose_periods(world):
    """From the client's publication on set/pose to the node's publication of Gazebo's report
    of the new pose on get/pose (the DDS source timestamp: the node's own instant), at most
    two periods of Gazebo's pose topic."""
    world.sim('--pose-rate', str(POSE_RATE))
    world.object_server()
    reports = []
    world.node.create_subscription(
        PoseStamped, '/frame_x/get/pose',
        lambda m, info: reports.append((info['source_timestamp'] * 1e-9, position(m))),
        DEEP)
    world.wait_for(lambda: reports, START_S, "frame_x's pose")
    setter = world.publisher(PoseStamped, '/frame_x/set/pose')
    latencies = []
    for k in range(5):
        target = (0.4 + 0.05 * k, 0.1, 0.3)
        seen = len(reports)
        sent = time.time()
        setter.publish(pose(*target))
        world.wait_for(lambda: any(close_to(p, target) for _, p in reports[seen:]), START_S,
                       f'frame_x reported at {target}')
        reported = next(t for t, p in reports[seen:] if close_to(p, target))
        latencies.append(reported - sent)
    print('set -> get latencies (ms): ' + ', '.join(f'{1e3 * t:.1f}' for t in latencies))
    assert max(latencies) < 2 / POSE_RATE, latencies
