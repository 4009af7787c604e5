//! Plain CDR (XCDR1, either byte order) as ROS 2 Jazzy's rmw_fastrtps writes it: a reader for
//! the fields a handler of [`ListenerSubscription::new_serialized`](crate::ListenerSubscription::new_serialized)
//! wants, and a writer producing the same bytes (for tests and tools).
//!
//! Layout rules: a 4-byte encapsulation header (`00 00` big-endian, `00 01` little-endian, two
//! option bytes), then the body, whose alignment counts from its first byte; a string is a `u32`
//! length (its NUL included) and the bytes; a sequence a `u32` count and the elements; an `f64`
//! is aligned to 8, except in an empty sequence (Fast CDR writes no padding then).

/// Why bytes are not the message a reader expected.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum CdrError {
    #[error("encapsulation {0:#06x} is not plain CDR (XCDR1, 0x0000 or 0x0001)")]
    Encapsulation(u16),
    #[error("the message ends after {length} bytes, inside {field}")]
    Truncated { field: &'static str, length: usize },
}

/// Reads a message's fields in order, each named for the error if the bytes end inside it.
pub struct CdrReader<'a> {
    body: &'a [u8],
    offset: usize,
    little_endian: bool,
}

impl<'a> CdrReader<'a> {
    /// A reader of `bytes`, the encapsulation header first.
    ///
    /// # Errors
    /// Fewer than four bytes, or an encapsulation other than plain CDR.
    pub fn new(bytes: &'a [u8]) -> Result<Self, CdrError> {
        let (header, body) = match bytes {
            [a, b, _, _, body @ ..] => ([*a, *b], body),
            _ => {
                return Err(CdrError::Truncated {
                    field: "the encapsulation header",
                    length: bytes.len(),
                })
            }
        };
        let little_endian = match u16::from_be_bytes(header) {
            0x0000 => false,
            0x0001 => true,
            other => return Err(CdrError::Encapsulation(other)),
        };
        Ok(CdrReader {
            body,
            offset: 0,
            little_endian,
        })
    }

    /// The next `u32` (or the bits of an `i32`).
    ///
    /// # Errors
    /// The bytes end inside it.
    pub fn u32(&mut self, field: &'static str) -> Result<u32, CdrError> {
        let bytes: [u8; 4] = self.take(4, 4, field)?.try_into().expect("four bytes");
        Ok(if self.little_endian {
            u32::from_le_bytes(bytes)
        } else {
            u32::from_be_bytes(bytes)
        })
    }

    /// Steps over a string.
    ///
    /// # Errors
    /// The bytes end inside it.
    pub fn skip_string(&mut self, field: &'static str) -> Result<(), CdrError> {
        let length = self.u32(field)? as usize;
        self.take(1, length, field).map(drop)
    }

    /// The next string's bytes, its terminating NUL left out.
    ///
    /// # Errors
    /// The bytes end inside it.
    pub fn string_bytes(&mut self, field: &'static str) -> Result<&'a [u8], CdrError> {
        let length = self.u32(field)? as usize;
        let bytes = self.take(1, length, field)?;
        Ok(bytes.strip_suffix(&[0]).unwrap_or(bytes))
    }

    /// A `sequence<f64>` into `into` (cleared first; its allocation kept).
    ///
    /// # Errors
    /// The bytes end inside it (a count beyond the message is this error, never an allocation).
    pub fn f64_sequence(
        &mut self,
        field: &'static str,
        into: &mut Vec<f64>,
    ) -> Result<(), CdrError> {
        let count = self.u32(field)? as usize;
        into.clear();
        if count == 0 {
            return Ok(());
        }
        let length = count.checked_mul(8).ok_or(self.truncated(field))?;
        let bytes = self.take(8, length, field)?;
        let little_endian = self.little_endian;
        into.extend(bytes.chunks_exact(8).map(|chunk| {
            let chunk: [u8; 8] = chunk.try_into().expect("eight bytes");
            if little_endian {
                f64::from_le_bytes(chunk)
            } else {
                f64::from_be_bytes(chunk)
            }
        }));
        Ok(())
    }

    /// The next `length` bytes after aligning to `align`.
    fn take(
        &mut self,
        align: usize,
        length: usize,
        field: &'static str,
    ) -> Result<&'a [u8], CdrError> {
        let start = self.offset.next_multiple_of(align);
        let end = start
            .checked_add(length)
            .filter(|&end| end <= self.body.len())
            .ok_or(self.truncated(field))?;
        self.offset = end;
        Ok(&self.body[start..end])
    }

