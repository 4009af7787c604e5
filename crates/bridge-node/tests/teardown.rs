//! A stop that hangs ends the process with status 1 and a line naming the step, after the
//! bound: run in a child process (this test binary again), since it ends the process.

use std::process::Command;
use std::time::{Duration, Instant};

use bridge_node::{ShutdownToken, Teardown};

const CHILD: &str = "BRIDGE_NODE_TEARDOWN_CHILD";

#[test]
fn a_hung_stop_exits_1_naming_the_step_after_the_bound() {
    if std::env::var_os(CHILD).is_some() {
        let teardown = Teardown::spawn("teardown-test", Duration::from_millis(300)).unwrap();
        let stop = ShutdownToken::new();
        let _countdown = teardown.begin_on(&stop);
        teardown.stage("stuck on purpose");
        stop.trigger();
        std::thread::sleep(Duration::from_secs(20));
        return; // not reached: the watchdog ends the process
    }
    let start = Instant::now();
    let child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_hung_stop_exits_1_naming_the_step_after_the_bound",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let elapsed = start.elapsed();
    let stderr = String::from_utf8_lossy(&child.stderr);
    assert_eq!(child.status.code(), Some(1), "{stderr}");
    assert!(
        stderr
            .contains("teardown-test: the stop hung: still stuck on purpose 0.3 s after it began"),
        "{stderr}"
    );
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
}
