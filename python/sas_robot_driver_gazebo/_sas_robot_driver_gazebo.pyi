"""Type stubs of the compiled part of ``sas_robot_driver_gazebo``.

Every method that can wait releases the GIL; no thread of the extension ever needs it.
Errors: ``ValueError`` for bad input (configuration, targets, option values), ``RuntimeError``
for calls the driver's state does not allow, transport failures and cancelled waits,
``TimeoutError`` when ``initialize()`` times out. Messages follow the original C++ driver's.
"""

from collections.abc import Sequence
from typing import Literal, Self, TypedDict, final, overload

import numpy as np
import numpy.typing as npt

__all__ = [
    "RobotDriverGazebo",
    "RobotDriverGazeboConfiguration",
    "RobotDriverROS",
    "RobotDriverROSConfiguration",
    "ShutdownSignaler",
    "run_node",
]

_FloatArray = npt.NDArray[np.float64]

class _JointStateSnapshot(TypedDict):
    """The latest Gazebo message as cached (``RobotDriverGazebo.snapshot()``)."""

    positions: _FloatArray
    velocities: _FloatArray
    efforts: _FloatArray
    sequence: int
    """Messages received so far; 0 before the first one (values are then NaN)."""
    sim_time_sec: float | None
    """Gazebo's simulation time of the message, if it had a stamp."""
    age_sec: float | None
    """Seconds since the message reached the driver."""

class _LoopStatistics(TypedDict):
    """What ``RobotDriverROS.control_loop()`` did."""

    periods: int
    overruns: int
    """Deadlines skipped because a period ended after the next one."""
    max_lateness_sec: float
    """Largest delay between a deadline and the loop waking for it."""
    targets_accepted: int
    targets_refused: int
    targets_clamped: int
    """Accepted with values clamped into the joint limits (``limit_policy="clamp"``)."""

@final
class RobotDriverGazeboConfiguration:
    """The configuration of a ``RobotDriverGazebo``. Fields can be given to the constructor or
    set afterwards, as with the original's ``RobotDriverGazeboConfiguration()``; the driver
    checks the whole configuration when it is built.
    """

    joint_names: list[str]
    """Joints, in the order of every array the driver takes or returns."""
    joint_positions_topic_prefix: str
    """Command topic prefix: joint ``j`` is commanded on ``prefix + j + "/0/cmd_pos"``."""
    joint_states_topic: str
    """The JointStatePublisher's ``Model`` topic, used verbatim."""
    msgs_prefix: Literal["gz.msgs.", "ignition.msgs."]
    """Message type prefix of the Gazebo talked to (Harmonic / Fortress)."""
    partition: str | None
    """gz-transport partition; None takes GZ_PARTITION, then IGN_PARTITION."""
    limit_policy: Literal["clamp", "refuse"]
    """Targets outside the joint limits: stored clamped (with a warning), or refused."""
    initialize_timeout_sec: float | None
    """Seconds ``initialize()`` waits for every joint; None waits until cancelled."""
    forward_keepalive_sec: float | None
    """None: the control loop re-sends the target every period (as the original); a number:
    only a changed target, and an unchanged one after this many seconds."""

    def __new__(
        cls,
        joint_names: Sequence[str] = ...,
        joint_positions_topic_prefix: str = "",
        joint_states_topic: str = "",
        *,
        msgs_prefix: Literal["gz.msgs.", "ignition.msgs."] = "gz.msgs.",
        partition: str | None = None,
        limit_policy: Literal["clamp", "refuse"] = "clamp",
        initialize_timeout_sec: float | None = None,
        forward_keepalive_sec: float | None = None,
    ) -> Self:
        """Raises:
        ValueError: an option value that is not allowed (the fields themselves are checked
            when a driver is built).
        """

@final
class ShutdownSignaler:
    """A shutdown flag shared by whoever holds it (the original's ``sas_core.ShutdownSignaler``).
    Once ``shutdown()`` is called, a waiting ``initialize()`` and a control loop given it stop.
    """

    def __new__(cls) -> Self: ...
    def should_shutdown(self) -> bool:
        """True once ``shutdown()`` was called."""

    def shutdown(self) -> None:
        """Asks everything watching this signaler to stop. Idempotent."""

