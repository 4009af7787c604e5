"""An rclpy action client drives an rclrs action server (test_msgs/action/Fibonacci).

Goal, feedback and result travel through the generated action types and every `Action`
helper the server side uses; the client checks the feedback and the result sequence.
"""

from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient
from test_msgs.action import Fibonacci


def fibonacci(order):
    sequence = [0, 1]
    while len(sequence) <= order:
        sequence.append(sequence[-1] + sequence[-2])
    return sequence


def test_rclpy_goal_to_rclrs_server(ros):
    peer = ros.peer('action-server')
    node = ros.node('py_action_client')
    client = ActionClient(node, Fibonacci, 'fibonacci')
    ros.wait_for(lambda: client.server_is_ready()
                 and node.count_publishers('/fibonacci/_action/feedback') > 0,
                 20, 'the rclrs action server and its feedback topic')

    feedback = []
    sent = client.send_goal_async(Fibonacci.Goal(order=10),
                                  feedback_callback=lambda m: feedback.append(list(m.feedback.sequence)))
    ros.wait_for(sent.done, 20, f'the goal response:\n{peer.output()}')
    handle = sent.result()
    assert handle.accepted
    result = handle.get_result_async()
    ros.wait_for(result.done, 20, f'the result:\n{peer.output()}')
    assert result.result().status == GoalStatus.STATUS_SUCCEEDED
    assert list(result.result().result.sequence) == fibonacci(10)
    assert peer.count('goal order=10') > 0, peer.output()
    # Feedback went out while the goal ran; each is a prefix of the result.
    ros.wait_for(lambda: feedback, 10, 'feedback')
    assert all(f == fibonacci(len(f) - 1) for f in feedback), feedback
    client.destroy()
