//! The text headers in front of the engine's files.
//!
//! A header is a list of text lines, each ended by a newline:
//!
//! ```text
//! line 0        <format> <version>[ <anything>]     the signature
//! line 1..k     <Name>: <value>                     fields, any order
//! end mark      see below
//! ```
//!
//! Two encodings exist ([`HeaderEncoding`]):
//!
//! * **UTF-16BE** (`Oware Endgames`, `Oware Opening Book`): every UTF-16
//!   code unit as two bytes, high byte first, so `O` is `00 4F` and the
//!   newline `00 0A`; characters outside the BMP are surrogate pairs. The
//!   header ends with an empty line, i.e. the units `00 0A 00 0A` end the
//!   last field line and the header.
//!
//!   ```text
//!   00 4F 00 77 … 00 30 00 0A     "Oware Endgames 1.0\n"
//!   00 44 00 61 … 00 34 00 0A     "Date: Tue Oct 28 15:33:23 CET 2014\n"
//!   …                             more fields
//!   00 0A                         empty line: the body starts after it
//!   ```
//!
//! * **UTF-8** (`DOE Opening Book`): every line as UTF-8 bytes ended by
//!   `0A`, then the two bytes `00 0A` (a UTF-16BE newline, as the engine's
//!   Java `writeChars("\n")` emits it) end the header. A line may be empty
//!   here; the end is `00 0A` at the start of a line.
//!
//! Reading: the signature must start with the expected format name and a
//! space (else [`FormatError::UnknownSignature`]); the version is the word
//! after it, and anything after the version is kept but ignored. A field
//! line is split at its first `:`, name and value trimmed. Lines without a
//! `:` and fields nobody asks for are kept verbatim, in order, so writing a
//! header read from a file reproduces its bytes exactly. A header (end mark
//! included) is at most [`MAX_HEADER_LEN`] bytes: a file with no end mark
//! in that many bytes is refused, whatever its length.

use std::io::Write;

use super::error::FormatError;
use super::signature::{detect, encode_text, signature_prefix, FileKind};
// The encoding is part of the signature (`detect` needs it); readers of
// headers keep naming it `header::HeaderEncoding`.
pub use super::signature::HeaderEncoding;

/// The longest header accepted or written, in bytes, end mark included.
/// The engine's headers are under 350 bytes.
pub const MAX_HEADER_LEN: usize = 64 * 1024;

/// A header: the signature line and the following lines, in file order.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Header {
    /// The whole first line, without its newline.
    signature: String,
    /// Bytes of `signature` taken by the format name (before the space).
    format_len: usize,
    /// The other lines, without newlines.
    lines: Vec<String>,
}

/// What a piece of header text is, for [`check_text`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Text {
    /// A field name: non-blank, no `:`, no surrounding spaces.
    Name,
    /// A field value or a format name: any single line.
    Line,
    /// A version: one non-empty word.
    Word,
}

/// Refuses text that would break the line structure (or, for a name, the
/// `Name: value` split).
fn check_text(text: &str, kind: Text) -> Result<(), FormatError> {
    let reason = if text.contains(['\n', '\r', '\0']) {
        "header text cannot hold a newline, carriage return or NUL"
    } else if kind == Text::Name && (text.trim().is_empty() || text.contains(':')) {
        "a field name must be non-blank and hold no ':'"
    } else if kind == Text::Name && text.trim() != text {
        "a field name cannot start or end with spaces"
    } else if kind == Text::Word && (text.is_empty() || text.contains(char::is_whitespace)) {
        "a version must be one non-empty word"
    } else {
        return Ok(());
    };
    Err(FormatError::BadHeaderText { text: text.to_string(), reason })
}

impl Header {
    /// A header with signature `<format> <version>` and no fields.
    pub fn new(format: &str, version: &str) -> Result<Header, FormatError> {
        check_text(format, Text::Line)?;
        if format.trim() != format || format.is_empty() {
            return Err(FormatError::BadHeaderText {
                text: format.to_string(),
                reason: "a format name must be non-empty without leading or trailing spaces",
            });
        }
        check_text(version, Text::Word)?;
        Ok(Header { signature: format!("{format} {version}"), format_len: format.len(), lines: Vec::new() })
    }