@final
class RobotDriverGazebo:
    """A robot simulated in Gazebo, seen through gz-transport: joint states in (cached on the
    transport's own thread), position targets out (one JointPositionController topic per joint).

    Lifecycle: ``connect()`` → ``initialize()`` → getters / targets → ``deinitialize()`` →
    ``disconnect()``; every method is safe in every state (a call the state does not allow
    raises RuntimeError).
    """

    @overload
    def __new__(
        cls,
        configuration: RobotDriverGazeboConfiguration,
        /,
        *,
        shutdown_signaler: ShutdownSignaler | None = None,
    ) -> Self: ...
    @overload
    def __new__(
        cls, shutdown_signaler: ShutdownSignaler, configuration: RobotDriverGazeboConfiguration, /
    ) -> Self: ...
    @overload
    def __new__(
        cls,
        *,
        configuration: RobotDriverGazeboConfiguration,
        shutdown_signaler: ShutdownSignaler | None = None,
    ) -> Self:
        """``RobotDriverGazebo(configuration)`` or, as the original,
        ``RobotDriverGazebo(shutdown_signaler, configuration)``.

        Raises:
            TypeError: arguments of the wrong kind.
            ValueError: an invalid configuration (e.g. ``RobotDriverGazebo: joint_names is
                empty.``).
        """

    @property
    def configuration(self) -> RobotDriverGazeboConfiguration:
        """A copy of the configuration the driver was built with."""

    def connect(self) -> None:
        """Advertises the joint command topics and subscribes to the joint states. Needs no
        running Gazebo. Does nothing if already connected.

        Raises:
            RuntimeError: a topic the transport refuses.
        """

    def initialize(self) -> None:
        """Waits, with the GIL released, until every joint was seen with its limits, then
        captures the limits. Does nothing if already initialized.

        Raises:
            RuntimeError: not connected; the shutdown signaler fired (``…shutdown while
                waiting for joint states on [<topic>].``); ``disconnect()`` was called.
            TimeoutError: ``initialize_timeout_sec`` passed; the message names the joints
                still missing.
            KeyboardInterrupt: Ctrl-C while waiting.
        """

    def deinitialize(self) -> None:
        """Refuses getters and targets again; Gazebo keeps its last command."""

    def disconnect(self) -> None:
        """Unsubscribes and unadvertises; a waiting ``initialize()`` fails. Idempotent."""

    def get_joint_positions(self) -> _FloatArray:
        """Latest joint positions (rad or m), 1-D float64 in ``joint_names`` order.

        Raises:
            RuntimeError: ``RobotDriverGazebo: joint positions not initialized.``
        """

    def get_joint_velocities(self) -> _FloatArray:
        """Latest joint velocities, 1-D float64.

        Raises:
            RuntimeError: ``RobotDriverGazebo: joint velocities not initialized.``
        """

    def get_joint_torques(self) -> _FloatArray:
        """Latest joint efforts (Gazebo's ``axis1.force``), 1-D float64.

        Raises:
            RuntimeError: ``RobotDriverGazebo: joint torques not initialized.``
        """

    def get_joint_limits(self) -> tuple[_FloatArray, _FloatArray]:
        """``(lower, upper)`` limits captured by ``initialize()``; ±inf for unbounded joints.

        Raises:
            RuntimeError: ``RobotDriverGazebo: joint limits not initialized.``
        """

    def snapshot(self) -> _JointStateSnapshot:
        """The latest Gazebo message as cached, in any state, with its age."""

    def set_target_joint_positions(
        self, target_joint_positions_rad: npt.ArrayLike
    ) -> None:
        """Checks the target and sends it to Gazebo at once; a running control loop keeps
        re-sending it. Accepts a numpy array or any sequence of numbers.

        Raises:
            ValueError: not a 1-D sequence of numbers; wrong length (``…expected 6 values,
                got 5.``); a NaN or infinite value; a value outside the limits under
                ``limit_policy="refuse"``. The previous target stays in force.
            RuntimeError: not initialized.
        """

@final
class RobotDriverROSConfiguration:
    """The ROS side's configuration (the original's ``RobotDriverROSConfiguration``)."""

    robot_driver_provider_prefix: str
    """Prefix of every topic: ``<prefix>/get/joint_states``, … (the robot name)."""
    thread_sampling_time_sec: float
    """Period of the control loop in seconds (0.002: 500 Hz)."""
    joint_states_stamp: Literal["node_clock", "gazebo"]
    """Stamp of ``get/joint_states``: publication time (as the original) or Gazebo's
    simulation time of the state."""
    @property
    def joint_states_publishing(self) -> Literal["on_arrival", "grid"]:
        """``on_arrival``: published as soon as Gazebo's message is in, at most once per
        period; ``grid``: every period (as the original)."""
    @property
    def target_forwarding(self) -> Literal["on_arrival", "periodic"]:
        """``on_arrival``: sent the moment it arrives, re-sent after ``target_keepalive_sec``
        (when the driver's ``forward_keepalive_sec`` lets it send on change only);
        ``periodic``: the latest target every period (as the original)."""
    @property
    def target_keepalive_sec(self) -> float:
        """Seconds after which an unchanged target is sent again (``on_arrival``); 0: never."""
    @property
    def joint_limits_publishing(self) -> Literal["on_change", "periodic"]:
        """``on_change``: ``get/joint_positions_min|max`` at initialization, when a subscriber
        matches and every ``joint_limits_heartbeat_sec``; ``periodic``: every period (as the
        original)."""
    @property
    def joint_limits_heartbeat_sec(self) -> float:
        """Seconds after which the limits are published again (``on_change``); 0: never."""
    @property
    def state_timeout_sec(self) -> float | None:
        """Age past which the state is stale; None: ten of Gazebo's message intervals, at least 50 ms."""
    @property
    def stale_joint_states(self) -> Literal["withhold", "republish"]:
        """Grid publishing while stale: nothing, or the last state (as the original)."""
    @property
    def realtime_priority(self) -> int | None:
        """SCHED_FIFO priority (1..99) of the loop and receive threads; None: normal."""

    def __new__(
        cls,
        robot_driver_provider_prefix: str = "",
        thread_sampling_time_sec: float = 0.002,
        *,
        joint_states_stamp: Literal["node_clock", "gazebo"] = "node_clock",
        joint_states_publishing: Literal["on_arrival", "grid"] = "on_arrival",
        target_forwarding: Literal["on_arrival", "periodic"] = "on_arrival",
        target_keepalive_sec: float = 1.0,
        joint_limits_publishing: Literal["on_change", "periodic"] = "on_change",
        joint_limits_heartbeat_sec: float = 1.0,
        state_timeout_sec: float | None = None,
        stale_joint_states: Literal["withhold", "republish"] = "withhold",
        realtime_priority: int | None = None,
    ) -> Self:
        """Raises:
        ValueError: a period that is not a positive number of seconds; a keepalive or
        heartbeat that is not a non-negative one; an unknown stamp or mode; a priority
        outside 1..99.
        """

