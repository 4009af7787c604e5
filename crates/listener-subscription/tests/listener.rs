//! A ListenerSubscription against an rclrs publisher in another participant of the same
//! process (its own ROS context), over the real middleware, with no executor spinning
//! anywhere: every message reaches the handler, once and in order; the subscription is the
//! node's in the ROS graph; after drop the handler is never called again. (In one process Fast
//! DDS delivers on the publishing thread; across processes on its listener thread, which the
//! node suite checks by the node's threads' wake-ups.)

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use listener_subscription::ListenerSubscription;
use parking_lot::Mutex;
use rclrs::{Context, CreateBasicExecutor, InitOptions, IntoPrimitiveOptions};
use ros_env::std_msgs::msg::Float64MultiArray;

const TOPIC: &str = "listener_test/data";

fn context(domain: usize) -> Context {
    Context::new(
        Vec::<String>::new(),
        InitOptions::new().with_domain_id(Some(domain)),
    )
    .expect("ROS context")
}

fn wait_until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn messages_reach_the_handler_once_in_order_without_an_executor_and_never_after_drop() {
    let _ = tracing_subscriber::fmt().with_test_writer().try_init();
    // Own domain: tests of other crates may run at the same time.
    let domain = 80 + (std::process::id() as usize % 20);
    let receiving = context(domain);
    let node = receiving
        .create_basic_executor()
        .create_node("listener_test_receiver")
        .expect("node");
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

    let sending = context(domain);
    let sender = sending
        .create_basic_executor()
        .create_node("listener_test_sender")
        .expect("node");
    let publisher = sender
        .create_publisher::<Float64MultiArray>(TOPIC.keep_last(1).reliable().volatile())
        .expect("publisher");
    wait_until("the publisher to match", Duration::from_secs(10), || {
        subscription.publisher_count().unwrap_or(0) == 1
            && publisher.get_subscription_count().unwrap_or(0) == 1
    });

    // Paced so that depth 1 keeps every one: the test is about where and whether, not load.
    const SENT: usize = 50;
    for i in 0..SENT {
        publisher
            .publish(Float64MultiArray {
                data: vec![i as f64],
                ..Default::default()
            })
            .expect("publish");
        wait_until(&format!("message {i}"), Duration::from_secs(5), || {
            received.lock().len() > i
        });
    }
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
        publisher
            .publish(Float64MultiArray {
                data: vec![1000.0 + i as f64],
                ..Default::default()
            })
            .expect("publish");
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
    let domain = 80 + (std::process::id() as usize % 20);
    let receiving = context(domain);
    let node = receiving
        .create_basic_executor()
        .create_node("listener_test_serialized_receiver")
        .expect("node");
    let received: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let sink = received.clone();
    let subscription = ListenerSubscription::<Float64MultiArray>::new_serialized(
        &node,
        SERIALIZED_TOPIC,
        1,
        move |bytes, _| sink.lock().push(bytes.to_vec()),
    )
    .expect("subscription");
    let sending = context(domain);
    let sender = sending
        .create_basic_executor()
        .create_node("listener_test_serialized_sender")
        .expect("node");
    let publisher = sender
        .create_publisher::<Float64MultiArray>(SERIALIZED_TOPIC.keep_last(1).reliable().volatile())
        .expect("publisher");
    wait_until("the publisher to match", Duration::from_secs(10), || {
        subscription.publisher_count().unwrap_or(0) == 1
            && publisher.get_subscription_count().unwrap_or(0) == 1
    });
    let values = [-0.0, 1.5, f64::MAX];
    for (i, value) in values.into_iter().enumerate() {
        publisher
            .publish(Float64MultiArray {
                data: vec![value],
                ..Default::default()
            })
            .expect("publish");
        wait_until(&format!("message {i}"), Duration::from_secs(5), || {
            received.lock().len() > i
        });
    }
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
