"""test_msgs services across the two client libraries: rclpy -> rclrs and rclrs -> rclpy.

Both sides build the request and the response from the same seed, each with its own
pattern code, and check what they receive field by field.
"""

import pytest

import pattern

SERVICES = ['test_msgs/srv/BasicTypes', 'test_msgs/srv/Arrays']
DISCOVERY_S = 20
CALL_S = 30


def service_class(name):
    pkg, kind, cls = name.split('/')
    module = __import__(f'{pkg}.{kind}', fromlist=[cls])
    return getattr(module, cls)


@pytest.mark.parametrize('service_name', SERVICES)
def test_rclpy_calls_rclrs(ros, service_name):
    srv = service_class(service_name)
    seed = 2000 + SERVICES.index(service_name)
    peer = ros.peer('serve', '--type', service_name, '--seed', seed)
    node = ros.node('py_client')
    client = node.create_client(srv, 'rs_service')
    ros.wait_for(client.service_is_ready, DISCOVERY_S, f'the rclrs {service_name} server')

    future = client.call_async(pattern.message(srv.Request, seed))
    ros.wait_for(future.done, CALL_S, f'the response of the rclrs server:\n{peer.output()}')
    peer.wait_output('match request', 5)
    assert 'MISMATCH' not in peer.output(), peer.output()
    diff = pattern.differences(pattern.plain(future.result()),
                               pattern.plain(pattern.message(srv.Response, seed)))
    assert not diff, 'response differs:\n  ' + '\n  '.join(diff[:20])


@pytest.mark.parametrize('service_name', SERVICES)
def test_rclrs_calls_rclpy(ros, service_name):
    srv = service_class(service_name)
    seed = 3000 + SERVICES.index(service_name)
    requests = []

    def serve(request, response):
        requests.append(request)
        return pattern.message(srv.Response, seed)

    node = ros.node('py_server')
    node.create_service(srv, 'py_service', serve)
    peer = ros.peer('call', '--type', service_name, '--seed', seed, '--timeout-s', DISCOVERY_S + CALL_S)
    ros.wait_for(lambda: peer.proc.poll() is not None, DISCOVERY_S + CALL_S + 10,
                 f'the rclrs client to finish:\n{peer.output()}')
    assert peer.proc.returncode == 0, peer.output()
    assert peer.count('match response') > 0, peer.output()
    assert len(requests) == 1
    diff = pattern.differences(pattern.plain(requests[0]),
                               pattern.plain(pattern.message(srv.Request, seed)))
    assert not diff, 'request differs:\n  ' + '\n  '.join(diff[:20])