    /// Reads a header of `format` at the start of `bytes`. Returns it and
    /// its length in bytes (where the body starts).
    pub fn read(
        bytes: &[u8],
        format: &'static str,
        encoding: HeaderEncoding,
    ) -> Result<(Header, usize), FormatError> {
        let prefix = signature_prefix(format, encoding);
        if !bytes.starts_with(&prefix) {
            if prefix.starts_with(bytes) {
                return Err(FormatError::TruncatedHeader { format, offset: bytes.len() as u64 });
            }
            return Err(FormatError::UnknownSignature {
                expected: format,
                found: first_line_preview(bytes, encoding),
                looks_like: detect(bytes).map(|kind| kind.format()),
            });
        }
        let (mut lines, length) = match encoding {
            HeaderEncoding::Utf16Be => read_utf16_lines(bytes, format)?,
            HeaderEncoding::Utf8 => read_utf8_lines(bytes, format)?,
        };
        // The prefix check guarantees a first line.
        let signature = lines.remove(0);
        Ok((Header { signature, format_len: format.len(), lines }, length))
    }

    /// The whole signature line, e.g. `Oware Endgames 2.0`.
    pub fn signature(&self) -> &str {
        &self.signature
    }

    /// The format name, e.g. `Oware Endgames`.
    pub fn format(&self) -> &str {
        &self.signature[..self.format_len]
    }

    /// The version: the word after the format name, e.g. `2.0`.
    pub fn version(&self) -> &str {
        let rest = self.signature[self.format_len..].trim_start_matches(' ');
        rest.split(' ').next().unwrap_or("")
    }

    /// Every line after the signature, verbatim, in file order.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// The `Name: value` fields in file order (lines without `:` skipped).
    pub fn fields(&self) -> impl Iterator<Item = (&str, &str)> {
        self.lines.iter().filter_map(|line| split_field(line))
    }

    /// The value of the first field called `name` (case-sensitive).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// The first field called `name` as a decimal number: `Ok(None)` when
    /// absent, an error naming the field when it is not a number.
    pub fn number(&self, name: &str) -> Result<Option<u64>, FormatError> {
        match self.get(name) {
            None => Ok(None),
            Some(value) => value.parse().map(Some).map_err(|_| FormatError::BadHeaderField {
                format: static_format(self.format()),
                field: name.to_string(),
                value: value.to_string(),
            }),
        }
    }

    /// Sets field `name` to `value`: rewrites the first line of that name
    /// in place as `name: value`, or appends one.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), FormatError> {
        check_text(name, Text::Name)?;
        check_text(value, Text::Line)?;
        let line = format!("{name}: {value}");
        match self.lines.iter().position(|l| split_field(l).is_some_and(|(n, _)| n == name)) {
            Some(at) => self.lines[at] = line,
            None => self.lines.push(line),
        }
        Ok(())
    }

    /// Builder form of [`Header::set`].
    pub fn with(mut self, name: &str, value: &str) -> Result<Header, FormatError> {
        self.set(name, value)?;
        Ok(self)
    }

    /// Removes every field called `name`; returns how many lines went.
    pub fn remove(&mut self, name: &str) -> usize {
        let before = self.lines.len();
        self.lines.retain(|l| split_field(l).is_none_or(|(n, _)| n != name));
        before - self.lines.len()
    }

    /// A header `<format> <version>` with `fields` in order and the count
    /// field `count_name` set to `count`: where `fields` lists it (its given
    /// value replaced), else first after the signature.
    pub fn with_count(
        format: &str,
        version: &str,
        fields: &[(&str, &str)],
        count_name: &str,
        count: u64,
    ) -> Result<Header, FormatError> {
        let mut header = Header::new(format, version)?;
        let count = count.to_string();
        if !fields.iter().any(|(name, _)| *name == count_name) {
            header.set(count_name, &count)?;
        }
        for (name, value) in fields {
            header.set(name, value)?;
        }
        header.set(count_name, &count)?;
        Ok(header)
    }

    /// The header's bytes in `encoding`, end mark included. Refuses a
    /// header longer than [`MAX_HEADER_LEN`] (no reader would take it).
    pub fn encode(&self, encoding: HeaderEncoding) -> Result<Vec<u8>, FormatError> {
        let mut out = Vec::new();
        for line in std::iter::once(&self.signature).chain(&self.lines) {
            encode_text(&mut out, line, encoding);
            encode_text(&mut out, "\n", encoding);
        }
        match encoding {
            HeaderEncoding::Utf16Be => encode_text(&mut out, "\n", encoding),
            HeaderEncoding::Utf8 => out.extend_from_slice(&[0x00, 0x0A]),
        }
        if out.len() > MAX_HEADER_LEN {
            return Err(FormatError::HeaderTooLong {
                format: static_format(self.format()),
                limit: MAX_HEADER_LEN,
            });
        }
        Ok(out)
    }

    /// Writes [`Header::encode`]'s bytes.
    pub fn write<W: Write>(&self, out: &mut W, encoding: HeaderEncoding) -> Result<(), FormatError> {
        let bytes = self.encode(encoding)?;
        out.write_all(&bytes).map_err(FormatError::stream)
    }
}