    fn truncated(&self, field: &'static str) -> CdrError {
        CdrError::Truncated {
            field,
            // Counted from the message's first byte, the encapsulation header included.
            length: self.body.len() + 4,
        }
    }
}

/// Writes plain CDR as Fast CDR does (padding bytes `0xEE`, so that a reader that ignores
/// alignment reads garbage).
pub struct CdrWriter {
    bytes: Vec<u8>,
    little_endian: bool,
}

impl CdrWriter {
    /// The encapsulation header for the byte order.
    pub fn new(little_endian: bool) -> Self {
        let header = if little_endian {
            [0, 1, 0, 0]
        } else {
            [0, 0, 0, 0]
        };
        CdrWriter {
            bytes: header.to_vec(),
            little_endian,
        }
    }

    /// The message so far, header included.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn u32(&mut self, value: u32) -> &mut Self {
        self.align(4);
        self.put(value.to_le_bytes(), value.to_be_bytes());
        self
    }

    pub fn string(&mut self, value: &str) -> &mut Self {
        self.u32(value.len() as u32 + 1);
        self.bytes.extend(value.as_bytes());
        self.bytes.push(0);
        self
    }

    pub fn f64s(&mut self, values: &[f64]) -> &mut Self {
        self.u32(values.len() as u32);
        if !values.is_empty() {
            self.align(8);
        }
        for value in values {
            self.put(value.to_le_bytes(), value.to_be_bytes());
        }
        self
    }

    /// One value's bytes in the writer's byte order.
    fn put<const N: usize>(&mut self, little_endian: [u8; N], big_endian: [u8; N]) {
        self.bytes.extend(if self.little_endian {
            little_endian
        } else {
            big_endian
        });
    }

    fn align(&mut self, to: usize) {
        while (self.bytes.len() - 4) % to != 0 {
            self.bytes.push(0xEE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_back_in_either_byte_order_after_strings_of_every_length() {
        for little_endian in [true, false] {
            for length in 0..9 {
                let label = "x".repeat(length);
                let mut writer = CdrWriter::new(little_endian);
                writer
                    .string(&label)
                    .u32(7)
                    .f64s(&[1.5, -0.0])
                    .f64s(&[])
                    .u32(9);
                let mut reader = CdrReader::new(writer.bytes()).unwrap();
                let mut values = vec![42.0];
                assert_eq!(reader.string_bytes("label").unwrap(), label.as_bytes());
                assert_eq!(reader.u32("size").unwrap(), 7);
                reader.f64_sequence("data", &mut values).unwrap();
                assert_eq!(values, [1.5, -0.0]);
                assert!(values[1].is_sign_negative());
                reader.f64_sequence("empty", &mut values).unwrap();
                assert!(values.is_empty());
                assert_eq!(reader.u32("after").unwrap(), 9, "length {length}");
            }
        }
    }

    #[test]
    fn every_truncation_is_an_error_naming_the_field() {
        let mut writer = CdrWriter::new(true);
        writer.string("label").f64s(&[1.0, 2.0]);
        let bytes = writer.bytes();
        let read = |bytes| -> Result<(), CdrError> {
            let mut reader = CdrReader::new(bytes)?;
            reader.skip_string("label")?;
            reader.f64_sequence("data", &mut Vec::new())
        };
        for length in 0..bytes.len() {
            let error = read(&bytes[..length]).unwrap_err();
            let expected = match length {
                0..4 => "the encapsulation header",
                4..14 => "label",
                _ => "data",
            };
            assert_eq!(
                error,
                CdrError::Truncated {
                    field: expected,
                    length
                }
            );
        }
        assert!(read(bytes).is_ok());
    }

    #[test]
    fn a_count_beyond_the_message_is_an_error_not_an_allocation() {
        let mut writer = CdrWriter::new(true);
        writer.u32(u32::MAX);
        let mut reader = CdrReader::new(writer.bytes()).unwrap();
        assert_eq!(
            reader.f64_sequence("data", &mut Vec::new()).unwrap_err(),
            CdrError::Truncated {
                field: "data",
                length: 8
            }
        );
    }

    #[test]
    fn other_encapsulations_are_refused() {
        // PLAIN_CDR2, little-endian.
        assert_eq!(
            CdrReader::new(&[0, 7, 0, 0]).err(),
            Some(CdrError::Encapsulation(0x0007))
        );
    }
}
