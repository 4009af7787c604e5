//! The Fast DDS settings of the process's own writers and readers (`config/fastdds_profiles.xml`,
//! compiled in): applied as the default publisher and subscriber profiles before the process's
//! DDS participant exists, without taking a user's own profiles file away.
//!
//! Fast DDS reads its profiles once per process, from the file `FASTRTPS_DEFAULT_PROFILES_FILE`
//! names, when the first participant is created. So [`DdsProfile::apply`] writes a file for
//! this process and points the variable at it until the node exists, then restores the
//! variable (child processes see the user's value) and removes the file:
//!
//! * no user file: the file holds the bridge's two profiles;
//! * a user file: a copy of it with the bridge's profiles added to its `<profiles>`, except
//!   where the user has a default profile of the same kind (`publisher`/`data_writer`, or
//!   `subscriber`/`data_reader` with `is_default_profile="true"`): the user's wins. A file
//!   that cannot be read or parsed is left to Fast DDS as it is (which reports it);
//! * `SAS_ROBOT_DRIVER_GAZEBO_FASTDDS_PROFILE=off`: nothing is changed.
//!
//! A topic-named profile of the user's (`profile_name="/ur3e_1/get/joint_states"`) wins over
//! any default, as rmw_fastrtps looks it up first.

use std::ffi::OsString;
use std::path::PathBuf;

/// The bridge's profiles (see the comments in the file).
pub const BRIDGE_PROFILES: &str = include_str!("../../../../config/fastdds_profiles.xml");
/// The variable Fast DDS 2.x reads its profiles file from.
const PROFILES_FILE_VARIABLE: &str = "FASTRTPS_DEFAULT_PROFILES_FILE";
/// `off` leaves Fast DDS at its defaults.
pub const SWITCH_VARIABLE: &str = "SAS_ROBOT_DRIVER_GAZEBO_FASTDDS_PROFILE";

/// The bridge's profiles applied for this process's participant; restores the environment
/// and removes the file it wrote when dropped (once the node exists).
#[derive(Debug)]
pub struct DdsProfile {
    /// The variable's value before, to restore (`None`: it was unset).
    previous: Option<Option<OsString>>,
    file: Option<PathBuf>,
    note: String,
}

impl DdsProfile {
    /// Points Fast DDS at the bridge's profiles (merged into the user's, if any) for the
    /// participant created next. Call before the ROS context and node are created; keep the
    /// guard until the node exists. Never fails: what could not be done is in [`note`](Self::note).
    pub fn apply() -> Self {
        let user_file = std::env::var_os(PROFILES_FILE_VARIABLE);
        let unchanged = |note: String| DdsProfile {
            previous: None,
            file: None,
            note,
        };
        if std::env::var(SWITCH_VARIABLE).is_ok_and(|v| v.eq_ignore_ascii_case("off")) {
            return unchanged(format!(
                "{SWITCH_VARIABLE}=off: Fast DDS runs with its default writer and reader settings"
            ));
        }
        let (text, note) = match &user_file {
            None => (
                BRIDGE_PROFILES.to_string(),
                "the bridge's Fast DDS writer and reader settings apply (config/fastdds_profiles.xml)"
                    .to_string(),
            ),
            Some(path) => {
                let path = PathBuf::from(path);
                let user = match std::fs::read_to_string(&path) {
                    Ok(user) => user,
                    Err(err) => {
                        return unchanged(format!(
                            "{PROFILES_FILE_VARIABLE} names {}, which cannot be read ({err}); \
                             the bridge's Fast DDS settings are not applied",
                            path.display()
                        ))
                    }
                };
                match merge(&user, BRIDGE_PROFILES) {
                    Ok(Merged { added, .. }) if added.is_empty() => {
                        return unchanged(format!(
                            "{} has default writer and reader profiles of its own; the bridge's \
                             are not applied",
                            path.display()
                        ))
                    }
                    Ok(Merged { text, added }) => (
                        text,
                        format!(
                            "{} applies, with the bridge's default {} profile(s) added",
                            path.display(),
                            added.join(" and ")
                        ),
                    ),
                    Err(problem) => {
                        return unchanged(format!(
                            "{} cannot be read as Fast DDS profiles ({problem}); the bridge's \
                             settings are not applied",
                            path.display()
                        ))
                    }
                }
            }
        };
        let file = std::env::temp_dir().join(format!(
            "sas_robot_driver_gazebo-{}-fastdds.xml",
            std::process::id()
        ));
        if let Err(err) = std::fs::write(&file, text) {
            return unchanged(format!(
                "cannot write {} ({err}); the bridge's Fast DDS settings are not applied",
                file.display()
            ));
        }
        // Before any thread of ours reads the environment, and restored once the node exists.
        std::env::set_var(PROFILES_FILE_VARIABLE, &file);
        DdsProfile {
            previous: Some(user_file),
            file: Some(file),
            note,
        }
    }

