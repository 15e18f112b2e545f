//! Inline media written out to files: a `data:` URI in an image part becomes a file beside the
//! trajectory, referenced by a relative path, as ATIF (and Harbor's validator) expect.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::{Error, Result};

/// Writes every inline image of `trajectory` (an image part whose `source.path` is a
/// `data:<type>;base64,…` URI, subagents included) to `folder` as `<hash>.<ext>`, named by the
/// first 16 hex digits of the SHA-256 of its bytes, and points the part at
/// `<reference>/<hash>.<ext>` instead. `reference` is how the trajectory's readers reach
/// `folder`: relative to the folder the trajectory is saved in. A name made from the content
/// never depends on where or under which name the trajectory is saved, so two imports of the
/// same log are the same trajectory, and the same image is one file. Returns the files
/// written, each once; `folder` is created only when there is something to write.
///
/// # Errors
/// [`Error::Media`] naming the JSON Pointer of a part whose data is not valid base64, and
/// [`Error::Io`] when `folder` or a file cannot be written.
pub fn write_media(trajectory: &mut Value, folder: &Path, reference: &str) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let mut pending = Vec::new();
    collect(trajectory, String::new(), &mut pending);
    for pointer in pending {
        let Some(path) = trajectory.pointer_mut(&pointer) else { continue };
        let Some((media_type, data)) = path
            .as_str()
            .and_then(|p| p.strip_prefix("data:"))
            .and_then(|r| r.split_once(";base64,"))
        else {
            continue;
        };
        let bytes = decode_base64(data).ok_or_else(|| Error::Media {
            pointer: pointer.clone(),
            reason: "its data: URI is not valid base64".to_owned(),
        })?;
        let ext = match media_type {
            "image/jpeg" => "jpg",
            "image/gif" => "gif",
            "image/webp" => "webp",
            _ => "png",
        };
        let name = format!("{}.{ext}", content_name(&bytes));
        if written.is_empty() {
            std::fs::create_dir_all(folder)
                .map_err(|source| Error::Io { path: folder.to_path_buf(), source })?;
        }
        let file = folder.join(&name);
        if !written.contains(&file) {
            std::fs::write(&file, bytes)
                .map_err(|source| Error::Io { path: file.clone(), source })?;
            written.push(file);
        }
        let reference = reference.trim_end_matches('/');
        *path =
            Value::String(if reference.is_empty() { name } else { format!("{reference}/{name}") });
    }
    Ok(written)
}

/// The first 16 hex digits of the SHA-256 of `bytes`: a file name that only the content
/// decides.
fn content_name(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(bytes);
    digest.iter().take(8).map(|byte| format!("{byte:02x}")).collect()
}

/// The pointers of every `source.path` of an image part holding a `data:` URI.
fn collect(value: &Value, pointer: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            let is_image = map.get("type").and_then(Value::as_str) == Some("image");
            let inline = map
                .get("source")
                .and_then(|s| s.get("path"))
                .and_then(Value::as_str)
                .is_some_and(|p| p.starts_with("data:"));
            if is_image && inline {
                out.push(format!("{pointer}/source/path"));
                return;
            }
            for (key, item) in map {
                let key = key.replace('~', "~0").replace('/', "~1");
                collect(item, format!("{pointer}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (idx, item) in items.iter().enumerate() {
                collect(item, format!("{pointer}/{idx}"), out);
            }
        }
        _ => {}
    }
}

/// Standard base64 (with or without padding, whitespace ignored), or `None` when invalid.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut buffer = 0u32;
    let mut bits = 0;
    let mut padding = 0;
    for byte in text.bytes() {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => {
                padding += 1;
                continue;
            }
            b' ' | b'\n' | b'\r' | b'\t' => continue,
            _ => return None,
        };
        if padding > 0 {
            return None;
        }
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    (padding <= 2).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes_with_and_without_padding_and_rejects_garbage() {
        assert_eq!(decode_base64("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(decode_base64("aGVsbG8").unwrap(), b"hello");
        assert_eq!(decode_base64("iVBORw0KGgo=").unwrap(), b"\x89PNG\r\n\x1a\n");
        assert!(decode_base64("a*b").is_none());
        assert!(decode_base64("aG=Vs").is_none());
    }
}
