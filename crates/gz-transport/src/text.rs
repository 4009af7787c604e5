//! A small reader and writer of the protobuf text format for the messages of [`crate::msgs`],
//! as `gz topic -p`/`-e` use it: `data: 1.5`, `name: "m" joint { name: "j" axis1 { position: 0.5 } }`.
//!
//! Reading is strict: an unknown field, a wrong value kind or a non-finite number is an error
//! that names the field (a simulator must never be sent NaN). Writing follows protobuf's
//! `DebugString`: one field per line, nested messages indented, default values left out.

use std::fmt::Write as _;

use crate::msgs::{
    Axis, Boolean, Clock, Double, Empty, Header, HeaderMap, Joint, JointType, Model, Pose, PoseV,
    Quaternion, StringMsg, Time, Vector3d, WorldControl, WorldReset,
};

/// What is wrong with a text-format input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TextError {
    #[error("at byte {offset}: {message}")]
    Syntax { offset: usize, message: String },
    #[error("{message_type} has no field {field:?}")]
    UnknownField {
        message_type: &'static str,
        field: String,
    },
    #[error("{field}: {message}")]
    Value { field: String, message: String },
    #[error("gz-topic cannot read or write {0:?}; supported: {SUPPORTED}")]
    UnsupportedType(String),
}

/// Short names of the types [`encode_text`] and [`decode_to_text`] handle.
pub const SUPPORTED: &str =
    "Double, Model, Joint, Axis, Pose, Vector3d, Quaternion, Clock, Time, Header";

/// A parsed value: a scalar token, a quoted string, or a nested message.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Scalar(String),
    Str(String),
    Message(Vec<(String, Value)>),
}

/// A message type that can be read from and written to text.
pub trait TextFormat: Sized + Default {
    /// Read a message from parsed fields.
    fn from_fields(fields: &[(String, Value)]) -> Result<Self, TextError>;
    /// Write the non-default fields, one per line, at `indent`.
    fn write_fields(&self, out: &mut String, indent: usize);

    /// Parse a whole text-format message.
    fn from_text(text: &str) -> Result<Self, TextError> {
        Self::from_fields(&parse(text)?)
    }
    /// Render as protobuf `DebugString` does.
    fn to_text(&self) -> String {
        let mut out = String::new();
        self.write_fields(&mut out, 0);
        out
    }
}

/// Encode `text` as the protobuf bytes of the message type `short_name` (e.g. `"Double"`).
pub fn encode_text(short_name: &str, text: &str) -> Result<Vec<u8>, TextError> {
    use prost::Message;
    fn enc<M: TextFormat + Message>(text: &str) -> Result<Vec<u8>, TextError> {
        Ok(M::from_text(text)?.encode_to_vec())
    }
    match short_name {
        "Double" => enc::<Double>(text),
        "Model" => enc::<Model>(text),
        "Joint" => enc::<Joint>(text),
        "Axis" => enc::<Axis>(text),
        "Pose" => enc::<Pose>(text),
        "Vector3d" => enc::<Vector3d>(text),
        "Quaternion" => enc::<Quaternion>(text),
        "Clock" => enc::<Clock>(text),
        "Time" => enc::<Time>(text),
        "Header" => enc::<Header>(text),
        "Boolean" => enc::<Boolean>(text),
        "Empty" => enc::<Empty>(text),
        "StringMsg" => enc::<StringMsg>(text),
        "WorldReset" => enc::<WorldReset>(text),
        "WorldControl" => enc::<WorldControl>(text),
        "Pose_V" => enc::<PoseV>(text),
        other => Err(TextError::UnsupportedType(other.to_owned())),
    }
}