/// Errors carry `&'static str` format names; headers of our own formats
/// map to the module constants, anything else to a fixed label.
fn static_format(format: &str) -> &'static str {
    [FileKind::Endgames, FileKind::OpeningBook, FileKind::Doe]
        .into_iter()
        .map(FileKind::format)
        .find(|known| *known == format)
        .unwrap_or("header")
}

/// `Name: value` → (`Name`, `value`), both trimmed.
fn split_field(line: &str) -> Option<(&str, &str)> {
    let (name, value) = line.split_once(':')?;
    Some((name.trim(), value.trim()))
}

/// The start of the first line, for error messages: at most 40 characters.
fn first_line_preview(bytes: &[u8], encoding: HeaderEncoding) -> String {
    const CHARS: usize = 40;
    match encoding {
        HeaderEncoding::Utf8 => String::from_utf8_lossy(&bytes[..bytes.len().min(4 * CHARS)])
            .chars()
            .take_while(|&c| c != '\n')
            .take(CHARS)
            .collect(),
        HeaderEncoding::Utf16Be => {
            let units =
                bytes.chunks_exact(2).take(2 * CHARS).map(|pair| u16::from_be_bytes([pair[0], pair[1]]));
            let line: String = char::decode_utf16(units)
                .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
                .take_while(|&c| c != '\n')
                .take(CHARS)
                .collect();
            // Not text as UTF-16 (a text file read two bytes a character
            // shows CJK ideographs): show the bytes as a text file's.
            if line.chars().all(|c| c == ' ' || c.is_ascii_graphic()) {
                line
            } else {
                first_line_preview(bytes, HeaderEncoding::Utf8)
            }
        }
    }
}

/// Lines of a UTF-16BE header up to its empty line; returns them and the
/// header length in bytes.
fn read_utf16_lines(bytes: &[u8], format: &'static str) -> Result<(Vec<String>, usize), FormatError> {
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut offset = 0usize;
    loop {
        let start = offset;
        let unit = unit_at(bytes, &mut offset, format)?;
        let surrogate = |unit| FormatError::BadUtf16 { format, offset: start as u64, unit };
        let c = match unit {
            0xD800..=0xDBFF => {
                let low = unit_at(bytes, &mut offset, format)?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return Err(surrogate(unit));
                }
                let code = 0x10000 + ((unit as u32 - 0xD800) << 10) + (low as u32 - 0xDC00);
                char::from_u32(code).ok_or(surrogate(unit))?
            }
            0xDC00..=0xDFFF => return Err(surrogate(unit)),
            _ => char::from_u32(unit as u32).ok_or(surrogate(unit))?,
        };
        if c != '\n' {
            line.push(c);
        } else if line.is_empty() {
            return Ok((lines, offset));
        } else {
            lines.push(std::mem::take(&mut line));
        }
    }
}

