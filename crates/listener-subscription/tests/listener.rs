//! A ListenerSubscription against an rclrs publisher in another participant of the same
//! process (its own ROS context), over the real middleware, with no executor spinning
//! anywhere: every message reaches the handler, once and in order; the subscription is the
//! node's in the ROS graph; after drop the handler is never called again. (In one process Fast
//! DDS delivers on the publishing thread; across processes on its listener thread, which the
//! node suite checks by the node's threads' wake-ups.)

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use listener_subscription::ListenerSubscription;
use parking_lot::Mutex;
use rclrs::{Context, CreateBasicExecutor, InitOptions, IntoPrimitiveOptions, Node, Publisher};
use ros_env::std_msgs::msg::Float64MultiArray;
use test_support::wait_until;

const TOPIC: &str = "listener_test/data";

/// The ROS domain of this test binary's participants: tests of other crates may run at the
/// same time.
fn domain() -> usize {
    80 + (std::process::id() as usize % 20)
}

/// A node called `name` in a ROS context (a participant) of its own, on [`domain`].
fn node_of_its_own(name: &str) -> Node {
    Context::new(
        Vec::<String>::new(),
        InitOptions::new().with_domain_id(Some(domain())),
    )
    .expect("ROS context")
    .create_basic_executor()
    .create_node(name)
    .expect("node")
}

/// A reliable depth-1 publisher on `topic` from the node `sender`, once it and `subscription`
/// have matched.
fn matched_publisher<T: rosidl_runtime_rs::Message>(
    sender: &Node,
    topic: &str,
    subscription: &ListenerSubscription<T>,
) -> Publisher<Float64MultiArray> {
    let publisher = sender
        .create_publisher::<Float64MultiArray>(topic.keep_last(1).reliable().volatile())
        .expect("publisher");
    wait_until("the publisher to match", Duration::from_secs(10), || {
        subscription.publisher_count().unwrap_or(0) == 1
            && publisher.get_subscription_count().unwrap_or(0) == 1
    });
    publisher
}

/// Publishes `values`, one at a time, each once `received` counts the ones before it: paced
/// so that depth 1 keeps every one.
fn publish_paced(
    publisher: &Publisher<Float64MultiArray>,
    values: impl IntoIterator<Item = f64>,
    received: impl Fn() -> usize,
) {
    for (i, value) in values.into_iter().enumerate() {
        publish(publisher, value);
        wait_until(&format!("message {i}"), Duration::from_secs(5), || {
            received() > i
        });
    }
}

fn publish(publisher: &Publisher<Float64MultiArray>, value: f64) {
    publisher
        .publish(Float64MultiArray {
            data: vec![value],
            ..Default::default()
        })
        .expect("publish");
}

#[test]
fn messages_reach_the_handler_once_in_order_without_an_executor_and_never_after_drop() {
    let _ = tracing_subscriber::fmt().with_test_writer().try_init();
    let node = node_of_its_own("listener_test_receiver");
    let received: Arc<Mutex<Vec<(f64, u64)>>> = Arc::default();
    let calls = Arc::new(AtomicUsize::new(0));
    let (sink, counter) = (received.clone(), calls.clone());
    let subscription =
        ListenerSubscription::new(&node, TOPIC, 1, move |m: Float64MultiArray, info| {
            counter.fetch_add(1, Ordering::SeqCst);
            sink.lock()
                .push((m.data[0], info.publication_sequence_number));
        })
        .expect("subscription");
    assert_eq!(subscription.topic_name(), format!("/{TOPIC}"));

    // The graph shows the subscription on its node.
    wait_until(
        "the graph to list the subscription",
        Duration::from_secs(5),
        || {
            node.get_subscription_names_and_types_by_node("listener_test_receiver", "/")
                .is_ok_and(|topics| topics.contains_key(&format!("/{TOPIC}")))
        },
    );

    let sender = node_of_its_own("listener_test_sender");
    let publisher = matched_publisher(&sender, TOPIC, &subscription);

    // Paced: the test is about where and whether, not load.
    const SENT: usize = 50;
    publish_paced(&publisher, (0..SENT).map(|i| i as f64), || {
        received.lock().len()
    });
    let taken = received.lock().clone();
    let values: Vec<f64> = taken.iter().map(|(v, _)| *v).collect();
    assert_eq!(values, (0..SENT).map(|i| i as f64).collect::<Vec<_>>());
    assert!(
        taken.windows(2).all(|w| w[1].1 > w[0].1),
        "publication sequence numbers increase: {taken:?}"
    );

    drop(subscription);
    let after_drop = calls.load(Ordering::SeqCst);
    for i in 0..10 {
        publish(&publisher, 1000.0 + f64::from(i));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        calls.load(Ordering::SeqCst),
        after_drop,
        "called after drop"
    );
    wait_until(
        "the subscription to be gone",
        Duration::from_secs(5),
        || {
            node.count_subscriptions(&format!("/{TOPIC}"))
                .is_ok_and(|n| n == 0)
                && publisher.get_subscription_count().is_ok_and(|n| n == 0)
        },
    );
}

#[test]
fn a_serialized_subscription_hands_over_each_message_as_its_cdr_bytes() {
    const SERIALIZED_TOPIC: &str = "listener_test/serialized";
    let node = node_of_its_own("listener_test_serialized_receiver");
    let received: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let sink = received.clone();
    let subscription = ListenerSubscription::<Float64MultiArray>::new_serialized(
        &node,
        SERIALIZED_TOPIC,
        1,
        move |bytes, _| sink.lock().push(bytes.to_vec()),
    )
    .expect("subscription");
    let sender = node_of_its_own("listener_test_serialized_sender");
    let publisher = matched_publisher(&sender, SERIALIZED_TOPIC, &subscription);
    let values = [-0.0, 1.5, f64::MAX];
    publish_paced(&publisher, values, || received.lock().len());
    // Plain CDR, little-endian (0x0001), as rmw_fastrtps writes it: no dimensions, data_offset,
    // one element, four bytes of padding to align the f64 to 8 (counted after the header).
    for (bytes, value) in received.lock().iter().zip(values) {
        let mut expected = vec![0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0];
        expected.extend([0; 4]);
        expected.extend(value.to_le_bytes());
        assert_eq!(bytes[..4], expected[..4], "encapsulation");
        assert_eq!(bytes[4..16], expected[4..16], "layout and count");
        assert_eq!(bytes[20..28], expected[20..28], "the value, aligned to 8");
    }
}
