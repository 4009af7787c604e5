//! sdf/README.md's joint-state topic table, parsed, against what gz-joint-sim publishes for
//! every world in both namings (gz-sim >= 6.8 and Ignition Gazebo 6.0–6.7), so the document
//! cannot drift from the simulator (nor the simulator from the document).

mod common;

use std::time::{Duration, Instant};

use common::*;
use gz_joint_sim::{JointStateTopicNaming, SimOptions, World};
use gz_transport::msgs;
use gz_transport::MsgsPrefix;

/// `(world file, scoped topic, Fortress < 6.8 topic)` rows of the table under the heading
/// "The joint-state topic on older Fortress".
fn readme_table() -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(sdf("README.md")).unwrap();
    let section = text
        .split("## The joint-state topic on older Fortress")
        .nth(1)
        .expect("sdf/README.md has the section on the joint-state topic");
    let mut lines = section.lines().skip_while(|l| !l.starts_with('|'));
    let header = lines.next().expect("a table");
    assert_eq!(
        header, "| world | Harmonic, Fortress ≥ 6.8 | Fortress < 6.8 |",
        "the table's columns changed: update this test"
    );
    assert!(lines.next().unwrap().starts_with("|---"));
    let unquote = |cell: &str| -> String {
        let cell = cell.trim();
        assert!(
            cell.starts_with('`') && cell.ends_with('`'),
            "cell not in backticks: {cell:?}"
        );
        cell.trim_matches('`').to_owned()
    };
    lines
        .take_while(|l| l.starts_with('|'))
        .map(|row| {
            let cells: Vec<&str> = row.trim_matches('|').split('|').collect();
            assert_eq!(cells.len(), 3, "{row}");
            (unquote(cells[0]), unquote(cells[1]), unquote(cells[2]))
        })
        .collect()
}

#[test]
fn the_table_covers_every_world_and_names_its_topics_in_both_spellings() {
    let rows = readme_table();
    let mut worlds: Vec<String> = std::fs::read_dir(sdf(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with("_world.sdf"))
        .collect();
    worlds.sort();
    let mut listed: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
    listed.sort();
    assert_eq!(listed, worlds, "every world of sdf/ has a row");
    for (file, scoped, pre_6_8) in &rows {
        for spelling in [file.clone(), format!("fortress/{file}")] {
            let w = World::load_with_resource_paths(sdf(&spelling), &[]).unwrap();
            assert_eq!(w.state_publishers.len(), 1, "{spelling}");
            let p = &w.state_publishers[0];
            assert_eq!(
                p.topic_for(JointStateTopicNaming::Scoped),
                scoped,
                "{spelling}"
            );
            assert_eq!(
                p.topic_for(JointStateTopicNaming::FortressPre6_8),
                pre_6_8,
                "{spelling}"
            );
        }
    }
}

#[test]
fn gz_joint_sim_publishes_the_tables_topics_in_each_naming() {
    loopback_only();
    let rows = readme_table();
    for (file, scoped, pre_6_8) in &rows {
        for (naming, topic, other) in [
            (JointStateTopicNaming::Scoped, scoped, pre_6_8),
            (JointStateTopicNaming::FortressPre6_8, pre_6_8, scoped),
        ] {
            let partition = partition(&format!("table-{}", file.trim_end_matches(".sdf")));
            let world =
                World::load_with_resource_paths(sdf(&format!("fortress/{file}")), &[]).unwrap();
            let (sim, node) = start_with_node(
                &world,
                &partition,
                SimOptions {
                    msgs_prefix: MsgsPrefix::Ignition,
                    joint_state_topic_naming: naming,
                    ..Default::default()
                },
            );
            let (_sub, rx) = subscribe_channel(&node, topic, |m: msgs::Model| m.joint.len());
            let joints = rx
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("{file} ({naming:?}): nothing on {topic}"));
            assert!(joints >= 6, "{file}: {joints} joints");
            // And only that topic carries the joint states.
            let deadline = Instant::now() + Duration::from_secs(2);
            while Instant::now() < deadline {
                assert!(
                    !node.topic_list().iter().any(|t| t == other),
                    "{file} ({naming:?}) also advertises {other}"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
            println!("{file} ({naming:?}): {topic}");
            sim.stop();
        }
    }
}