/// The code unit at `offset`, advancing it; refuses to read past
/// [`MAX_HEADER_LEN`] or past the data.
fn unit_at(bytes: &[u8], offset: &mut usize, format: &'static str) -> Result<u16, FormatError> {
    if *offset + 2 > MAX_HEADER_LEN {
        return Err(FormatError::HeaderTooLong { format, limit: MAX_HEADER_LEN });
    }
    let Some(pair) = bytes.get(*offset..*offset + 2) else {
        return Err(FormatError::TruncatedHeader { format, offset: bytes.len() as u64 });
    };
    *offset += 2;
    Ok(u16::from_be_bytes([pair[0], pair[1]]))
}

/// Lines of a UTF-8 header up to its `00 0A` end mark; returns them and
/// the header length in bytes.
fn read_utf8_lines(bytes: &[u8], format: &'static str) -> Result<(Vec<String>, usize), FormatError> {
    let limit = bytes.len().min(MAX_HEADER_LEN);
    let window = &bytes[..limit];
    let mut lines = Vec::new();
    let mut start = 0usize;
    loop {
        let Some(length) = window[start..].iter().position(|&b| b == b'\n') else {
            return Err(too_long_or_truncated(bytes, format));
        };
        let text = std::str::from_utf8(&window[start..start + length])
            .map_err(|e| FormatError::BadUtf8 { format, offset: (start + e.valid_up_to()) as u64 })?;
        lines.push(text.to_string());
        start += length + 1;
        // A mark cut off by the window is reported by the next search.
        if window.get(start..start + 2) == Some(&[0x00, 0x0A]) {
            return Ok((lines, start + 2));
        }
    }
}