/// Decode protobuf `bytes` of type `short_name` and render them as text; `None` if the type
/// is not supported, `Some(Err)` if the bytes do not decode.
pub fn decode_to_text(
    short_name: &str,
    bytes: &[u8],
) -> Option<Result<String, prost::DecodeError>> {
    use prost::Message;
    fn dec<M: TextFormat + Message>(bytes: &[u8]) -> Result<String, prost::DecodeError> {
        M::decode(bytes).map(|m| m.to_text())
    }
    Some(match short_name {
        "Double" => dec::<Double>(bytes),
        "Model" => dec::<Model>(bytes),
        "Joint" => dec::<Joint>(bytes),
        "Axis" => dec::<Axis>(bytes),
        "Pose" => dec::<Pose>(bytes),
        "Vector3d" => dec::<Vector3d>(bytes),
        "Quaternion" => dec::<Quaternion>(bytes),
        "Clock" => dec::<Clock>(bytes),
        "Time" => dec::<Time>(bytes),
        "Header" => dec::<Header>(bytes),
        "Boolean" => dec::<Boolean>(bytes),
        "Empty" => dec::<Empty>(bytes),
        "StringMsg" => dec::<StringMsg>(bytes),
        "WorldReset" => dec::<WorldReset>(bytes),
        "WorldControl" => dec::<WorldControl>(bytes),
        "Pose_V" => dec::<PoseV>(bytes),
        _ => return None,
    })
}

// ---- parser ----------------------------------------------------------------------------------

struct Parser<'a> {
    src: &'a str,
    pos: usize,
}

/// Parse text into a field tree (no type knowledge yet).
pub fn parse(text: &str) -> Result<Vec<(String, Value)>, TextError> {
    let mut p = Parser { src: text, pos: 0 };
    let fields = p.fields(None)?;
    Ok(fields)
}

impl Parser<'_> {
    fn err<T>(&self, message: impl Into<String>) -> Result<T, TextError> {
        Err(TextError::Syntax {
            offset: self.pos,
            message: message.into(),
        })
    }

    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn skip_space(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() || c == ',' || c == ';' {
                self.pos += c.len_utf8();
            } else if c == '#' {
                while let Some(c) = self.peek() {
                    self.pos += c.len_utf8();
                    if c == '\n' {
                        break;
                    }
                }
            } else {
                break;
            }
        }
    }

    fn ident(&mut self) -> Result<String, TextError> {
        self.token(|c| c.is_ascii_alphanumeric() || c == '_', "a field name")
    }

    /// The longest run of (ASCII) characters that are `allowed`; an error naming `what` was
    /// expected if there is none.
    fn token(&mut self, allowed: impl Fn(char) -> bool, what: &str) -> Result<String, TextError> {
        let start = self.pos;
        while self.peek().is_some_and(&allowed) {
            self.pos += 1;
        }
        if start == self.pos {
            return self.err(format!("expected {what}"));
        }
        Ok(self.src[start..self.pos].to_owned())
    }

    /// Fields until `close` (or the end of input when `close` is None).
    fn fields(&mut self, close: Option<char>) -> Result<Vec<(String, Value)>, TextError> {
        let mut out = Vec::new();
        loop {
            self.skip_space();
            match (self.peek(), close) {
                (None, None) => return Ok(out),
                (None, Some(c)) => return self.err(format!("missing '{c}'")),
                (Some(c), Some(cl)) if c == cl => {
                    self.pos += 1;
                    return Ok(out);
                }
                _ => {}
            }
            let name = self.ident()?;
            self.skip_ws_only();
            let mut colon = false;
            if self.peek() == Some(':') {
                self.pos += 1;
                colon = true;
                self.skip_ws_only();
            }
            let value = match self.peek() {
                Some(open @ ('{' | '<')) => {
                    self.pos += 1;
                    Value::Message(self.fields(Some(if open == '{' { '}' } else { '>' }))?)
                }
                Some(q @ ('"' | '\'')) if colon => Value::Str(self.string(q)?),
                Some(_) if colon => Value::Scalar(self.scalar()?),
                _ => return self.err(format!("expected ':' or '{{' after {name:?}")),
            };
            out.push((name, value));
        }
    }

    fn skip_ws_only(&mut self) {
        while let Some(c) = self.peek().filter(|c| c.is_whitespace()) {
            self.pos += c.len_utf8();
        }
    }

    fn scalar(&mut self) -> Result<String, TextError> {
        self.token(
            |c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '+'),
            "a value",
        )
    }

    fn string(&mut self, quote: char) -> Result<String, TextError> {
        self.pos += 1;
        let mut bytes = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return self.err("unterminated string");
            };
            self.pos += c.len_utf8();
            match c {
                c if c == quote => break,
                '\\' => {
                    let Some(e) = self.peek() else {
                        return self.err("unterminated escape");
                    };
                    self.pos += e.len_utf8();
                    match e {
                        'n' => bytes.push(b'\n'),
                        't' => bytes.push(b'\t'),
                        'r' => bytes.push(b'\r'),
                        '0'..='7' => {
                            let mut v = e as u32 - '0' as u32;
                            for _ in 0..2 {
                                match self.peek() {
                                    Some(d @ '0'..='7') => {
                                        self.pos += 1;
                                        v = v * 8 + (d as u32 - '0' as u32);
                                    }
                                    _ => break,
                                }
                            }
                            if v > 255 {
                                return self.err("octal escape above \\377");
                            }
                            bytes.push(v as u8);
                        }
                        'x' => {
                            let hex: String = self.src[self.pos..]
                                .chars()
                                .take_while(char::is_ascii_hexdigit)
                                .take(2)
                                .collect();
                            if hex.is_empty() {
                                return self.err("\\x needs hex digits");
                            }
                            self.pos += hex.len();
                            bytes.push(u8::from_str_radix(&hex, 16).expect("hex digits"));
                        }
                        other => {
                            let mut buf = [0u8; 4];
                            bytes.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
                        }
                    }
                }
                other => {
                    let mut buf = [0u8; 4];
                    bytes.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
        String::from_utf8(bytes).or_else(|_| self.err("string is not UTF-8"))
    }
}

