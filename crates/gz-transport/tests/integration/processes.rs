use std::collections::BTreeSet;
use std::sync::atomic::Ordering;

use gz_transport::msgs::{Double, Model};
use gz_transport::{MessageInfo, MsgsPrefix};

use crate::support::{
    counted, doubles_on, eventually, inbox, node, partition, run, ChildGuard, GZ_TOPIC, PATIENCE,
};

/// The stdout of `gz-topic ARGS` in `partition`, which must succeed.
fn gz_topic_succeeds(args: &[&str], partition: &str) -> String {
    let (succeeded, out) = run(GZ_TOPIC, args, partition);
    assert!(succeeded, "gz-topic {args:?} fails: {out}");
    out
}

/// A `gz-topic` process publishing `Double{data}` on `topic` at 20 Hz until killed.
fn double_publisher(p: &str, topic: &str, data: f64) -> ChildGuard {
    let text = format!("data: {data}");
    ChildGuard::spawn(
        GZ_TOPIC,
        &[
            "-t",
            topic,
            "-m",
            "gz.msgs.Double",
            "-p",
            &text,
            "--rate",
            "20",
            "--wait",
            "0",
        ],
        p,
    )
}

#[test]
fn several_publisher_processes_reach_one_subscriber() {
    let p = partition("several");
    let sub = node(&p, MsgsPrefix::Gz);
    let (_s, got) = doubles_on(&sub, "/multi");
    let _publishers: Vec<ChildGuard> = (1..=3)
        .map(|i| double_publisher(&p, "/multi", i as f64))
        .collect();
    assert!(
        eventually(PATIENCE, || {
            let values: BTreeSet<u64> =
                got.lock().unwrap().iter().map(|(v, _)| *v as u64).collect();
            values == BTreeSet::from([1, 2, 3])
        }),
        "values from all three publishers"
    );
    let addresses: BTreeSet<String> = got
        .lock()
        .unwrap()
        .iter()
        .map(|(_, i)| i.publisher_address.clone())
        .collect();
    assert_eq!(
        addresses.len(),
        3,
        "three distinct publisher sockets: {addresses:?}"
    );
    assert_eq!(sub.topic_info("/multi").unwrap().len(), 3);
}

#[test]
fn publisher_process_started_after_the_subscriber_process() {
    let p = partition("after");
    let mut echo = ChildGuard::spawn(GZ_TOPIC, &["-e", "-t", "/later", "-n", "1", "-d", "60"], &p);
    assert!(
        echo.wait_line(PATIENCE, |l| l.contains("subscribed to /later"))
            .is_some(),
        "the subscriber process is up before the publisher process starts"
    );
    let _publisher = double_publisher(&p, "/later", 4.25);
    assert!(
        echo.wait_line(PATIENCE, |l| l == "data: 4.25").is_some(),
        "echo got: {}",
        echo.output()
    );
    let status = echo.wait_exit(PATIENCE).expect("echo exits after -n 1");
    assert!(status.success());
}

#[test]
fn publisher_killed_and_restarted_is_found_again() {
    let p = partition("restart");
    let sub = node(&p, MsgsPrefix::Gz);
    let (_s, got) = doubles_on(&sub, "/r");
    let mut first = double_publisher(&p, "/r", 1.0);
    assert!(eventually(PATIENCE, || got
        .lock()
        .unwrap()
        .iter()
        .any(|(v, _)| *v == 1.0)));
    first.kill(); // SIGKILL: no UNADVERTISE, no BYE
    assert!(
        eventually(PATIENCE, || sub.topic_info("/r").unwrap().is_empty()),
        "the silent publisher expires"
    );
    assert!(sub.stats().peers_expired >= 1);
    let _second = double_publisher(&p, "/r", 2.0);
    assert!(eventually(PATIENCE, || got
        .lock()
        .unwrap()
        .iter()
        .any(|(v, _)| *v == 2.0)));
}

#[test]
fn partitions_are_kept_apart_across_processes() {
    let (p1, p2) = (partition("procA"), partition("procB"));
    let sub1 = node(&p1, MsgsPrefix::Gz);
    let sub2 = node(&p2, MsgsPrefix::Gz);
    let (_s1, n1) = counted(&sub1, "/x");
    let (_s2, n2) = counted(&sub2, "/x");
    let _publisher = double_publisher(&p1, "/x", 1.0);
    assert!(eventually(PATIENCE, || n1.load(Ordering::SeqCst) >= 20));
    assert_eq!(
        n2.load(Ordering::SeqCst),
        0,
        "nothing crosses into the other partition"
    );
    assert!(sub2.topic_list().is_empty());
}