fn too_long_or_truncated(bytes: &[u8], format: &'static str) -> FormatError {
    if bytes.len() >= MAX_HEADER_LEN {
        FormatError::HeaderTooLong { format, limit: MAX_HEADER_LEN }
    } else {
        FormatError::TruncatedHeader { format, offset: bytes.len() as u64 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORMAT: &str = "Oware Endgames";

    fn utf16(text: &str) -> Vec<u8> {
        text.encode_utf16().flat_map(|u| u.to_be_bytes()).collect()
    }

    #[test]
    fn utf16_header_reads_fields_in_order_and_round_trips() {
        let text = "Oware Endgames 2.0 beta\nDate: today\nPositions: 13\nodd line\nX:y:z\n\n";
        let mut bytes = utf16(text);
        bytes.extend_from_slice(&[1, 2, 3]);
        let (header, length) = Header::read(&bytes, FORMAT, HeaderEncoding::Utf16Be).unwrap();
        assert_eq!(length, bytes.len() - 3);
        assert_eq!(header.format(), FORMAT);
        assert_eq!(header.version(), "2.0");
        assert_eq!(header.signature(), "Oware Endgames 2.0 beta");
        assert_eq!(header.get("Positions"), Some("13"));
        assert_eq!(header.number("Positions").unwrap(), Some(13));
        assert_eq!(header.get("X"), Some("y:z"));
        assert!(matches!(header.number("Date"), Err(FormatError::BadHeaderField { .. })));
        let fields: Vec<_> = header.fields().map(|(n, _)| n).collect();
        assert_eq!(fields, ["Date", "Positions", "X"]);
        assert_eq!(header.lines().len(), 4);
        assert_eq!(header.encode(HeaderEncoding::Utf16Be).unwrap(), bytes[..length]);
    }

    #[test]
    fn astral_characters_are_surrogate_pairs() {
        let bytes = utf16("Oware Endgames 1.0\nName: 𝄞 clef\n\n");
        let (header, _) = Header::read(&bytes, FORMAT, HeaderEncoding::Utf16Be).unwrap();
        assert_eq!(header.get("Name"), Some("𝄞 clef"));
        assert_eq!(header.encode(HeaderEncoding::Utf16Be).unwrap(), bytes);
    }

    #[test]
    fn utf16_errors_are_typed() {
        let read = |bytes: &[u8]| Header::read(bytes, FORMAT, HeaderEncoding::Utf16Be);
        let good = utf16("Oware Endgames 1.0\nA: b\n\n");
        for cut in 0..good.len() {
            assert!(
                matches!(read(&good[..cut]), Err(FormatError::TruncatedHeader { offset, .. }) if offset == cut as u64),
                "cut at {cut}"
            );
        }
        let mut lone = utf16("Oware Endgames 1.0\nA: ");
        let at = lone.len() as u64;
        lone.extend_from_slice(&[0xDC, 0x00, 0x00, 0x0A, 0x00, 0x0A]);
        assert!(matches!(
            read(&lone),
            Err(FormatError::BadUtf16 { offset, unit: 0xDC00, .. }) if offset == at
        ));
        let mut unpaired = utf16("Oware Endgames 1.0\nA: ");
        unpaired.extend_from_slice(&[0xD8, 0x00, 0x00, 0x41, 0x00, 0x0A, 0x00, 0x0A]);
        assert!(matches!(read(&unpaired), Err(FormatError::BadUtf16 { unit: 0xD800, .. })));
        assert!(matches!(
            read(&utf16("Oware Opening Book 1.0\n\n")),
            Err(FormatError::UnknownSignature { looks_like: Some("Oware Opening Book"), .. })
        ));
        assert!(matches!(
            read(b"DOE Opening Book 1.0\n\0\n"),
            Err(FormatError::UnknownSignature { looks_like: Some("DOE Opening Book"), .. })
        ));
        let mut endless = utf16("Oware Endgames 1.0\n");
        endless.resize(MAX_HEADER_LEN + 10, b'a');
        assert!(matches!(read(&endless), Err(FormatError::HeaderTooLong { .. })));
    }

    #[test]
    fn utf8_header_ends_with_a_utf16_newline() {
        let read = |bytes: &[u8]| Header::read(bytes, "DOE Opening Book", HeaderEncoding::Utf8);
        let bytes = b"DOE Opening Book 1.0\nEntries: 5\n\nDate: x\n\x00\x0A\x01\x02";
        let (header, length) = read(bytes).unwrap();
        assert_eq!(length, bytes.len() - 2);
        assert_eq!(header.version(), "1.0");
        assert_eq!(header.lines(), ["Entries: 5", "", "Date: x"]);
        assert_eq!(header.encode(HeaderEncoding::Utf8).unwrap(), &bytes[..length]);
        for cut in 0..length {
            assert!(matches!(read(&bytes[..cut]), Err(FormatError::TruncatedHeader { .. })), "cut at {cut}");
        }
        assert!(matches!(
            read(b"DOE Opening Book 1.0\nName: \xFF\n\x00\x0A"),
            Err(FormatError::BadUtf8 { offset: 27, .. })
        ));
        let mut endless = b"DOE Opening Book 1.0\n".to_vec();
        endless.resize(MAX_HEADER_LEN + 10, b'\n');
        assert!(matches!(read(&endless), Err(FormatError::HeaderTooLong { .. })));
    }

    #[test]
    fn built_headers_refuse_bad_text_and_keep_order() {
        let mut header = Header::new(FORMAT, "2.0").unwrap();
        header.set("Date", "now").unwrap();
        header.set("Positions", "1").unwrap();
        header.set("Date", "later").unwrap();
        assert_eq!(header.lines(), ["Date: later", "Positions: 1"]);
        assert_eq!(header.remove("Date"), 1);
        assert_eq!(header.lines(), ["Positions: 1"]);
        assert!(header.set("Na:me", "x").is_err());
        assert!(header.set("Name", "two\nlines").is_err());
        assert!(header.set(" ", "x").is_err());
        assert!(Header::new(FORMAT, "2 .0").is_err());
        assert!(Header::new("", "1.0").is_err());
        let mut big = Header::new(FORMAT, "2.0").unwrap();
        big.set("Big", &"x".repeat(MAX_HEADER_LEN)).unwrap();
        assert!(matches!(big.encode(HeaderEncoding::Utf8), Err(FormatError::HeaderTooLong { .. })));
    }
}