// ---- field kinds -----------------------------------------------------------------------------

fn value_err<T>(field: &str, message: impl Into<String>) -> Result<T, TextError> {
    Err(TextError::Value {
        field: field.to_owned(),
        message: message.into(),
    })
}

fn scalar<'v>(v: &'v Value, field: &str, what: &str) -> Result<&'v str, TextError> {
    match v {
        Value::Scalar(s) => Ok(s),
        Value::Str(_) => value_err(field, format!("expected {what}, got a string")),
        Value::Message(_) => value_err(field, format!("expected {what}, got a message")),
    }
}

/// How one field is read from a [`Value`] and written back.
trait FieldKind<T> {
    fn read(slot: &mut T, v: &Value, field: &str) -> Result<(), TextError>;
    fn write(slot: &T, name: &str, out: &mut String, indent: usize);
}

/// A field whose type knows its own text form.
struct Plain;
/// `Joint.type`, stored as `i32`, written as its enum name.
struct JointTypeName;

fn line(out: &mut String, indent: usize, name: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "{:indent$}{name}: {value}", "");
}

/// Shortest text that reads back to the same double (like protobuf's SimpleDtoa).
fn fmt_f64(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 || (1e-4..1e15).contains(&a) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

macro_rules! plain_scalar {
    ($t:ty, $what:literal, $parse:expr, $fmt:expr) => {
        impl FieldKind<$t> for Plain {
            fn read(slot: &mut $t, v: &Value, field: &str) -> Result<(), TextError> {
                let s = scalar(v, field, $what)?;
                let parse: fn(&str) -> Option<$t> = $parse;
                match parse(s) {
                    Some(x) => {
                        *slot = x;
                        Ok(())
                    }
                    None => value_err(field, format!("expected {}, got {s:?}", $what)),
                }
            }
            fn write(slot: &$t, name: &str, out: &mut String, indent: usize) {
                if *slot != <$t>::default() {
                    let fmt: fn(&$t) -> String = $fmt;
                    line(out, indent, name, fmt(slot));
                }
            }
        }
    };
}

plain_scalar!(
    f64,
    "a finite number",
    |s| s
        .trim_end_matches(['f', 'F'])
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite()),
    |v| fmt_f64(*v)
);
plain_scalar!(i64, "an integer", |s| s.parse().ok(), |v| v.to_string());
plain_scalar!(i32, "an integer", |s| s.parse().ok(), |v| v.to_string());
plain_scalar!(u32, "a non-negative integer", |s| s.parse().ok(), |v| v
    .to_string());
