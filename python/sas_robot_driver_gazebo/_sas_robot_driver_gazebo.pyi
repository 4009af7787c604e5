"""Type stubs of the compiled part of ``sas_robot_driver_gazebo``.

Every method that can wait releases the GIL; no thread of the extension ever needs it.
Errors: ``ValueError`` for bad input (configuration, targets, option values), ``RuntimeError``
for calls the driver's (or client's) state does not allow, transport failures and cancelled
waits, ``TimeoutError`` when a wait (``initialize()``, ``wait_for_new_state()``) times out.
Messages follow the original C++ driver's and client's.
"""

from collections.abc import Sequence
from types import TracebackType
from typing import ClassVar, Literal, Self, TypedDict, final, overload

import numpy as np
import numpy.typing as npt

_FloatArray = npt.NDArray[np.float64]
_IntArray = npt.NDArray[np.int32]

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
    joint_velocities_topic_prefix: str | None
    """Velocity topics' prefix: joint ``j`` takes velocity targets on ``prefix + j +
    "/cmd_vel"`` (Gazebo's JointController); None: ``joint_positions_topic_prefix``."""
    joint_forces_topic_prefix: str | None
    """Effort topics' prefix: joint ``j`` takes effort targets on ``prefix + j +
    "/cmd_force"`` (Gazebo's ApplyJointForce); None: ``joint_positions_topic_prefix``."""
    velocity_limits: list[float]
    """Per joint, the largest velocity a target may ask for (±; the SDF's
    ``<limit><velocity>``, which Gazebo does not send); empty: not checked."""
    effort_limits: list[float]
    """Per joint, the largest effort a target may ask for (±; the SDF's ``<limit><effort>``);
    empty: not checked."""
    command_timeout_sec: float
    """Seconds a velocity or effort target stays in force without a new one; then zero is
    sent once (default 0.1)."""

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
        joint_velocities_topic_prefix: str | None = None,
        joint_forces_topic_prefix: str | None = None,
        velocity_limits: Sequence[float] = ...,
        effort_limits: Sequence[float] = ...,
        command_timeout_sec: float = 0.1,
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
    transport's own thread), position, velocity and effort targets out (one
    JointPositionController, JointController or ApplyJointForce topic per joint).

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

    def get_non_finite_joints(self) -> list[str]:
        """The joints whose latest state from Gazebo has a NaN or infinite position, velocity
        or effort, e.g. ``["elbow_joint position NaN"]``; empty while all are finite. The
        getters return such values as Gazebo sent them (a physics blow-up), with a
        ``RuntimeWarning`` naming them."""

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

    def set_target_joint_velocities(self, target_joint_velocities: npt.ArrayLike) -> None:
        """Checks the velocity target and sends it to Gazebo's JointControllers
        (``<joint_velocities_topic_prefix><joint>/cmd_vel``) at once, with the GIL released.
        The latest mode wins: an effort command in force is set to zero; a position target
        is no longer re-sent (the position controller, if any, keeps its last one). Without
        a new target within ``command_timeout_sec`` zero velocity is sent (by a thread of
        the driver's, or a running control loop), also on ``deinitialize()``/``disconnect()``.

        Raises:
            ValueError: not a 1-D sequence of numbers; wrong length; a NaN or infinite value
                (naming the joint); outside ``velocity_limits`` under
                ``limit_policy="refuse"``. The previous target stays in force.
            RuntimeError: not initialized; nothing subscribes to a joint's ``cmd_vel``
                (naming the topics).
        """

    def set_target_joint_forces(self, target_joint_forces: npt.ArrayLike) -> None:
        """As ``set_target_joint_velocities``, for efforts (N·m or N) to Gazebo's
        ApplyJointForce (``<joint_forces_topic_prefix><joint>/cmd_force``), checked against
        ``effort_limits``; zero effort at the timeout.

        Raises:
            ValueError: as ``set_target_joint_velocities``.
            RuntimeError: as ``set_target_joint_velocities`` (``cmd_force``).
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
    @property
    def publish_clock(self) -> bool:
        """``RobotDriverROS`` publishes Gazebo's clock on ROS ``/clock`` (ClockQoS) from a
        gz-transport receive thread of its own; one per process, so set it on one robot."""
    @property
    def gazebo_clock_topic(self) -> str:
        """The Gazebo ``Clock`` topic ``publish_clock`` reads (``/clock``, or
        ``/world/<world>/clock``)."""

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
        publish_clock: bool = False,
        gazebo_clock_topic: str = "/clock",
    ) -> Self:
        """Raises:
        ValueError: a period that is not a positive number of seconds; a keepalive or
        heartbeat that is not a non-negative one; an unknown stamp or mode; a priority
        outside 1..99; an empty ``gazebo_clock_topic`` with ``publish_clock``.
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

