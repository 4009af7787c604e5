//! Writing YAML scalars and comments that ROS's parameter parser (libyaml) and PyYAML read
//! back as the same strings, whatever a Gazebo names its models, joints and topics.

use std::fmt::Write;

/// `s` as a YAML scalar: plain where no YAML 1.1 reader could take it for anything but this
/// string (a node name such as `ur3e_1`), double-quoted otherwise.
pub fn scalar(s: &str) -> String {
    if is_plain_safe(s) {
        s.to_owned()
    } else {
        quoted(s)
    }
}

/// `s` as a YAML double-quoted scalar (the style of the original's config.yaml values).
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => push_printable(&mut out, c),
        }
    }
    out.push('"');
    out
}

/// `text` made safe to follow a `#` on one line: line breaks and characters a YAML stream
/// may not hold are written as their escapes; the rest is kept as it is.
pub fn comment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_printable(&mut out, c);
    }
    out
}

/// Pushes `c`, or its double-quoted escape when it breaks a line or is outside YAML's
/// printable set.
fn push_printable(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        // Printable, no line break in YAML 1.1 (which counts U+0085, U+2028, U+2029), and
        // not the byte-order mark (which libyaml's scanner skips where it finds one).
        ' '..='~'
        | '\u{a0}'..='\u{2027}'
        | '\u{202a}'..='\u{d7ff}'
        | '\u{e000}'..='\u{fefe}'
        | '\u{ff00}'..='\u{fffd}' => out.push(c),
        c if u32::from(c) >= 0x1_0000 => out.push(c),
        c if u32::from(c) < 0x100 => {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        }
        c => {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        }
    }
}

/// Whether `s` reads back as this string when written plain: a letter, `_` or `/` first
/// (so no number, date, or indicator such as `-`, `:`, `#`, `*`, quotes), then only
/// letters, digits and `_./-`, and none of the words YAML 1.1 or ROS's parser (`strtod`)
/// take for a boolean, null or number.
fn is_plain_safe(s: &str) -> bool {
    const NOT_STRINGS: [&str; 12] = [
        "y", "n", "yes", "no", "true", "false", "on", "off", "null", "nan", "inf", "infinity",
    ];
    let mut chars = s.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '_' || first == '/')
        && chars.all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c))
        && !NOT_STRINGS.contains(&s.to_ascii_lowercase().as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each name and the text written for it; every text was read back with PyYAML 6
    /// (`yaml.safe_load`, as a key, a value and a flow sequence item) as the same name.
    const WRITTEN: [(&str, &str); 31] = [
        ("ur3e_1", "ur3e_1"),
        ("/model/ur3e/joint/", "/model/ur3e/joint/"),
        ("a:b", "\"a:b\""),
        ("a: b", "\"a: b\""),
        ("a #b", "\"a #b\""),
        ("say \"hi\"", "\"say \\\"hi\\\"\""),
        ("it's", "\"it's\""),
        ("  lead", "\"  lead\""),
        ("trail ", "\"trail \""),
        ("true", "\"true\""),
        ("True", "\"True\""),
        ("on", "\"on\""),
        ("n", "\"n\""),
        ("null", "\"null\""),
        ("inf", "\"inf\""),
        ("NaN", "\"NaN\""),
        ("1.5", "\"1.5\""),
        ("12", "\"12\""),
        ("0x1f", "\"0x1f\""),
        ("1e3", "\"1e3\""),
        (".inf", "\".inf\""),
        ("-3", "\"-3\""),
        ("2001-12-14", "\"2001-12-14\""),
        ("", "\"\""),
        ("tab\there\nnl\r", "\"tab\\there\\nnl\\r\""),
        (
            "\u{7}bell\u{85}nel\u{2028}ls\u{7f}",
            "\"\\x07bell\\x85nel\\u2028ls\\x7f\"",
        ),
        ("back\\slash", "\"back\\\\slash\""),
        ("ünï", "\"ünï\""),
        ("- item", "\"- item\""),
        ("[a]", "\"[a]\""),
        ("*alias", "\"*alias\""),
    ];

    #[test]
    fn scalars_are_plain_only_where_that_reads_back_as_the_string() {
        for (name, text) in WRITTEN {
            assert_eq!(scalar(name), text, "{name:?}");
        }
    }

    #[test]
    fn quoted_always_quotes() {
        assert_eq!(quoted("ur3e_1"), "\"ur3e_1\"");
        assert_eq!(quoted("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
    }

    #[test]
    fn comments_keep_to_one_line() {
        assert_eq!(
            comment("on /m/b\"q\n# x\u{2029}/0/cmd_pos"),
            "on /m/b\"q\\n# x\\u2029/0/cmd_pos"
        );
    }
}