plain_scalar!(
    bool,
    "true or false",
    |s| match s {
        "true" | "True" | "t" | "1" => Some(true),
        "false" | "False" | "f" | "0" => Some(false),
        _ => None,
    },
    |v| v.to_string()
);

fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl FieldKind<String> for Plain {
    fn read(slot: &mut String, v: &Value, field: &str) -> Result<(), TextError> {
        match v {
            Value::Str(s) => {
                *slot = s.clone();
                Ok(())
            }
            _ => value_err(field, "expected a quoted string"),
        }
    }
    fn write(slot: &String, name: &str, out: &mut String, indent: usize) {
        if !slot.is_empty() {
            line(out, indent, name, quote(slot));
        }
    }
}

impl FieldKind<Vec<String>> for Plain {
    fn read(slot: &mut Vec<String>, v: &Value, field: &str) -> Result<(), TextError> {
        let mut s = String::new();
        <Plain as FieldKind<String>>::read(&mut s, v, field)?;
        slot.push(s);
        Ok(())
    }
    fn write(slot: &Vec<String>, name: &str, out: &mut String, indent: usize) {
        for s in slot {
            line(out, indent, name, quote(s));
        }
    }
}

fn message_fields<'v>(v: &'v Value, field: &str) -> Result<&'v [(String, Value)], TextError> {
    match v {
        Value::Message(f) => Ok(f),
        _ => value_err(field, "expected a message in { }"),
    }
}

fn write_message<M: TextFormat>(m: &M, name: &str, out: &mut String, indent: usize) {
    let _ = writeln!(out, "{:indent$}{name} {{", "");
    m.write_fields(out, indent + 2);
    let _ = writeln!(out, "{:indent$}}}", "");
}

impl<M: TextFormat> FieldKind<Option<M>> for Plain {
    fn read(slot: &mut Option<M>, v: &Value, field: &str) -> Result<(), TextError> {
        *slot = Some(M::from_fields(message_fields(v, field)?)?);
        Ok(())
    }
    fn write(slot: &Option<M>, name: &str, out: &mut String, indent: usize) {
        if let Some(m) = slot {
            write_message(m, name, out, indent);
        }
    }
}

impl<M: TextFormat> FieldKind<Vec<M>> for Plain {
    fn read(slot: &mut Vec<M>, v: &Value, field: &str) -> Result<(), TextError> {
        slot.push(M::from_fields(message_fields(v, field)?)?);
        Ok(())
    }
    fn write(slot: &Vec<M>, name: &str, out: &mut String, indent: usize) {
        for m in slot {
            write_message(m, name, out, indent);
        }
    }
}

/// Protobuf names of `gz.msgs.Joint.Type`.
const JOINT_TYPE_NAMES: [(JointType, &str); 9] = [
    (JointType::Revolute, "REVOLUTE"),
    (JointType::Revolute2, "REVOLUTE2"),
    (JointType::Prismatic, "PRISMATIC"),
    (JointType::Universal, "UNIVERSAL"),
    (JointType::Ball, "BALL"),
    (JointType::Screw, "SCREW"),
    (JointType::Gearbox, "GEARBOX"),
    (JointType::Fixed, "FIXED"),
    (JointType::Continuous, "CONTINUOUS"),
];

impl FieldKind<i32> for JointTypeName {
    fn read(slot: &mut i32, v: &Value, field: &str) -> Result<(), TextError> {
        let s = scalar(v, field, "a joint type")?;
        let parsed = JOINT_TYPE_NAMES
            .iter()
            .find(|(_, n)| *n == s)
            .map(|(t, _)| *t as i32)
            .or_else(|| {
                s.parse::<i32>()
                    .ok()
                    .filter(|n| JointType::try_from(*n).is_ok())
            });
        match parsed {
            Some(t) => {
                *slot = t;
                Ok(())
            }
            None => value_err(
                field,
                format!("unknown joint type {s:?} (REVOLUTE, PRISMATIC, …)"),
            ),
        }
    }
    fn write(slot: &i32, name: &str, out: &mut String, indent: usize) {
        if *slot != 0 {
            match JOINT_TYPE_NAMES.iter().find(|(t, _)| *t as i32 == *slot) {
                Some((_, n)) => line(out, indent, name, n),
                None => line(out, indent, name, slot),
            }
        }
    }
}