@final
class Functionality:
    """What a robot driver supports (the original's ``sas::RobotDriver::Functionality`` as its
    Python binding exposes it). ``Functionality.None`` exists too, spelled
    ``getattr(Functionality, "None")`` (a keyword in Python); ``is_enabled`` refuses it, as it
    refuses ``ClearPositions``.
    """

    PositionControl: ClassVar[Functionality]
    VelocityControl: ClassVar[Functionality]
    ForceControl: ClassVar[Functionality]
    Homing: ClassVar[Functionality]
    ClearPositions: ClassVar[Functionality]
    def __int__(self) -> int: ...

@final
class ModeBlacklistFlag:
    """What a ``RobotDriverClient`` leaves out (the original's
    ``RobotDriverClient::MODE_BLACKLIST_FLAG``)."""

    JOINT_CONTROL: ClassVar[ModeBlacklistFlag]
    """No ``set/target_joint_*``, ``set/homing_signal``, ``set/clear_positions`` publishers."""
    JOINT_MONITORING: ClassVar[ModeBlacklistFlag]
    """No subscriptions: the client reads nothing."""
    WATCHDOG_CONTROL: ClassVar[ModeBlacklistFlag]
    """No ``set/watchdog_trigger`` publisher."""
    def __int__(self) -> int: ...

class _ClientJointState(TypedDict):
    """The latest joint state in one read (``RobotDriverClient.snapshot()``)."""

    positions: _FloatArray
    velocities: _FloatArray
    """Empty if the state had no velocity per joint."""
    efforts: _FloatArray
    """Empty if the state had no effort per joint."""
    stamp_ns: int
    """The state's ``header.stamp`` in nanoseconds (the bridge's clock, or Gazebo's sim time
    with ``joint_states_stamp: gazebo``)."""
    age_sec: float
    """Seconds since the state reached this process."""
    sequence: int
    """Joint states received so far, this one included."""

