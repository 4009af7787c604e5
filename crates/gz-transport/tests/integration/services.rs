//! Services against the real C++ implementation both ways: `ign service` (Ignition transport
//! 11's CLI) lists, describes and calls our responders, and our requester calls a C++
//! responder built here from `tests/fixtures/responder.cc` against the real library. Then our
//! own CLI (`gz-service`), and the errors a caller gets instead of a hang.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use gz_transport::msgs::{Boolean, StringMsg, WorldControl};
use gz_transport::{MsgsPrefix, Node, ServiceError, ServiceResponder};

use crate::support::{eventually, node, partition, run, ChildGuard, PATIENCE};
use test_support::IGN_SERVICE;

/// Our CLI.
const GZ_SERVICE: &str = env!("CARGO_BIN_EXE_gz-service");

/// The stdout of `command`, run to completion; panics with its stderr unless it ran and
/// succeeded (`what` it was to do).
fn succeeded(command: &mut Command, what: &str) -> Vec<u8> {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    assert!(
        output.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// The C++ responder, compiled once per test run.
fn cpp_responder() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let source = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/responder.cc");
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cpp-responder");
        let flags = succeeded(
            Command::new("pkg-config").args([
                "--cflags",
                "--libs",
                "ignition-transport11",
                "ignition-msgs8",
            ]),
            "pkg-config finds ignition-transport11 (scripts/setup installs libignition-transport-dev)",
        );
        let flags = String::from_utf8(flags).unwrap();
        succeeded(
            Command::new("g++")
                .arg("-O1")
                .arg(source)
                .args(flags.split_whitespace())
                .arg("-o")
                .arg(&out),
            "the C++ responder builds",
        );
        out
    })
}

/// Our node offers an echo service and world control; `ign service` finds and calls them.
/// `n`'s responder of `/world/w/control` that answers each request's `pause`.
fn pause_echoing_control(n: &Node) -> ServiceResponder {
    n.advertise_service("/world/w/control", |req: WorldControl| {
        Some(Boolean {
            header: None,
            data: req.pause,
        })
    })
    .unwrap()
}

#[test]
fn ign_service_lists_describes_and_calls_our_responders() {
    let p = partition("ignsrv");
    let n = node(&p, MsgsPrefix::Ignition);
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let _echo = n
        .advertise_service("/echo", move |req: StringMsg| {
            c.fetch_add(1, Ordering::SeqCst);
            Some(StringMsg {
                header: None,
                data: req.data.to_uppercase(),
            })
        })
        .unwrap();
    let _control = pause_echoing_control(&n);
    // `-l` prints what it heard while it listened; on starved cores a window can pass without
    // our once-a-second advertisement, so ask again.
    let listed = eventually(PATIENCE, || {
        let (ok, out) = run(IGN_SERVICE, &["-l"], &p);
        ok && out.lines().any(|l| l == "/echo") && out.lines().any(|l| l == "/world/w/control")
    });
    assert!(listed, "ign service -l lists both services");
    let (ok, info) = run(IGN_SERVICE, &["-i", "-s", "/echo"], &p);
    assert!(ok, "{info}");
    assert!(
        info.contains("ignition.msgs.StringMsg, ignition.msgs.StringMsg"),
        "ign service -i shows our request and response types: {info}"
    );
    let (ok, out) = run(
        IGN_SERVICE,
        &[
            "-s",
            "/echo",
            "--reqtype",
            "ignition.msgs.StringMsg",
            "--reptype",
            "ignition.msgs.StringMsg",
            "--timeout",
            "20000",
            "--req",
            "data: \"hello gazebo\"",
        ],
        &p,
    );
    assert!(ok && out.contains("data: \"HELLO GAZEBO\""), "{out}");
    let (ok, out) = run(
        IGN_SERVICE,
        &[
            "-s",
            "/world/w/control",
            "--reqtype",
            "ignition.msgs.WorldControl",
            "--reptype",
            "ignition.msgs.Boolean",
            "--timeout",
            "20000",
            "--req",
            "pause: true",
        ],
        &p,
    );
    assert!(ok && out.contains("data: true"), "{out}");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(n.service_stats().requests_served, 2);
}

