use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gz_transport::msgs::{Double, Model};
use gz_transport::{Delivery, Error, MessageInfo, MsgsPrefix, Node, Publisher, Subscription};

use std::sync::mpsc::Sender;

use crate::support::{counted, doubles_on, eventually, inbox, node, partition, Inbox, PATIENCE};

fn double(data: f64) -> Double {
    Double { header: None, data }
}

/// A partition of its own for `test` and `N` nodes in it (gz.msgs. type names), made in order,
/// each its own discovery participant: how most tests here begin.
fn nodes<const N: usize>(test: &str) -> (String, [Node; N]) {
    let p = partition(test);
    let nodes = std::array::from_fn(|_| node(&p, MsgsPrefix::Gz));
    (p, nodes)
}

/// A `Delivery::Latest` subscription of `node` to the `Double`s on `topic`, collecting them,
/// whose first message holds the receive thread until a `()` is sent on the returned sender:
/// what is published meanwhile is written to its socket (published without a queue: on
/// loopback, in the subscriber's socket buffer), so it reaches it in one read.
fn latest_held_back(node: &Node, topic: &str) -> (Subscription, Inbox<f64>, Sender<()>) {
    let latest = inbox::<f64>();
    let (sink, busy_once) = (latest.clone(), Arc::new(AtomicUsize::new(0)));
    let (sent, all_sent) = std::sync::mpsc::channel::<()>();
    let subscription = node
        .subscribe_with(
            topic,
            Delivery::Latest,
            move |m: Double, info: &MessageInfo| {
                sink.lock().unwrap().push((m.data, info.clone()));
                if busy_once.fetch_add(1, Ordering::SeqCst) == 0 {
                    let released = all_sent.recv_timeout(PATIENCE);
                    assert!(released.is_ok(), "the other messages were never sent");
                }
            },
        )
        .unwrap();
    (subscription, latest, sent)
}

/// A node of its own in `partition` publishing `Double`s on `/state`, once `latest` (from
/// [`latest_held_back`]) holds its first message, 0.0: what it publishes next waits for the
/// receive thread.
fn first_message_taken(partition: &str, latest: &Inbox<f64>) -> (Node, Publisher<Double>) {
    let pub_node = node(partition, MsgsPrefix::Gz);
    let publisher = pub_node.advertise::<Double>("/state").unwrap();
    assert!(publisher.wait_for_subscribers(PATIENCE));
    publisher.publish(&double(0.0)).unwrap();
    assert!(eventually(PATIENCE, || !latest.lock().unwrap().is_empty()));
    (pub_node, publisher)
}

/// `wait_for_subscribers` returns only once the subscriber's connection is complete, so the
/// one message sent right after it arrives: a driver's first target after `initialize()`
/// depends on it. Fresh nodes each round, as a (re)started simulator would be.
#[test]
fn the_one_message_sent_once_subscribers_are_there_arrives() {
    for round in 0..20 {
        let (p, [sub_node]) = nodes("oneshot");
        let (_sub, got) = doubles_on(&sub_node, "/cmd");
        let pub_node = node(&p, MsgsPrefix::Gz);
        let publisher = pub_node.advertise::<Double>("/cmd").unwrap();
        assert!(publisher.wait_for_subscribers(PATIENCE), "round {round}");
        publisher.publish(&double(f64::from(round))).unwrap();
        assert!(
            eventually(PATIENCE, || !got.lock().unwrap().is_empty()),
            "round {round}: the message sent once subscribers were there was lost"
        );
        assert_eq!(got.lock().unwrap()[0].0, f64::from(round));
    }
}

#[test]
fn typed_pubsub_between_two_nodes() {
    let (p, [pub_node, sub_node]) = nodes("typed");
    let (_sub, got) = doubles_on(&sub_node, "/cmd");
    let publisher = pub_node.advertise::<Double>("/cmd").unwrap();
    assert!(
        publisher.wait_for_subscribers(PATIENCE),
        "NEW_CONNECTION from the subscriber node"
    );
    assert_eq!(publisher.subscriber_count(), 1);
    assert!(eventually(PATIENCE, || {
        publisher.publish(&double(0.0)).unwrap();
        !got.lock().unwrap().is_empty()
    }));
    let (value, info) = got.lock().unwrap()[0].clone();
    assert_eq!(
        value, 0.0,
        "an all-zero payload (empty protobuf) arrives intact"
    );
    assert_eq!(info.topic, "/cmd");
    assert_eq!(info.type_name, "gz.msgs.Double");
    assert_eq!(info.partition, p);
    assert_eq!(info.publisher_address, pub_node.address());
    assert_eq!(sub_node.topic_list(), vec!["/cmd".to_owned()]);
}

