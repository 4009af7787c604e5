"""The bridge over an authenticated transport (PLAIN: GZ_TRANSPORT_USERNAME/PASSWORD on both
sides): it drives the secured simulator as an unsecured one; with another password it reads
nothing, publishes no state, and says why."""

from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from conftest import CONFIG, binary

START_S = 30
MOTION_S = 30
SECRET = {'GZ_TRANSPORT_USERNAME': 'sas', 'GZ_TRANSPORT_PASSWORD': 's3cret'}


def bridge(world, **env):
    node = binary('BRIDGE_NODE_BIN', 'sas_robot_driver_ros_gazebo_node')
    return world.start([node, '--ros-args', '-r', '__node:=ur3e_1', '--params-file', CONFIG],
                       **env)


def test_a_secured_bridge_drives_a_secured_simulator(world):
    world.sim(**SECRET)
    node = bridge(world, **SECRET)
    states = world.subscribe(JointState, '/ur3e_1/get/joint_states')
    world.wait_for(lambda: states, START_S, 'joint states over the secured transport')
    target = list(states[-1].position)
    target[2] += 0.2
    world.publisher(Float64MultiArray, '/ur3e_1/set/target_joint_positions').publish(
        Float64MultiArray(data=target))
    world.wait_for(lambda: abs(states[-1].position[2] - target[2]) < 1e-6, MOTION_S,
                   'elbow_joint at its target, commanded over the secured transport')
    assert node.alive(), node.output()
    assert 's3cret' not in node.output(), 'the password is never logged'


def test_a_bridge_with_another_password_reads_nothing_and_says_why(world):
    world.sim(**SECRET)
    node = bridge(world, GZ_TRANSPORT_USERNAME='sas', GZ_TRANSPORT_PASSWORD='guess')
    states = world.subscribe(JointState, '/ur3e_1/get/joint_states')
    diagnostics = world.subscribe(DiagnosticArray, '/diagnostics')
    node.wait_output('refused our user name and password', START_S)
    # One line naming the peer and the topic it refused us, repeated only at each retry.
    refusals = [line for line in node.output().splitlines()
                if 'refused our subscription to' in line]
    assert refusals and 'joint_state' in refusals[0] and 'tcp://' in refusals[0], refusals

    def refused() -> int:
        values = [int(kv.value) for array in diagnostics for status in array.status
                  for kv in status.values if kv.key == 'gz_connections_refused']
        return max(values, default=0)
    world.wait_for(lambda: refused() >= 1, 10, 'the refusal counted on /diagnostics')
    world.spin_for(2.0)
    assert not states, 'no state is published from a transport that refused us'
    assert 'guess' not in node.output() and 's3cret' not in node.output()
    assert node.alive(), node.output()