/// Our requester against the real C++ responder: an answer, and a failure reported as such.
#[test]
fn our_requests_get_the_cpp_responders_answers() {
    let p = partition("cppsrv");
    let mut responder = ChildGuard::spawn(cpp_responder().to_str().unwrap(), &[], &p);
    assert!(
        responder.wait_line(PATIENCE, |l| l == "ready").is_some(),
        "the C++ responder starts: {:?}",
        responder.seen
    );
    let n = node(&p, MsgsPrefix::Ignition);
    let request = StringMsg {
        header: None,
        data: "from rust".into(),
    };
    let answer: StringMsg = n.request("/echo", &request, PATIENCE).unwrap();
    assert_eq!(answer.data, "echo: from rust");
    // A second call reuses the connection.
    let answer: StringMsg = n.request("/echo", &request, PATIENCE).unwrap();
    assert_eq!(answer.data, "echo: from rust");
    let failed = n.request::<_, StringMsg>("/fail", &request, PATIENCE);
    assert!(
        matches!(failed, Err(ServiceError::Failed { .. })),
        "{failed:?}"
    );
    let info = n.service_info("/echo").unwrap();
    assert_eq!(info.len(), 1);
    assert_eq!(
        (
            info[0].request_type.as_str(),
            info[0].response_type.as_str()
        ),
        ("ignition.msgs.StringMsg", "ignition.msgs.StringMsg")
    );
    // Asked with other types, the call names what is offered instead of waiting.
    let wrong = n.request::<_, Boolean>("/echo", &request, PATIENCE);
    match wrong {
        Err(ServiceError::WrongTypes { offered, .. }) => {
            assert_eq!(
                offered,
                "ignition.msgs.StringMsg -> ignition.msgs.StringMsg"
            )
        }
        other => panic!("expected WrongTypes, got {other:?}"),
    }
    // Killed (no BYE): it is forgotten within the silence interval, and a call then says so.
    responder.kill();
    assert!(eventually(PATIENCE, || n
        .service_list()
        .unwrap()
        .is_empty()));
    let gone = n.request::<_, StringMsg>("/echo", &request, Duration::from_millis(300));
    assert!(
        matches!(gone, Err(ServiceError::NoResponder { .. })),
        "{gone:?}"
    );
}

/// Our CLI against our responder, with Harmonic's type names.
#[test]
fn gz_service_lists_describes_and_calls() {
    let p = partition("gzsrv");
    let n = node(&p, MsgsPrefix::Gz);
    let _control = pause_echoing_control(&n);
    let listed = eventually(PATIENCE, || {
        let (ok, out) = run(GZ_SERVICE, &["-l"], &p);
        ok && out == "/world/w/control"
    });
    assert!(listed);
    let (ok, out) = run(
        GZ_SERVICE,
        &["-i", "-s", "/world/w/control", "--wait", "30"],
        &p,
    );
    assert!(
        ok && out.contains("gz.msgs.WorldControl, gz.msgs.Boolean"),
        "{out}"
    );
    let (ok, out) = run(
        GZ_SERVICE,
        &[
            "-s",
            "/world/w/control",
            "--reqtype",
            "WorldControl",
            "--reptype",
            "Boolean",
            "--timeout",
            "30000",
            "--req",
            "pause: true",
        ],
        &p,
    );
    assert!(ok && out.contains("data: true"), "{out}");
    // No such service: a clear error and a non-zero exit within the timeout.
    let started = Instant::now();
    let mut missing = ChildGuard::spawn(
        GZ_SERVICE,
        &[
            "-s",
            "/nobody",
            "--reqtype",
            "WorldControl",
            "--reptype",
            "Boolean",
            "--timeout",
            "500",
            "--req",
            "pause: true",
        ],
        &p,
    );
    let status = missing.wait_exit(PATIENCE).expect("exits");
    assert!(!status.success());
    assert!(started.elapsed() < PATIENCE);
    missing.output(); // drains what is pending into `seen`
    assert!(
        missing
            .seen
            .iter()
            .any(|l| l.contains("no responder of service \"/nobody\"")),
        "{:?}",
        missing.seen
    );
}

/// Node to node in this process, and the handler's failure and a withdrawn service.
#[test]
fn calls_between_our_nodes_and_their_failures() {
    let p = partition("rustsrv");
    let server = node(&p, MsgsPrefix::Gz);
    let client = node(&p, MsgsPrefix::Gz);
    let responder = server
        .advertise_service("/pose", |req: StringMsg| {
            (req.data != "refuse").then_some(Boolean {
                header: None,
                data: true,
            })
        })
        .unwrap();
    let ask = |data: &str, timeout| {
        client.request::<_, Boolean>(
            "/pose",
            &StringMsg {
                header: None,
                data: data.into(),
            },
            timeout,
        )
    };
    assert!(ask("ok", PATIENCE).unwrap().data);
    assert!(matches!(
        ask("refuse", PATIENCE),
        Err(ServiceError::Failed { .. })
    ));
    // The same node calling its own service runs the handler directly.
    let own: Boolean = server
        .request(
            "/pose",
            &StringMsg {
                header: None,
                data: "ok".into(),
            },
            PATIENCE,
        )
        .unwrap();
    assert!(own.data);
    drop(responder);
    assert!(
        eventually(PATIENCE, || client.service_list().unwrap().is_empty()),
        "UNADVERTISE reaches the client"
    );
    let started = Instant::now();
    assert!(matches!(
        ask("ok", Duration::from_millis(300)),
        Err(ServiceError::NoResponder { .. })
    ));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "bounded by the timeout"
    );
}