/// Each subscription that reaches a publisher's socket counts on its topic and in the node's
/// total, which a driver reads (one atomic load) before asking each topic: while the total
/// stands, no topic's count moved.
#[test]
fn subscriptions_count_per_topic_and_in_the_nodes_total() {
    let (p, [pub_node]) = nodes("reached");
    let a = pub_node.advertise::<Double>("/a").unwrap();
    let b = pub_node.advertise::<Double>("/b").unwrap();
    assert_eq!((a.subscriptions(), b.subscriptions()), (0, 0));
    assert_eq!(pub_node.subscriptions_reached(), 0);

    let first = node(&p, MsgsPrefix::Gz);
    let (_first_a, _) = doubles_on(&first, "/a");
    assert!(eventually(PATIENCE, || a.subscriptions() == 1));
    assert_eq!(b.subscriptions(), 0);
    assert_eq!(pub_node.subscriptions_reached(), 1);

    let second = node(&p, MsgsPrefix::Gz);
    let (_second_a, _) = doubles_on(&second, "/a");
    let (_second_b, _) = doubles_on(&second, "/b");
    assert!(eventually(PATIENCE, || {
        (a.subscriptions(), b.subscriptions()) == (2, 1)
    }));
    assert_eq!(pub_node.subscriptions_reached(), 3);
}

#[test]
fn a_subscription_waits_quietly_for_a_publisher() {
    let (p, [sub_node]) = nodes("late");
    let (_sub, got) = doubles_on(&sub_node, "/late");
    assert!(!sub_node.wait_for_publishers("/late", Duration::from_millis(300)));
    let pub_node = node(&p, MsgsPrefix::Gz);
    let publisher = pub_node.advertise::<Double>("/late").unwrap();
    assert!(sub_node.wait_for_publishers("/late", PATIENCE));
    assert!(eventually(PATIENCE, || {
        publisher.publish(&double(7.5)).unwrap();
        got.lock().unwrap().iter().any(|(v, _)| *v == 7.5)
    }));
}

#[test]
fn wrong_type_and_bad_payload_are_dropped_counted_and_survived() {
    let (_, [pub_node, sub_node]) = nodes("badtype");
    let typed = Arc::new(AtomicUsize::new(0));
    let t = typed.clone();
    let _typed = sub_node.subscribe("/x", move |_: Double, _: &MessageInfo| {
        t.fetch_add(1, Ordering::SeqCst);
    });
    let (_raw, raw) = counted(&sub_node, "/x");
    // A Model on a topic the typed subscriber expects Doubles on: only the raw one gets it.
    let models = pub_node.advertise::<Model>("/x").unwrap();
    assert!(eventually(PATIENCE, || {
        models
            .publish(&Model {
                name: "m".into(),
                ..Default::default()
            })
            .unwrap();
        raw.load(Ordering::SeqCst) > 0 && sub_node.stats().type_mismatches > 0
    }));
    assert_eq!(typed.load(Ordering::SeqCst), 0);
    drop(models);

    // Bytes that are no Double under the Double type name: counted as decode errors...
    let liar = pub_node.advertise_raw("/x", "gz.msgs.Double").unwrap();
    assert!(eventually(PATIENCE, || {
        liar.publish_raw(&[0xff, 0xff, 0xff]).unwrap();
        sub_node.stats().decode_errors > 0
    }));
    // ...and the subscriber keeps serving.
    assert!(eventually(PATIENCE, || {
        liar.publish_raw(&prost::Message::encode_to_vec(&double(2.0)))
            .unwrap();
        typed.load(Ordering::SeqCst) > 0
    }));
}

#[test]
fn callbacks_run_on_the_receive_thread_and_may_publish() {
    let (_, [n]) = nodes("relay");
    let echo = Arc::new(n.advertise::<Double>("/echo").unwrap());
    let threads = Arc::new(Mutex::new(Vec::new()));
    let th = threads.clone();
    let e = echo.clone();
    // Subscribe to our own topic and republish from inside the callback.
    let _relay = n
        .subscribe("/ping", move |m: Double, _: &MessageInfo| {
            th.lock()
                .unwrap()
                .push(std::thread::current().name().map(str::to_owned));
            e.publish(&double(m.data * 2.0)).unwrap();
        })
        .unwrap();
    let (_echoes, got) = doubles_on(&n, "/echo");
    let ping = n.advertise::<Double>("/ping").unwrap();
    assert!(eventually(PATIENCE, || {
        ping.publish(&double(21.0)).unwrap();
        got.lock().unwrap().iter().any(|(v, _)| *v == 42.0)
    }));
    let names = threads.lock().unwrap().clone();
    assert!(
        names.iter().all(|n| n.as_deref() == Some("gz-receive")),
        "{names:?}"
    );
}

