//! The signature line that starts every engine file: the format names,
//! which layout a file holds ([`detect`]), and how its header text is
//! encoded. Below the header reader and the errors, which both name
//! formats, and below the layouts, which take their `FORMAT` from here.

/// How a header's text is stored.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum HeaderEncoding {
    /// Two bytes per UTF-16 code unit, big-endian; an empty line ends it.
    Utf16Be,
    /// UTF-8 lines, then the bytes `00 0A`.
    Utf8,
}

/// Which of the engine's layouts a file holds, from its first bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum FileKind {
    /// `Oware Endgames` (UTF-16BE header): [`super::endgames`].
    Endgames,
    /// `Oware Opening Book` (UTF-16BE header): [`super::opening_book`].
    OpeningBook,
    /// `DOE Opening Book` (UTF-8 header): [`super::doe`].
    Doe,
}

impl FileKind {
    /// The format name at the start of the signature line (each layout's
    /// `FORMAT`).
    pub const fn format(self) -> &'static str {
        match self {
            FileKind::Endgames => "Oware Endgames",
            FileKind::OpeningBook => "Oware Opening Book",
            FileKind::Doe => "DOE Opening Book",
        }
    }

    fn encoding(self) -> HeaderEncoding {
        match self {
            FileKind::Doe => HeaderEncoding::Utf8,
            FileKind::Endgames | FileKind::OpeningBook => HeaderEncoding::Utf16Be,
        }
    }
}

/// The kind of file whose bytes start with `bytes`: its signature line
/// begins with a known format name and a space. Nothing else is checked.
pub fn detect(bytes: &[u8]) -> Option<FileKind> {
    [FileKind::Endgames, FileKind::OpeningBook, FileKind::Doe].into_iter().find(|kind| {
        let prefix = signature_prefix(kind.format(), kind.encoding());
        bytes.starts_with(&prefix)
    })
}

/// The bytes a file of `format` starts with: the name and a space.
pub(crate) fn signature_prefix(format: &str, encoding: HeaderEncoding) -> Vec<u8> {
    let mut bytes = Vec::new();
    encode_text(&mut bytes, format, encoding);
    encode_text(&mut bytes, " ", encoding);
    bytes
}

pub(crate) fn encode_text(out: &mut Vec<u8>, text: &str, encoding: HeaderEncoding) {
    match encoding {
        HeaderEncoding::Utf8 => out.extend_from_slice(text.as_bytes()),
        HeaderEncoding::Utf16Be => {
            for unit in text.encode_utf16() {
                out.extend_from_slice(&unit.to_be_bytes());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detect_reads_the_signature_prefix() {
        let utf16: Vec<u8> = "Oware Endgames 2.0\n".encode_utf16().flat_map(|u| u.to_be_bytes()).collect();
        assert_eq!(detect(&utf16), Some(FileKind::Endgames));
        assert_eq!(detect(b"DOE Opening Book 1.0\n"), Some(FileKind::Doe));
        assert_eq!(detect(b"DOE Opening"), None);
        assert_eq!(detect(b""), None);
    }
}
