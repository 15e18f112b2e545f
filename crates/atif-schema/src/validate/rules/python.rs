//! What Python reads as a number from a string: the lax coercions of Pydantic and `float()`
//! that the harbor profile accepts.

/// What Pydantic's lax mode reads from a string as an integer: surrounding whitespace, a sign,
/// digits with single underscores between them, and an optional all-zero fraction (`"2.0"`).
pub(super) fn python_int(text: &str) -> Option<i128> {
    let trimmed = text.trim();
    let (negative, unsigned) = match trimmed.as_bytes().first() {
        Some(b'-') => (true, &trimmed[1..]),
        Some(b'+') => (false, &trimmed[1..]),
        _ => (false, trimmed),
    };
    let (whole, fraction) = match unsigned.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (unsigned, None),
    };
    if let Some(fraction) = fraction {
        if fraction.is_empty() || !fraction.bytes().all(|byte| byte == b'0') {
            return None;
        }
    }
    let digits = python_digits(whole)?;
    let magnitude: i128 = digits.parse().ok()?;
    Some(if negative { -magnitude } else { magnitude })
}

/// `text` without its underscores, when they only sit between ASCII digits.
fn python_digits(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    if bytes.is_empty() || !bytes[0].is_ascii_digit() || !bytes[bytes.len() - 1].is_ascii_digit() {
        return None;
    }
    let mut digits = String::with_capacity(text.len());
    for (index, &byte) in bytes.iter().enumerate() {
        match byte {
            b'0'..=b'9' => digits.push(char::from(byte)),
            b'_' if bytes[index - 1].is_ascii_digit() && bytes[index + 1].is_ascii_digit() => {}
            _ => return None,
        }
    }
    Some(digits)
}

/// What Python's `float()` (and Pydantic's lax mode) reads from a string.
pub(super) fn python_float(text: &str) -> Option<f64> {
    let trimmed = text.trim();
    let lower = trimmed.to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['+', '-']);
    if lower.len() - unsigned.len() > 1 {
        return None;
    }
    if ["nan", "inf", "infinity"].contains(&unsigned) {
        return Some(if unsigned == "nan" { f64::NAN } else { f64::INFINITY });
    }
    if !unsigned
        .bytes()
        .all(|byte| byte.is_ascii_digit() || matches!(byte, b'.' | b'e' | b'+' | b'-' | b'_'))
    {
        return None;
    }
    let cleaned: String = if lower.contains('_') {
        let bytes = lower.as_bytes();
        let ok = bytes.iter().enumerate().all(|(index, &byte)| {
            byte != b'_'
                || (index > 0
                    && index + 1 < bytes.len()
                    && bytes[index - 1].is_ascii_digit()
                    && bytes[index + 1].is_ascii_digit())
        });
        if !ok {
            return None;
        }
        lower.replace('_', "")
    } else {
        lower
    };
    cleaned.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lax_integers_follow_pydantic() {
        let cases: &[(&str, Option<i128>)] = &[
            ("7", Some(7)),
            (" 2", Some(2)),
            ("2.0", Some(2)),
            ("2.00", Some(2)),
            ("+7", Some(7)),
            ("-7", Some(-7)),
            ("1_000", Some(1000)),
            ("1_000.0", Some(1000)),
            ("\u{a0}7", Some(7)),
            ("2.5", None),
            ("0x2", None),
            ("1e3", None),
            ("2.", None),
            (".0", None),
            ("", None),
            ("1__0", None),
            ("_1", None),
            ("1_", None),
            ("- 7", None),
            ("+-7", None),
            ("\u{1c}7", None),
        ];
        for &(text, expected) in cases {
            assert_eq!(python_int(text), expected, "{text:?}");
        }
    }

    #[test]
    fn lax_floats_follow_python() {
        for text in [
            "0.1", "1e-3", "nan", "inf", "-inf", " 1.5 ", "NaN", "Infinity", "1_0", "+1", ".5",
            "5.",
        ] {
            assert!(python_float(text).is_some(), "{text:?}");
        }
        for text in ["0x1", "", "abc", "1.5e", "--1", "1__0"] {
            assert!(python_float(text).is_none(), "{text:?}");
        }
    }
}