#[test]
fn unsubscribing_ends_the_connection_at_the_publisher() {
    let (_, [pub_node, sub_node]) = nodes("endconn");
    let publisher = pub_node.advertise::<Double>("/x").unwrap();
    let sub = sub_node
        .subscribe("/x", |_: Double, _: &MessageInfo| {})
        .unwrap();
    assert!(eventually(PATIENCE, || publisher.subscriber_count() == 1));
    drop(sub);
    assert!(
        eventually(PATIENCE, || publisher.subscriber_count() == 0),
        "END_CONNECTION"
    );
    assert!(!publisher.has_subscribers());
    // Node::unsubscribe removes every subscription of the topic.
    let _a = sub_node
        .subscribe("/x", |_: Double, _: &MessageInfo| {})
        .unwrap();
    let _b = sub_node.subscribe_raw("/x", |_, _| {}).unwrap();
    assert!(eventually(PATIENCE, || publisher.subscriber_count() == 1));
    sub_node.unsubscribe("/x").unwrap();
    assert!(eventually(PATIENCE, || publisher.subscriber_count() == 0));
}

#[test]
fn dropping_publisher_and_node_is_seen_at_once_not_by_expiry() {
    let (_, [watcher, leaving]) = nodes("bye");
    let a = leaving.advertise::<Double>("/a").unwrap();
    let b = leaving.advertise::<Double>("/b").unwrap();
    assert!(eventually(PATIENCE, || watcher.topic_list() == ["/a", "/b"]));
    drop(a); // UNADVERTISE
    assert!(eventually(PATIENCE, || watcher.topic_list() == ["/b"]));
    drop(b);
    drop(leaving); // BYE
    assert!(eventually(PATIENCE, || watcher.topic_list().is_empty()));
    assert_eq!(
        watcher.stats().peers_expired,
        0,
        "removed by UNADVERTISE/BYE, not by silence"
    );
}

#[test]
fn partitions_are_kept_apart_in_process() {
    let (_, [pub1, sub1]) = nodes("partA");
    let (_, [sub2]) = nodes("partB");
    let (_s1, n1) = counted(&sub1, "/x");
    let (_s2, n2) = counted(&sub2, "/x");
    let publisher = pub1.advertise::<Double>("/x").unwrap();
    assert!(eventually(PATIENCE, || {
        publisher.publish(&double(1.0)).unwrap();
        n1.load(Ordering::SeqCst) >= 10
    }));
    assert_eq!(n2.load(Ordering::SeqCst), 0);
    assert!(sub2.topic_list().is_empty());
    assert_eq!(
        publisher.subscriber_count(),
        1,
        "only the subscriber of the same partition"
    );
}

#[test]
fn bad_names_and_double_advertise_are_errors() {
    let (_, [n]) = nodes("names");
    assert!(matches!(
        n.advertise::<Double>("/a b"),
        Err(Error::InvalidTopic { .. })
    ));
    assert!(matches!(
        n.subscribe_raw("", |_, _| {}),
        Err(Error::InvalidTopic { .. })
    ));
    assert!(matches!(
        n.advertise_raw("/t", ""),
        Err(Error::InvalidTypeName { .. })
    ));
    let _first = n.advertise::<Double>("/dup").unwrap();
    let err = n
        .advertise::<Model>("/dup")
        .err()
        .expect("second advertise fails");
    assert!(
        matches!(&err, Error::AlreadyAdvertised { existing, .. } if existing == "gz.msgs.Double"),
        "{err}"
    );
    assert!(err.to_string().contains("/dup"));
    let ns = gz_transport::Node::with_options(gz_transport::NodeOptions {
        partition: Some("a@b".into()),
        ..Default::default()
    });
    assert!(matches!(ns, Err(Error::InvalidPartition { .. })));
}

#[test]
fn namespace_and_relative_topics() {
    crate::support::init();
    let p = partition("ns");
    let n = gz_transport::Node::with_options(gz_transport::NodeOptions {
        partition: Some(p.clone()),
        namespace: Some("robot".into()),
        ..Default::default()
    })
    .unwrap();
    let rel = n.advertise::<Double>("cmd").unwrap();
    assert_eq!(rel.topic(), "/robot/cmd");
    let abs = n.advertise::<Double>("/abs").unwrap();
    assert_eq!(abs.topic(), "/abs");
    let watcher = node(&p, MsgsPrefix::Gz);
    assert!(eventually(PATIENCE, || watcher.topic_list() == ["/abs", "/robot/cmd"]));
}