macro_rules! text_format {
    ($t:ident { $($name:literal => $field:ident as $kind:ident),* $(,)? }) => {
        impl TextFormat for $t {
            fn from_fields(fields: &[(String, Value)]) -> Result<Self, TextError> {
                let mut m = $t::default();
                for (name, value) in fields {
                    match name.as_str() {
                        $($name => <$kind as FieldKind<_>>::read(
                            &mut m.$field, value, concat!(stringify!($t), ".", $name))?,)*
                        _ => return Err(TextError::UnknownField {
                            message_type: stringify!($t),
                            field: name.clone(),
                        }),
                    }
                }
                Ok(m)
            }
            fn write_fields(&self, out: &mut String, indent: usize) {
                $(<$kind as FieldKind<_>>::write(&self.$field, $name, out, indent);)*
            }
        }
    };
}

text_format!(Time { "sec" => sec as Plain, "nsec" => nsec as Plain });
text_format!(HeaderMap { "key" => key as Plain, "value" => value as Plain });
text_format!(Header { "stamp" => stamp as Plain, "data" => data as Plain });
text_format!(Double { "header" => header as Plain, "data" => data as Plain });
text_format!(Vector3d {
    "header" => header as Plain, "x" => x as Plain, "y" => y as Plain, "z" => z as Plain,
});
text_format!(Quaternion {
    "header" => header as Plain, "x" => x as Plain, "y" => y as Plain, "z" => z as Plain,
    "w" => w as Plain,
});
text_format!(Pose {
    "header" => header as Plain, "name" => name as Plain, "id" => id as Plain,
    "position" => position as Plain, "orientation" => orientation as Plain,
});
text_format!(Boolean { "header" => header as Plain, "data" => data as Plain });
text_format!(Empty { "unused" => unused as Plain });
text_format!(StringMsg { "header" => header as Plain, "data" => data as Plain });
text_format!(WorldReset {
    "header" => header as Plain, "all" => all as Plain, "time_only" => time_only as Plain,
    "model_only" => model_only as Plain,
});
text_format!(WorldControl {
    "header" => header as Plain, "pause" => pause as Plain, "step" => step as Plain,
    "multi_step" => multi_step as Plain, "reset" => reset as Plain, "seed" => seed as Plain,
    "run_to_sim_time" => run_to_sim_time as Plain,
});
text_format!(PoseV { "header" => header as Plain, "pose" => pose as Plain });
text_format!(Axis {
    "header" => header as Plain, "xyz" => xyz as Plain, "limit_lower" => limit_lower as Plain,
    "limit_upper" => limit_upper as Plain, "limit_effort" => limit_effort as Plain,
    "limit_velocity" => limit_velocity as Plain, "damping" => damping as Plain,
    "friction" => friction as Plain, "position" => position as Plain,
    "velocity" => velocity as Plain, "force" => force as Plain,
    "acceleration" => acceleration as Plain, "xyz_expressed_in" => xyz_expressed_in as Plain,
});
text_format!(Joint {
    "header" => header as Plain, "name" => name as Plain, "id" => id as Plain,
    "type" => r#type as JointTypeName, "parent" => parent as Plain,
    "parent_id" => parent_id as Plain, "child" => child as Plain, "child_id" => child_id as Plain,
    "pose" => pose as Plain, "axis1" => axis1 as Plain, "axis2" => axis2 as Plain,
});
text_format!(Model {
    "header" => header as Plain, "name" => name as Plain, "id" => id as Plain,
    "is_static" => is_static as Plain, "pose" => pose as Plain, "joint" => joint as Plain,
    "deleted" => deleted as Plain, "scale" => scale as Plain,
    "self_collide" => self_collide as Plain, "model" => model as Plain,
});
text_format!(Clock {
    "header" => header as Plain, "system" => system as Plain, "real" => real as Plain,
    "sim" => sim as Plain,
});

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn double_reads_and_writes() {
        let d = Double::from_text("data: 1.5").unwrap();
        assert_eq!(d.data, 1.5);
        assert_eq!(d.to_text(), "data: 1.5\n");
        assert_eq!(Double::from_text("").unwrap(), Double::default());
        assert_eq!(
            Double {
                header: None,
                data: 1e-7
            }
            .to_text(),
            "data: 1e-7\n"
        );
        assert_eq!(
            Double::from_text(
                &Double {
                    header: None,
                    data: 1e-7
                }
                .to_text()
            )
            .unwrap()
            .data,
            1e-7
        );
    }

    #[test]
    fn model_text_gives_the_bytes_ign_topic_sends() {
        let text = r#"name: "ur3e" joint { name: "shoulder_pan_joint"
              axis1 { position: 0.5 velocity: -0.25 } } joint { name: "elbow_joint" axis1 { position: -1 } }"#;
        let bytes = encode_text("Model", text).unwrap();
        assert_eq!(bytes, include_bytes!("../tests/fixtures/ign_model.payload"));
        let m = Model::decode(&bytes[..]).unwrap();
        assert_eq!(
            m.to_text(),
            "name: \"ur3e\"\njoint {\n  name: \"shoulder_pan_joint\"\n  axis1 {\n    position: 0.5\n    velocity: -0.25\n  }\n}\njoint {\n  name: \"elbow_joint\"\n  axis1 {\n    position: -1\n  }\n}\n"
        );
        assert_eq!(Model::from_text(&m.to_text()).unwrap(), m);
    }

    #[test]
    fn clock_text_gives_the_bytes_ign_topic_sends() {
        let bytes = encode_text(
            "Clock",
            "sim { sec: 12 nsec: 500000000 } real { sec: 13 nsec: 1 }",
        )
        .unwrap();
        assert_eq!(bytes, include_bytes!("../tests/fixtures/ign_clock.payload"));
    }

    #[test]
    fn joint_type_by_name_or_number() {
        let j = Joint::from_text("name: 'j' type: PRISMATIC").unwrap();
        assert_eq!(j.r#type, JointType::Prismatic as i32);
        assert_eq!(j.to_text(), "name: \"j\"\ntype: PRISMATIC\n");
        assert_eq!(
            Joint::from_text("type: 7").unwrap().r#type,
            JointType::Fixed as i32
        );
    }

    #[test]
    fn strings_with_escapes_and_separators() {
        let p = Pose::from_text("name: \"a\\\"b\\n\\101\", position: { x: 1; y: 2 } # comment\n")
            .unwrap();
        assert_eq!(p.name, "a\"b\nA");
        assert_eq!(p.position.as_ref().unwrap().y, 2.0);
        assert_eq!(Pose::from_text(&p.to_text()).unwrap(), p);
    }

    #[test]
    fn errors_name_the_problem() {
        let e = |t: &str| Double::from_text(t).unwrap_err().to_string();
        assert_eq!(e("datum: 1"), "Double has no field \"datum\"");
        assert!(
            e("data: abc").contains("Double.data: expected a finite number"),
            "{}",
            e("data: abc")
        );
        assert!(e("data: nan").contains("finite"));
        assert!(e("data: inf").contains("finite"));
        assert!(e("data: \"1\"").contains("got a string"));
        assert!(e("data 1").contains("expected ':' or '{'"));
        assert!(Model::from_text("joint { name: \"j\"")
            .unwrap_err()
            .to_string()
            .contains("missing '}'"));
        assert!(Joint::from_text("type: HINGE").is_err());
        assert_eq!(
            encode_text("Image", ""),
            Err(TextError::UnsupportedType("Image".into()))
        );
    }

    #[test]
    fn decode_to_text_handles_unknown_and_corrupt() {
        assert!(decode_to_text("Image", &[]).is_none());
        assert!(decode_to_text("Double", &[0xff]).unwrap().is_err());
        assert_eq!(
            decode_to_text(
                "Double",
                include_bytes!("../tests/fixtures/ign_double_1_5.payload")
            ),
            Some(Ok("data: 1.5\n".to_owned()))
        );
    }
}
