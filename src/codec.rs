//! A minimal little-endian binary codec for checkpoints and manifests'
//! payloads: explicit, versioned by the caller, and failing with a typed
//! error (never a panic) on truncated or malformed input.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError(pub String);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DecodeError {}

#[derive(Default)]
pub struct Encoder {
    pub bytes: Vec<u8>,
}

impl Encoder {
    pub fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }
    pub fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    pub fn f64(&mut self, v: f64) {
        self.bytes.extend_from_slice(&v.to_bits().to_le_bytes());
    }
    pub fn blob(&mut self, v: &[u8]) {
        self.u64(v.len() as u64);
        self.bytes.extend_from_slice(v);
    }
    pub fn words(&mut self, v: &[u32]) {
        self.u64(v.len() as u64);
        for &w in v {
            self.u32(w);
        }
    }
    pub fn text(&mut self, v: &str) {
        self.blob(v.as_bytes());
    }
}

pub struct Decoder<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Decoder<'a> {
    pub fn new(bytes: &'a [u8]) -> Decoder<'a> {
        Decoder { bytes, at: 0 }
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.at.checked_add(len).filter(|&e| e <= self.bytes.len());
        let end =
            end.ok_or_else(|| DecodeError(format!("truncated at byte {} (wanted {len} more)", self.at)))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    /// Exactly `len` raw bytes (no length prefix).
    pub fn blob_exact(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        self.take(len)
    }
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    pub fn f64(&mut self) -> Result<f64, DecodeError> {
        Ok(f64::from_bits(self.u64()?))
    }
    fn length(&mut self, unit: usize) -> Result<usize, DecodeError> {
        let len = self.u64()?;
        let left = (self.bytes.len() - self.at) as u64;
        if len.saturating_mul(unit as u64) > left {
            return Err(DecodeError(format!("length {len} at byte {} exceeds the data", self.at - 8)));
        }
        Ok(len as usize)
    }
    pub fn blob(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = self.length(1)?;
        self.take(len)
    }
    pub fn words(&mut self) -> Result<Vec<u32>, DecodeError> {
        let len = self.length(4)?;
        (0..len).map(|_| self.u32()).collect()
    }
    pub fn text(&mut self) -> Result<String, DecodeError> {
        String::from_utf8(self.blob()?.to_vec()).map_err(|_| DecodeError("text is not UTF-8".into()))
    }
    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }
    pub fn finish(&self) -> Result<(), DecodeError> {
        if self.at == self.bytes.len() {
            Ok(())
        } else {
            Err(DecodeError(format!("{} trailing bytes", self.bytes.len() - self.at)))
        }
    }
}