#[test]
fn handles_can_be_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<gz_transport::Node>();
    send_sync::<gz_transport::Publisher<Double>>();
    send_sync::<gz_transport::RawPublisher>();
    send_sync::<gz_transport::Subscription>();
}

#[test]
fn the_last_message_before_a_publisher_leaves_is_delivered() {
    // The publisher says UNADVERTISE and BYE right after its last message; the subscriber
    // must not drop the connection before reading what is already on its way.
    let (p, [sub_node]) = nodes("last");
    let (_s, got) = doubles_on(&sub_node, "/last");
    for round in 0..5 {
        let pub_node = node(&p, MsgsPrefix::Gz);
        let publisher = pub_node.advertise::<Double>("/last").unwrap();
        assert!(eventually(PATIENCE, || {
            publisher.publish(&double(-1.0)).unwrap();
            got.lock().unwrap().iter().any(|(v, _)| *v == -1.0)
        }));
        publisher.publish(&double(round as f64)).unwrap();
        drop(publisher);
        drop(pub_node);
        assert!(
            eventually(PATIENCE, || got
                .lock()
                .unwrap()
                .iter()
                .any(|(v, _)| *v == round as f64)),
            "round {round}: the last message was lost"
        );
        got.lock().unwrap().clear();
    }
}

/// A `Delivery::Latest` subscription held back (its callback busy) while messages queue up
/// gets, of what then arrives in one read, only the newest per topic; a plain subscription on
/// the same topic in the same node still gets every message, in order, and the skipped ones
/// are counted.
#[test]
fn a_latest_subscription_held_back_catches_up_with_the_newest_message() {
    let (p, [sub_node]) = nodes("latest");
    let (_latest, latest, sent) = latest_held_back(&sub_node, "/state");
    let (_every, every) = doubles_on(&sub_node, "/state");
    let (pub_node, publisher) = first_message_taken(&p, &latest);
    for value in 1..=9 {
        publisher.publish(&double(f64::from(value))).unwrap();
    }
    let stats = pub_node.stats();
    assert_eq!((stats.messages_published, stats.messages_not_sent), (10, 0));
    sent.send(()).unwrap();
    assert!(eventually(PATIENCE, || every.lock().unwrap().len() == 10));
    let values = |got: &Inbox<f64>| {
        got.lock()
            .unwrap()
            .iter()
            .map(|(v, _)| *v)
            .collect::<Vec<_>>()
    };
    assert_eq!(values(&every), (0..=9).map(f64::from).collect::<Vec<_>>());
    assert_eq!(
        values(&latest),
        vec![0.0, 9.0],
        "the newest of the backlog only"
    );
    assert_eq!(sub_node.stats().messages_superseded, 8);
    // What the newest one superseded travels with it: a subscriber's count of the
    // publisher's messages stays whole.
    let superseded = |got: &Inbox<f64>| {
        got.lock()
            .unwrap()
            .iter()
            .map(|(_, info)| info.superseded)
            .collect::<Vec<_>>()
    };
    assert_eq!(superseded(&latest), vec![0, 8]);
    assert_eq!(superseded(&every).iter().sum::<u64>(), 8);
}

/// A newer message that does not decode, queued behind older valid ones, must not hide them
/// from a `Delivery::Latest` subscription: it gets the newest message that decodes, and the
/// bad one is counted.
#[test]
fn a_latest_subscription_gets_the_newest_decodable_message_not_an_undecodable_newer_one() {
    let (p, [sub_node]) = nodes("latest_bad");
    let (_latest, latest, sent) = latest_held_back(&sub_node, "/state");
    let (pub_node, publisher) = first_message_taken(&p, &latest);
    for value in 1..=8 {
        publisher.publish(&double(f64::from(value))).unwrap();
    }
    // Field 2 (data, a double) with a length-delimited wire type and a length past the end:
    // a gz.msgs.Double that does not decode.
    publisher.raw().publish_raw(&[0x12, 0x7f, 0x00]).unwrap();
    assert_eq!(pub_node.stats().messages_not_sent, 0);
    sent.send(()).unwrap();
    assert!(
        eventually(PATIENCE, || sub_node.stats().decode_errors == 1),
        "the undecodable message was not counted"
    );
    assert!(eventually(PATIENCE, || latest.lock().unwrap().len() == 2));
    let got: Vec<(f64, u64)> = latest
        .lock()
        .unwrap()
        .iter()
        .map(|(value, info)| (*value, info.superseded))
        .collect();
    assert_eq!(
        got,
        vec![(0.0, 0), (8.0, 7)],
        "the newest message that decodes, with the 7 before it superseded"
    );
    assert_eq!(sub_node.stats().messages_superseded, 7);
}
