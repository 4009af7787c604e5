#!/usr/bin/env python3
"""sas_robot_driver_ros_gazebo.py: the robot driver bridge started from Python (the launch
file's `implementation:=python`). Same parameters, topics and behaviour as the node
`sas_robot_driver_ros_gazebo_node`: it runs the same Rust driver and control loop, through
the module `sas_robot_driver_gazebo`, with the GIL released for the whole loop.

    sas_robot_driver_ros_gazebo.py --ros-args -r __node:=ur3e_1 --params-file config/config.yaml

Parameters are read as the original script read them, through an rclpy node named by the
launch file (`__node:=<name>`); the loop then runs on a node of the same name inside the
module. Exit status: 0 after Ctrl-C or SIGTERM (also while waiting for Gazebo), 2 for a
missing or invalid parameter, 1 for any other error, each with a message saying what failed.
"""

import sys

import rclpy
from rclpy.exceptions import (
    InvalidParameterTypeException,
    InvalidParameterValueException,
    ParameterUninitializedException,
)
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.signals import SignalHandlerOptions

import sas_robot_driver_gazebo as sas

# The original's rclpy node name; the launch file's `name` remaps it.
NODE_NAME = 'sas_robot_driver_ros_gazebo_py'
PROGRAM = 'sas_robot_driver_ros_gazebo.py'
# sas_common's spelling of an empty list in a params file.
EMPTY_LIST = ['EMPTY_LIST']

# (name, type, default or None when mandatory, what it must be): the original's five, then
# the node's options with the defaults that keep the original's behaviour.
PARAMETERS = [
    ('joint_names', Parameter.Type.STRING_ARRAY, None,
     'a string array, e.g. ["shoulder_pan_joint", "elbow_joint"]'),
    ('joint_positions_topic_prefix', Parameter.Type.STRING, None,
     'a string, e.g. "/model/ur3e/joint/"'),
    ('joint_states_topic', Parameter.Type.STRING, None,
     'a string, e.g. "/world/ur3e_world/model/ur3e/joint_state"'),
    ('robot_name', Parameter.Type.STRING, None, 'a string, e.g. "ur3e_1"'),
    ('thread_sampling_time_sec', Parameter.Type.DOUBLE, 0.002,
     'a double in seconds, e.g. 0.002 (write 1.0, not 1)'),
    ('gz_msgs_prefix', Parameter.Type.STRING, 'gz.msgs.',
     'a string, "gz.msgs." or "ignition.msgs."'),
    ('gz_partition', Parameter.Type.STRING, '',
     'a string (empty: from GZ_PARTITION/IGN_PARTITION)'),
    ('joint_states_stamp', Parameter.Type.STRING, 'node_clock',
     'a string, "node_clock" or "gazebo"'),
    ('target_limit_policy', Parameter.Type.STRING, 'clamp', 'a string, "clamp" or "refuse"'),
    ('target_keepalive_sec', Parameter.Type.DOUBLE, 0.0, 'a double in seconds, e.g. 0.0 or 0.1'),
    ('initialize_timeout_sec', Parameter.Type.DOUBLE, 0.0,
     'a double in seconds, e.g. 0.0 or 30.0'),
    ('joint_states_publishing', Parameter.Type.STRING, 'on_arrival',
     'a string, "on_arrival" or "grid"'),
    ('target_forwarding', Parameter.Type.STRING, 'periodic', 'a string, "periodic" or "on_arrival"'),
    ('state_timeout_sec', Parameter.Type.DOUBLE, 0.0, 'a double in seconds, e.g. 0.0 or 0.05'),
    ('stale_joint_states', Parameter.Type.STRING, 'withhold', 'a string, "withhold" or "republish"'),
    ('realtime_priority', Parameter.Type.INTEGER, 0,
     'an integer, 0 (off) or a SCHED_FIFO priority 1..99'),
]


class ParameterError(Exception):
    """A parameter that is missing, mistyped or invalid; the message names it."""


