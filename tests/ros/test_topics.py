"""Round trips of every test_msgs message, JointState and Float64MultiArray, rclpy <-> rclrs.

For each type the rclrs peer (generated Rust types through rclrs):
- checks what rclpy publishes on `to_rs` against its own, independently built pattern,
  then echoes the received (idiomatic Rust) message back on `echo`;
- publishes its pattern on `from_rs` and `T::default()` (IDL defaults via the C
  initialiser) on `default_from_rs`.
rclpy checks every field of all three against its pattern and its own defaults.
"""

import pytest
from rclpy.qos import QoSProfile, ReliabilityPolicy

import pattern

TYPES = [
    'test_msgs/msg/BasicTypes',
    'test_msgs/msg/Arrays',
    'test_msgs/msg/BoundedSequences',
    'test_msgs/msg/UnboundedSequences',
    'test_msgs/msg/BoundedPlainSequences',
    'test_msgs/msg/Strings',
    'test_msgs/msg/Nested',
    'test_msgs/msg/Constants',
    'test_msgs/msg/Empty',
    'test_msgs/msg/Defaults',
    'test_msgs/msg/MultiNested',
    'test_msgs/msg/WStrings',
    'test_msgs/msg/Builtins',
    'sensor_msgs/msg/JointState',
    'std_msgs/msg/Float64MultiArray',
]

DISCOVERY_S = 20
EXCHANGE_S = 30


def carries_data(value) -> bool:
    if isinstance(value, dict):
        return any(carries_data(v) for v in value.values())
    if isinstance(value, list):
        return any(carries_data(v) for v in value)
    return True


def assert_same(got, expected, what):
    diff = pattern.differences(pattern.plain(got), pattern.plain(expected))
    assert not diff, f'{what} differs:\n  ' + '\n  '.join(diff[:20])


@pytest.mark.parametrize('type_name', TYPES)
def test_round_trip(ros, type_name):
    cls = pattern.type_by_name(type_name)
    seed = 1000 + TYPES.index(type_name)
    expected = pattern.message(cls, seed)
    default = cls()
    # The test is only as strong as its values: each field that carries data (not an
    # array of empty messages) must differ from its default.
    for field in cls.get_fields_and_field_types():
        value = pattern.plain(getattr(expected, field))
        if carries_data(value):
            assert value != pattern.plain(getattr(default, field)), field

    peer = ros.peer('topic', '--type', type_name, '--seed', seed)
    node = ros.node('py_topic_peer')
    qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    received = {}

    def keep(topic):
        return lambda msg: received.setdefault(topic, msg)

    publisher = node.create_publisher(cls, 'to_rs', qos)
    subscriptions = [node.create_subscription(cls, t, keep(t), qos)
                     for t in ('echo', 'from_rs', 'default_from_rs')]
    ros.wait_for(lambda: publisher.get_subscription_count() > 0
                 and all(s.get_publisher_count() > 0 for s in subscriptions),
                 DISCOVERY_S, f'discovery with the rclrs peer ({type_name})')

    def done():
        if peer.proc.poll() is not None or peer.count('MISMATCH') > 0:
            return True
        publisher.publish(expected)
        return peer.count('match to_rs') > 0 and len(received) == 3
    ros.wait_for(done, EXCHANGE_S, f'the exchange with the rclrs peer ({type_name}):\n'
                 f'{peer.output()}\nreceived: {sorted(received)}')

    assert 'MISMATCH' not in peer.output(), peer.output()
    assert peer.proc.poll() is None, f'rclrs peer exited:\n{peer.output()}'
    assert_same(received['echo'], expected, 'rclpy -> rclrs -> rclpy echo')
    assert_same(received['from_rs'], expected, 'the rclrs-built pattern')
    assert_same(received['default_from_rs'], default, 'the rclrs default')
