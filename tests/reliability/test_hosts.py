"""Several hosts: the simulator, the bridge and a ROS client each in a network namespace of
its own, joined by veth pairs to a Linux bridge in a fourth namespace, on a private 10.x
subnet made (and removed) by the test. Each process is configured as a user on that host
would: GZ_IP/IGN_IP = its address, ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET, and Fast DDS on UDP
only (shared memory would bypass the network between namespaces of one machine). Discovery of
both middlewares crosses the namespaces by multicast. Skipped, with the reason, where network
namespaces cannot be made (not root, no `ip`, a container without CAP_SYS_ADMIN)."""

import os
import shutil
import subprocess
import sys

import pytest

from node_fixtures import CONFIG, UR3E_WORLD, Process, binary

TARGET = [0.11, -0.22, 0.33, -0.12, 0.21, -0.32]
ROLES = ('sim', 'bridge', 'client')


def ip(*args, check=True):
    return subprocess.run(['ip', *args], capture_output=True, text=True, check=check)


class Hosts:
    """Namespaces <tag>-hub (a bridge br0) and <tag>-<role>, each role on 10.<a>.<b>.<k>/24
    behind a veth pair whose other end is in br0."""

    def __init__(self, tag: str, subnet: str):
        self.tag, self.subnet = tag, subnet
        self.names = [f'{tag}-hub', *(f'{tag}-{role}' for role in ROLES)]
        self.address = {role: f'{subnet}.{k + 1}' for k, role in enumerate(ROLES)}

    def ns(self, role: str) -> str:
        return f'{self.tag}-{role}'

    def create(self):
        hub = self.ns('hub')
        for name in self.names:
            ip('netns', 'add', name)
            ip('-n', name, 'link', 'set', 'lo', 'up')
        ip('-n', hub, 'link', 'add', 'br0', 'type', 'bridge', 'mcast_snooping', '0')
        ip('-n', hub, 'link', 'set', 'br0', 'up')
        for k, role in enumerate(ROLES):
            inside, outside = f'eth{k}', f'p{k}'
            ip('link', 'add', inside, 'netns', self.ns(role), 'type', 'veth', 'peer', 'name',
               outside, 'netns', hub)
            ip('-n', hub, 'link', 'set', outside, 'master', 'br0', 'up')
            ip('-n', self.ns(role), 'addr', 'add', f'{self.address[role]}/24', 'dev', inside)
            ip('-n', self.ns(role), 'link', 'set', inside, 'up', 'multicast', 'on')
            # Multicast (both discoveries) leaves through the one interface there is.
            ip('-n', self.ns(role), 'route', 'add', '224.0.0.0/4', 'dev', inside)

    def remove(self):
        for name in self.names:
            ip('netns', 'del', name, check=False)


@pytest.fixture
def hosts():
    why = None
    if shutil.which('ip') is None:
        why = 'the ip command (iproute2) is missing'
    elif os.geteuid() != 0:
        why = 'network namespaces need root'
    if why:
        pytest.skip(f'several hosts not tested: {why}')
    tag = f'sasrel{os.getpid() % 100000}'
    subnet = f'10.{200 + os.getpid() % 50}.{os.getpid() % 250 + 1}'
    h = Hosts(tag, subnet)
    try:
        h.create()
    except subprocess.CalledProcessError as err:
        h.remove()
        pytest.skip(f'several hosts not tested: cannot make network namespaces '
                    f'({" ".join(err.cmd)}: {err.stderr.strip()})')
    try:
        yield h
    finally:
        h.remove()


def test_simulator_bridge_and_client_on_three_hosts(world, hosts):
    def env(role: str) -> dict:
        e = {**os.environ, **world.env()}
        e.update({'GZ_IP': hosts.address[role], 'IGN_IP': hosts.address[role],
                  'ROS_AUTOMATIC_DISCOVERY_RANGE': 'SUBNET',
                  'FASTDDS_BUILTIN_TRANSPORTS': 'UDPv4'})
        return e

    def start(role: str, args) -> Process:
        process = Process(['ip', 'netns', 'exec', hosts.ns(role), *args], env(role))
        world.processes.append(process)
        return process

    sim = start('sim', [binary('GZ_JOINT_SIM_BIN', 'gz-joint-sim'), UR3E_WORLD])
    sim.wait_output('joint states', 30)
    bridge = start('bridge', [binary('BRIDGE_NODE_BIN', 'sas_robot_driver_ros_gazebo_node'),
                              '--ros-args', '-r', '__node:=ur3e_1', '--params-file', CONFIG])
    client = start('client', [sys.executable, os.path.join(os.path.dirname(__file__),
                                                           'host_client.py'),
                              'ur3e_1', ','.join(map(str, TARGET)), '90'])
    code = client.wait_exit(120)
    print('\n' + client.output())
    assert code == 0, f'client:\n{client.output()}\nbridge:\n{bridge.output()}\n' \
                      f'simulator:\n{sim.output()}'
    assert bridge.count('::Robot initialized.') == 1, 'Gazebo discovery crossed the hosts'
    if shutil.which('ss') is None:
        pytest.skip('the bridge reached the simulator across the hosts, but whether its data '
                    'connection ran on the subnet is not checked: the ss command (iproute2) '
                    'is missing')
    # The bridge's data connection to the simulator runs on the subnet.
    ss = subprocess.run(['ip', 'netns', 'exec', hosts.ns('sim'), 'ss', '-tn'],
                        capture_output=True, text=True).stdout
    assert hosts.address['bridge'] in ss, ss