@final
class RobotDriverROS:
    """The original's ``RobotDriverROS``: the SmartArmStack topic surface of one robot
    (``<prefix>/get/joint_states``, ``get/joint_positions_min|max``, ``get/home_states``,
    ``set/target_joint_positions``, …), created at once on an rclrs node that lives inside
    the extension (its own ROS context, so rclpy can run beside it), and the control loop
    that serves it.
    """

    def __new__(
        cls,
        driver: RobotDriverGazebo,
        configuration: RobotDriverROSConfiguration,
        shutdown_signaler: ShutdownSignaler | None = None,
        *,
        node_name: str = "sas_robot_driver_ros_gazebo",
        args: Sequence[str] | None = None,
    ) -> Self:
        """Creates the ROS context from ``args`` (default ``sys.argv``; ``--ros-args`` applies,
        e.g. ``-r __node:=ur3e_1``), the node and its topics.

        Raises:
            ValueError: invalid ``--ros-args``; an empty or invalid prefix.
            RuntimeError: the node could not be created.
        """

    @property
    def node_name(self) -> str:
        """The node's fully qualified name after remapping, e.g. ``"/ur3e_1"``."""

    def control_loop(self) -> _LoopStatistics:
        """Connects and initializes the driver, then every period forwards the latest target
        to Gazebo and publishes the joint states and limits, until ``shutdown()`` (from any
        thread), the shutdown signaler, ``<prefix>/set/shutdown`` with ``data: true``, or
        SIGINT/SIGTERM/SIGHUP (handled as the node does while the loop runs, Python's and
        rclpy's handlers restored after). Always deinitializes and disconnects the driver
        before returning; its log lines go to the node's logger meanwhile. The GIL is released
        throughout. The robot's status goes to ``/diagnostics`` once a second from
        construction on.

        Raises:
            RuntimeError: already running; ``connect()`` failed; the watchdog armed on
                ``<prefix>/set/watchdog_trigger`` faulted (the robot then holds its last
                measured position).
            TimeoutError: ``initialize_timeout_sec`` passed without every joint seen.
        """

    def shutdown(self) -> None:
        """Ends a running ``control_loop()`` within one period. Permanent."""

    def should_shutdown(self) -> bool:
        """True once the loop was asked to stop."""

def run_node(
    args: Sequence[str] | None = None,
    *,
    node_name: str = "sas_robot_driver_ros_gazebo_py",
    program: str = "sas_robot_driver_ros_gazebo.py",
    ignore_signals_after_stop: bool = False,
) -> int:
    """Runs the node ``sas_robot_driver_ros_gazebo_node`` in this process: ROS from ``args``
    (default ``sys.argv``; ``--ros-args`` apply), the node's parameters (declared as the
    node declares them), topics and log lines (to its ROS logger), one robot or several,
    until SIGINT, SIGTERM or SIGHUP (handled by the node while it runs, any number of them).
    The GIL is released throughout. ``program`` starts the lines printed before the node
    exists. With ``ignore_signals_after_stop`` (a script that exits next) those signals are
    ignored once the node stopped, so a late one (launch forwards one more) neither raises
    ``KeyboardInterrupt`` nor kills the exiting interpreter; otherwise the previous handlers
    come back.

    Returns:
        The node's exit status: 0 after a signal, 2 for bad ``--ros-args`` or a bad
        parameter, 1 for any other failure.
    """