    /// What was applied, for the log once the node exists.
    pub fn note(&self) -> &str {
        &self.note
    }
}

impl Drop for DdsProfile {
    fn drop(&mut self) {
        match self.previous.take() {
            Some(Some(value)) => std::env::set_var(PROFILES_FILE_VARIABLE, value),
            Some(None) => std::env::remove_var(PROFILES_FILE_VARIABLE),
            None => {}
        }
        if let Some(file) = self.file.take() {
            let _ = std::fs::remove_file(file);
        }
    }
}

/// A user's profiles with some of ours added.
#[derive(Debug)]
struct Merged {
    text: String,
    /// The kinds of ours added: `writer`, `reader`.
    added: Vec<&'static str>,
}

/// Adds the default profiles of `ours` to the user's profiles document `user`, but for the
/// kinds (writer, reader) the user has a default profile of.
fn merge(user: &str, ours: &str) -> Result<Merged, String> {
    let user_doc = roxmltree::Document::parse(user).map_err(|err| err.to_string())?;
    let ours_doc = roxmltree::Document::parse(ours).expect("the bridge's profiles parse");
    let root = user_doc.root_element();
    let profiles = match root.tag_name().name() {
        "profiles" => Some(root),
        "dds" => root.children().find(|node| node.has_tag_name("profiles")),
        other => {
            return Err(format!(
                "its root element is <{other}>, not <dds> or <profiles>"
            ))
        }
    };
    let has_default = |kinds: [&str; 2]| {
        profiles.is_some_and(|profiles| {
            profiles.children().any(|node| {
                kinds.iter().any(|kind| node.has_tag_name(*kind))
                    && node.attribute("is_default_profile") == Some("true")
            })
        })
    };
    let mut added = Vec::new();
    let mut insert = String::new();
    for (kind, tags) in [
        ("writer", ["publisher", "data_writer"]),
        ("reader", ["subscriber", "data_reader"]),
    ] {
        if has_default(tags) {
            continue;
        }
        let profile = ours_doc
            .descendants()
            .find(|node| node.has_tag_name(tags[0]))
            .expect("the bridge's profiles have both kinds");
        insert.push_str("\n    ");
        insert.push_str(&ours[profile.range()]);
        added.push(kind);
    }
    if added.is_empty() {
        return Ok(Merged {
            text: user.to_string(),
            added,
        });
    }
    let (at, wrapped) = match profiles {
        Some(profiles) => {
            let range = profiles.range();
            let element = &user[range.clone()];
            if element.trim_end().ends_with("/>") {
                // `<profiles/>`: replaced by one holding ours.
                let text = format!(
                    "{}<profiles>{insert}\n  </profiles>{}",
                    &user[..range.start],
                    &user[range.end..]
                );
                return Ok(Merged { text, added });
            }
            let closing = element
                .rfind("</")
                .expect("a closed element has a closing tag");
            (range.start + closing, insert)
        }
        None => {
            // A <dds> without <profiles>: one is added before its end.
            let range = root.range();
            let closing = user[range.clone()]
                .rfind("</")
                .ok_or("its <dds> element is empty")?;
            (
                range.start + closing,
                format!("<profiles>{insert}\n  </profiles>\n"),
            )
        }
    };
    let mut text = String::with_capacity(user.len() + wrapped.len());
    text.push_str(&user[..at]);
    text.push_str(&wrapped);
    text.push('\n');
    text.push_str(&user[at..]);
    Ok(Merged { text, added })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults(text: &str) -> Vec<(String, String)> {
        let doc = roxmltree::Document::parse(text).expect("the merged file parses");
        doc.descendants()
            .filter(|node| node.attribute("is_default_profile") == Some("true"))
            .map(|node| {
                (
                    node.tag_name().name().to_string(),
                    node.attribute("profile_name").unwrap_or("").to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn the_bridge_profiles_are_a_default_writer_and_reader() {
        assert_eq!(
            defaults(BRIDGE_PROFILES),
            [
                ("publisher".into(), "sas_robot_driver_gazebo_writers".into()),
                (
                    "subscriber".into(),
                    "sas_robot_driver_gazebo_readers".into()
                )
            ]
        );
    }

    #[test]
    fn a_users_participant_profile_keeps_its_place_and_gets_our_defaults_beside_it() {
        let user = r#"<?xml version="1.0" encoding="UTF-8" ?>
<dds xmlns="http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles">
  <profiles>
    <participant profile_name="udp_only" is_default_profile="true">
      <rtps><useBuiltinTransports>false</useBuiltinTransports></rtps>
    </participant>
  </profiles>
  <log><use_default>FALSE</use_default></log>
</dds>"#;
        let merged = merge(user, BRIDGE_PROFILES).unwrap();
        assert_eq!(merged.added, ["writer", "reader"]);
        assert_eq!(
            defaults(&merged.text),
            [
                ("participant".into(), "udp_only".into()),
                ("publisher".into(), "sas_robot_driver_gazebo_writers".into()),
                (
                    "subscriber".into(),
                    "sas_robot_driver_gazebo_readers".into()
                )
            ]
        );
        assert!(merged
            .text
            .contains("<log><use_default>FALSE</use_default></log>"));
        assert!(merged.text.contains("<nackSupressionDuration>"));
    }

    #[test]
    fn a_users_default_writer_wins_and_ours_is_not_added() {
        let user = r#"<profiles>
  <data_writer profile_name="mine" is_default_profile="true"><qos/></data_writer>
</profiles>"#;
        let merged = merge(user, BRIDGE_PROFILES).unwrap();
        assert_eq!(merged.added, ["reader"]);
        assert_eq!(
            defaults(&merged.text),
            [
                ("data_writer".into(), "mine".into()),
                (
                    "subscriber".into(),
                    "sas_robot_driver_gazebo_readers".into()
                )
            ]
        );
        let both = r#"<dds><profiles>
  <publisher profile_name="w" is_default_profile="true"/>
  <subscriber profile_name="r" is_default_profile="true"/>
</profiles></dds>"#;
        let merged = merge(both, BRIDGE_PROFILES).unwrap();
        assert!(merged.added.is_empty());
        assert_eq!(merged.text, both);
    }

    #[test]
    fn empty_or_missing_profiles_get_ours_and_a_broken_file_is_named() {
        for user in ["<dds><profiles/></dds>", "<dds><log/></dds>"] {
            let merged = merge(user, BRIDGE_PROFILES).unwrap();
            assert_eq!(defaults(&merged.text).len(), 2, "{}", merged.text);
        }
        assert!(merge("<dds><profiles>", BRIDGE_PROFILES).is_err());
        let err = merge("<fastdds/>", BRIDGE_PROFILES).unwrap_err();
        assert!(err.contains("<fastdds>"), "{err}");
    }
}