#[test]
fn gz_topic_publishes_a_model_from_text() {
    let p = partition("climodel");
    let sub = node(&p, MsgsPrefix::Gz);
    let got = inbox::<Model>();
    let g = got.clone();
    let _s = sub
        .subscribe("/state", move |m: Model, i: &MessageInfo| {
            g.lock().unwrap().push((m, i.clone()))
        })
        .unwrap();
    let _publisher = ChildGuard::spawn(
        GZ_TOPIC,
        &[
            "-t",
            "/state",
            "-m",
            "Model",
            "-p",
            r#"name: "ur3e" joint { name: "elbow_joint" axis1 { position: 0.5 velocity: -1e-3 } }"#,
            "--rate",
            "20",
            "--wait",
            "0",
        ],
        &p,
    );
    assert!(eventually(PATIENCE, || !got.lock().unwrap().is_empty()));
    let (m, info) = got.lock().unwrap()[0].clone();
    assert_eq!(info.type_name, "gz.msgs.Model");
    assert_eq!(m.name, "ur3e");
    let axis = m.joint[0].axis1.clone().unwrap();
    assert_eq!(
        (m.joint[0].name.as_str(), axis.position, axis.velocity),
        ("elbow_joint", 0.5, -1e-3)
    );
}

#[test]
fn gz_topic_lists_and_describes_topics() {
    let p = partition("clilist");
    let n = node(&p, MsgsPrefix::Gz);
    let _a = n.advertise::<Double>("/alpha").unwrap();
    let _b = n.advertise::<Model>("/beta").unwrap();
    let _sub = n
        .subscribe("/beta", |_: Model, _: &MessageInfo| {})
        .unwrap();
    // `-l` prints what it heard during its listening window (re-advertisements come every
    // second); on starved cores a window can pass without one, so ask again.
    let listed = eventually(PATIENCE, || {
        gz_topic_succeeds(&["-l"], &p) == "/alpha\n/beta"
    });
    assert!(listed);
    // `-i` waits until a publisher is known (up to --wait).
    let out = gz_topic_succeeds(&["-i", "-t", "/beta", "--wait", "30"], &p);
    // The subscriber answers at once, the publisher only with its next advertisement: both
    // must be listed.
    assert_eq!(
        out,
        format!(
            "Publishers [Address, Message Type]:\n  {a}, gz.msgs.Model\nSubscribers [Address, Message Type]:\n  {a}, gz.msgs.Model",
            a = n.address()
        )
    );
}

#[test]
fn gz_topic_rejects_bad_input_with_a_clear_error() {
    let p = partition("clibad");
    // Each fails, saying so on stderr (with, for some, why).
    for (args, why) in [
        (&["-t", "/x", "-m", "Double", "-p", "data: nan"][..], ""),
        (&["-t", "/x", "-m", "Double", "-p", "datum: 1"][..], ""),
        (
            &["-t", "/x", "-m", "gz.msgs.Image", "-p", "width: 1"][..],
            "",
        ),
        (&["-t", "/x", "-p", "data: 1"][..], ""),
        (&["-e"][..], ""),
        // Echo with a deadline and nothing to receive.
        (
            &["-e", "-t", "/nobody", "-n", "1", "-d", "0.5"][..],
            "received 0 of 1",
        ),
    ] {
        let out = std::process::Command::new(GZ_TOPIC)
            .args(args)
            .env("GZ_PARTITION", &p)
            .env("GZ_IP", "127.0.0.1")
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} must fail");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("gz-topic: "), "{args:?}: {err}");
        assert!(err.contains(why), "{args:?}: {err}");
    }
}

#[test]
fn invalid_environment_is_reported() {
    let out = std::process::Command::new(GZ_TOPIC)
        .args(["-l", "--wait", "0"])
        .env("GZ_IP", "0.0.0.0")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("GZ_IP") && err.contains("0.0.0.0"), "{err}");
}

#[test]
fn gz_topic_lists_our_subscriber_with_its_type_from_another_process() {
    let p = partition("clisubs");
    let n = node(&p, MsgsPrefix::Gz);
    let _typed = n
        .subscribe("/cmd", |_: Double, _: &MessageInfo| {})
        .unwrap();
    let _any = n.subscribe_raw("/any", |_, _| {}).unwrap();
    // `-i` asks (SUBSCRIBERS_REQ) and prints the answers (SUBSCRIBERS_REP) in `gz topic -i`'s
    // layout; no publisher on the topic (it waits --wait for one) is not an error when it has
    // subscribers.
    let out = gz_topic_succeeds(&["-i", "-t", "/cmd", "--wait", "3"], &p);
    assert_eq!(
        out,
        format!(
            "No publishers on topic [/cmd]\nSubscribers [Address, Message Type]:\n  {}, gz.msgs.Double",
            n.address()
        )
    );
    let info = gz_topic_succeeds(&["-i", "-t", "/any", "--wait", "3"], &p);
    assert!(
        info.ends_with(&format!("{}, google.protobuf.Message", n.address())),
        "a subscription to any type"
    );
    // `-l` lists subscribed topics too, as `gz topic -l` does since gz-transport 13.
    assert!(eventually(PATIENCE, || {
        gz_topic_succeeds(&["-l", "--wait", "2"], &p) == "/any\n/cmd"
    }));
    // Neither publishers nor subscribers: non-zero, saying so.
    let mut none = ChildGuard::spawn(GZ_TOPIC, &["-i", "-t", "/nobody", "--wait", "1"], &p);
    assert!(!none.wait_exit(PATIENCE).expect("-i exits").success());
}