@final
class RobotDriverClient:
    """The controller's side of a robot driver (the original's ``sas::RobotDriverClient``):
    reads ``<topic_prefix>/get/joint_states``, ``get/joint_positions_min|max`` and
    ``get/home_states``; sends on ``set/target_joint_positions|velocities|forces``,
    ``set/homing_signal``, ``set/clear_positions``, ``set/watchdog_trigger`` and
    ``set/shutdown``. Every topic KeepLast(1), reliable, volatile, as the original's.

    The client owns a node named ``node_name`` in this process's ROS context (one rclrs
    context per ``args``/``domain_id``, shared by the clients created with them; rclpy can run
    beside it). Its subscriptions run on a Rust thread and only update a cache, so Python is
    never woken per message: getters return the latest state (limits and home states as last
    received; they need not be repeated), and ``wait_for_new_state`` sleeps with the GIL
    released until a newer state arrives. A Python thread holding the GIL delays nothing but
    Python.

    The client's thread stops on ``close()``, on leaving a ``with`` block, when the client is
    garbage-collected, and at interpreter exit (also after Ctrl-C).
    """

    def __new__(
        cls,
        node_name: str,
        topic_prefix: str = "GET_FROM_NODE",
        blacklisted_modes: Sequence[ModeBlacklistFlag] = (),
        *,
        args: Sequence[str] | None = None,
        domain_id: int | None = None,
    ) -> Self:
        """Creates the node, its topics under ``topic_prefix`` (the node's name for
        ``"GET_FROM_NODE"``, as the original; e.g. ``"/ur3e_1"``) and its thread.

        Args:
            node_name: the client's node name (``--ros-args -r __node:=…`` remaps it).
            topic_prefix: the robot's topic prefix (its ``robot_name``).
            blacklisted_modes: what to leave out (see ``ModeBlacklistFlag``).
            args: the ROS arguments of the context (default ``sys.argv``; ``--ros-args``
                apply).
            domain_id: ROS domain; None takes ``ROS_DOMAIN_ID``.

        Raises:
            ValueError: invalid ``--ros-args``, node name or topic prefix.
        """

    @property
    def node_name(self) -> str:
        """The client node's fully qualified name, e.g. ``"/controller"``."""

    def get_topic_prefix(self) -> str:
        """The topic prefix in use."""

    def is_enabled(
        self, supported_functionality: Functionality = Functionality.PositionControl
    ) -> bool:
        """``PositionControl``: joint states and both limits have arrived (as the original);
        ``VelocityControl`` / ``ForceControl``: the latest state has velocities / efforts;
        ``Homing``: home states have arrived. False once closed.

        Raises:
            ValueError: ``None`` or ``ClearPositions``, which have no meaning here (the
                original's message).
        """

    def get_joint_positions(self) -> _FloatArray:
        """The latest joint positions, 1-D float64, one per joint (the robot's order).

        Raises:
            RuntimeError: not enabled (``<prefix>::RobotDriverInterface::get_joint_positions()::
                trying to get joint positions but uninitialized: nothing has arrived yet on
                <topics>.``); closed.
        """

    def get_joint_velocities(self) -> _FloatArray:
        """The latest joint velocities, 1-D float64.

        Raises:
            RuntimeError: no state yet, or the latest has no velocities; closed.
        """

    def get_joint_forces(self) -> _FloatArray:
        """The latest joint forces (the state's ``effort``), 1-D float64.

        Raises:
            RuntimeError: no state yet, or the latest has no efforts; closed.
        """

    def get_joint_limits(self) -> tuple[_FloatArray, _FloatArray]:
        """``(lower, upper)`` as last received on ``get/joint_positions_min|max``; ±inf for
        unbounded joints.

        Raises:
            RuntimeError: not enabled (states and both limits); closed.
        """

    def get_home_states(self) -> _IntArray:
        """The home states as last received, 1-D int32.

        Raises:
            RuntimeError: none received (a Gazebo bridge publishes none); closed.
        """

    def snapshot(self) -> _ClientJointState:
        """The latest joint state in one consistent read, with its stamp, age and sequence
        number; needs no limits.

        Raises:
            RuntimeError: no state yet (the message names the topic); closed.
        """

    def get_state_age(self) -> float:
        """Seconds since the latest joint state arrived: how stale the getters' values are.
        It grows while the bridge or its simulator is paused or gone (the getters then keep
        returning the last state, as the original's).

        Raises:
            RuntimeError: no state yet (the message names the topic); closed.
        """

    def wait_for_new_state(self, timeout: float | None = None) -> int:
        """Waits, with the GIL released, until a joint state newer than the newest one this
        client's getters or waits returned has arrived (at once if one already has); returns
        its sequence number. Ctrl-C interrupts it.

        Args:
            timeout: seconds; None waits until a state arrives or the client is closed.

        Raises:
            TimeoutError: none within ``timeout``; the message names the topic, how many
                states arrived and when the latest did.
            RuntimeError: closed (also while waiting); JOINT_MONITORING is blacklisted.
            ValueError: a negative or NaN ``timeout``.
        """

    def send_target_joint_positions(self, target_joint_positions: npt.ArrayLike) -> None:
        """Sends target joint positions (any 1-D sequence of numbers, one per joint).

        Raises:
            ValueError: not a 1-D sequence of numbers; not one value per joint; a NaN or
                infinite value. Nothing is sent.
            RuntimeError: no state yet (the joint count is unknown; nothing is sent);
                JOINT_CONTROL is blacklisted (``RobotDriverClient::send_target_joint_positions
                ::This method is blacklisted …``); closed.
        """

    def send_target_joint_velocities(self, target_joint_velocities: npt.ArrayLike) -> None:
        """Sends target joint velocities; checked as ``send_target_joint_positions``."""

    def send_target_joint_forces(self, target_joint_forces: npt.ArrayLike) -> None:
        """Sends target joint forces; checked as ``send_target_joint_positions``."""

    def send_homing_signal(self, homing_signal: Sequence[int]) -> None:
        """Sends a homing signal, one int per joint.

        Raises:
            ValueError: not one value per joint. TypeError: not a sequence of ints.
            RuntimeError: as ``send_target_joint_positions``.
        """

    def send_clear_positions_signal(self, clear_positions_signal: Sequence[int]) -> None:
        """Sends a clear-positions signal, one int per joint, on ``set/clear_positions`` (the
        topic servers listen on; the original client used ``set/clear_positions_signal``)."""

    def send_watchdog_trigger(
        self, status: bool, period: float = 1.0, max_delay: float = 0.5
    ) -> None:
        """Sends a watchdog trigger stamped with the system clock: the first arms the
        bridge's watchdog, which then faults (holding the robot where it is) unless the next
        comes within ``period`` seconds; ``max_delay`` bounds how far the stamp may lag the
        bridge's clock; ``status=False`` faults it at once.

        Raises:
            ValueError: ``period`` not positive or ``max_delay`` negative (nothing is sent).
            RuntimeError: WATCHDOG_CONTROL is blacklisted; closed.
        """

    def send_shutdown(self) -> None:
        """Sends ``data: true`` on ``set/shutdown``: the bridge's loop stops.

        Raises:
            RuntimeError: closed.
        """

    def close(self) -> None:
        """Stops the client's thread and removes its node and topics; a waiting
        ``wait_for_new_state`` raises RuntimeError. Idempotent."""

    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool: ...