def read_parameters(node: Node) -> dict:
    """Declares and reads every parameter of PARAMETERS on `node`."""
    values = {}
    for name, kind, default, expected in PARAMETERS:
        try:
            node.declare_parameter(name, kind if default is None else default)
            values[name] = node.get_parameter(name).value
        except ParameterUninitializedException:
            raise ParameterError(
                f'parameter {name!r} is missing: node {node.get_fully_qualified_name()} needs '
                f'{expected}. Set it in the params file block keyed by the node name '
                f'({node.get_name()}: ros__parameters: ...) or with '
                f'`--ros-args -p {name}:=<value>`.') from None
        except (InvalidParameterTypeException, InvalidParameterValueException) as error:
            raise ParameterError(f'parameter {name!r} must be {expected}: {error}') from None
    if values['joint_names'] == EMPTY_LIST:
        values['joint_names'] = []
    return values


def seconds_or_none(value: float) -> float | None:
    """The node's convention for optional durations: 0 means none."""
    return value if value != 0.0 else None


def build(parameters: dict, signaler: sas.ShutdownSignaler, args: list[str]) -> sas.RobotDriverROS:
    """The driver and its control loop, configured as the node configures them."""
    configuration = sas.RobotDriverGazeboConfiguration(
        parameters['joint_names'],
        parameters['joint_positions_topic_prefix'],
        parameters['joint_states_topic'],
        msgs_prefix=parameters['gz_msgs_prefix'],
        partition=parameters['gz_partition'] or None,
        limit_policy=parameters['target_limit_policy'],
        initialize_timeout_sec=seconds_or_none(parameters['initialize_timeout_sec']),
        forward_keepalive_sec=seconds_or_none(parameters['target_keepalive_sec']),
    )
    driver = sas.RobotDriverGazebo(signaler, configuration)
    ros_configuration = sas.RobotDriverROSConfiguration(
        parameters['robot_name'], parameters['thread_sampling_time_sec'],
        joint_states_stamp=parameters['joint_states_stamp'],
        joint_states_publishing=parameters['joint_states_publishing'],
        target_forwarding=parameters['target_forwarding'],
        state_timeout_sec=seconds_or_none(parameters['state_timeout_sec']),
        stale_joint_states=parameters['stale_joint_states'],
        realtime_priority=parameters['realtime_priority'] or None)
    return sas.RobotDriverROS(driver, ros_configuration, signaler, node_name=NODE_NAME,
                              args=args)


def fail(message: str, status: int) -> int:
    print(f'{PROGRAM}: error: {message}', file=sys.stderr, flush=True)
    return status


def main(args: list[str]) -> int:
    # rclpy only reads the parameters: no signal handlers of its own, and it is shut down
    # before the loop starts (the loop installs what it needs for SIGINT and SIGTERM).
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    except Exception as error:  # noqa: BLE001 - rclpy reports bad --ros-args this way
        return fail(f'cannot initialise ROS (check --ros-args): {error}', 2)
    try:
        node = Node(NODE_NAME)
        print(f'[{node.get_name()}] ::Loading parameters from parameter server.', flush=True)
        parameters = read_parameters(node)
        print(f'[{node.get_name()}] ::Parameters OK.', flush=True)
        node.destroy_node()
    except ParameterError as error:
        return fail(str(error), 2)
    except KeyboardInterrupt:
        return 0
    finally:
        rclpy.try_shutdown()

    signaler = sas.ShutdownSignaler()
    try:
        bridge = build(parameters, signaler, args)
    except ValueError as error:
        return fail(str(error), 2)
    except (RuntimeError, TypeError) as error:
        return fail(str(error), 1)
    except KeyboardInterrupt:
        return 0
    try:
        statistics = bridge.control_loop()
    except (RuntimeError, ValueError, TimeoutError) as error:
        return fail(f'::Exception caught::{error}', 1)
    print(f'[{bridge.node_name}] ::Stopped: {statistics}', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
