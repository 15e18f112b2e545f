//! Typed values: strings, objects, arrays, integers, numbers and booleans, each with the type
//! error of the strict profile and the Python coercions that the harbor profile accepts.

use serde_json::{Map, Value};

use crate::validate::rules::Walker;
use crate::validate::rules::messages::{describe, quote};
use crate::validate::rules::pointer::Path;
use crate::validate::rules::python::{python_float, python_int};
use crate::validate::{Profile, Rule, Severity};

/// Findings about the elements of one scalar array, beyond which they are summarised.
const MAX_ELEMENT_FINDINGS: usize = 3;

/// The elements of a scalar array.
#[derive(Debug, Clone, Copy)]
pub(super) enum Scalar {
    Integer,
    Float,
}

impl Scalar {
    fn expected(self) -> &'static str {
        match self {
            Scalar::Integer => "an integer",
            Scalar::Float => "a number",
        }
    }
}

impl Walker<'_, '_> {
    /// A value for a message; a sentinel is shown as the literal it stands for.
    pub(super) fn describe(&self, value: &Value) -> String {
        match self.sentinel(value) {
            Some(literal) => format!("{literal} (a non-finite number)"),
            None => describe(value),
        }
    }

    /// Reports a value that is not `expected`: a type error, except for a sentinel standing
    /// for a non-finite literal, which the reader reported already (see
    /// [`Walker::non_finite_elsewhere`]).
    fn wrong_type(&mut self, value: &Value, path: &Path<'_>, expected: &str) {
        if let Some(literal) = self.sentinel(value) {
            self.non_finite_elsewhere(literal, path, expected);
            return;
        }
        self.error(Rule::Type, path, format!("expected {expected}, found {}", describe(value)));
    }

    /// A sentinel where something other than a float is expected: reported once in the strict
    /// profile (as non-finite-number, by the reader), and as a type error under Harbor.
    fn non_finite_elsewhere(&mut self, literal: &str, path: &Path<'_>, expected: &str) {
        if self.harbor() {
            self.error(
                Rule::Type,
                path,
                format!("expected {expected}, found {literal}; Harbor accepts non-finite numbers only where a float is expected"),
            );
        }
    }

    pub(super) fn string<'a>(&mut self, value: &'a Value, path: &Path<'_>) -> Option<&'a str> {
        match value {
            Value::String(text) if self.sentinel(value).is_none() => Some(text),
            other => {
                self.wrong_type(other, path, "a string");
                None
            }
        }
    }

    pub(super) fn object<'a>(
        &mut self,
        value: &'a Value,
        path: &Path<'_>,
    ) -> Option<&'a Map<String, Value>> {
        self.expect_object(value, path, "an object")
    }

    pub(super) fn expect_object<'a>(
        &mut self,
        value: &'a Value,
        path: &Path<'_>,
        expected: &str,
    ) -> Option<&'a Map<String, Value>> {
        match value {
            Value::Object(object) => Some(object),
            other => {
                self.wrong_type(other, path, expected);
                None
            }
        }
    }

    pub(super) fn array<'a>(
        &mut self,
        value: &'a Value,
        path: &Path<'_>,
    ) -> Option<&'a Vec<Value>> {
        match value {
            Value::Array(elements) => Some(elements),
            other => {
                self.wrong_type(other, path, "an array");
                None
            }
        }
    }

    /// An integer; in the harbor profile also what Pydantic's lax mode turns into one.
    pub(super) fn integer(&mut self, value: &Value, path: &Path<'_>) -> Option<i128> {
        self.integer_quiet(value, path, true)
    }

    /// A count: an integer, and an error when it is negative; `note` follows `≥ 0` in the
    /// message.
    pub(super) fn count(&mut self, value: &Value, path: &Path<'_>, note: &str) -> Option<i128> {
        let count = self.integer(value, path);
        if let Some(negative) = count.filter(|count| *count < 0) {
            self.error(Rule::Range, path, format!("expected a count ≥ 0{note}, found {negative}"));
        }
        count
    }

    fn integer_quiet(&mut self, value: &Value, path: &Path<'_>, report: bool) -> Option<i128> {
        let (coerced, habit) = match value {
            Value::Number(number) => {
                if let Some(int) = number.as_i64() {
                    return Some(i128::from(int));
                }
                if let Some(int) = number.as_u64() {
                    return Some(i128::from(int));
                }
                let float = number.as_f64().unwrap_or(f64::NAN);
                let whole = float.fract() == 0.0 && float.abs() < 9.223_372_036_854_776e18;
                let coerced = whole.then_some(float as i128);
                (
                    coerced,
                    format!(
                        "the float {number}; Python writes whole floats such as 2.0 when a count went through float arithmetic"
                    ),
                )
            }
            Value::String(text) if self.sentinel(value).is_none() => {
                (python_int(text), quoted_number_habit(text))
            }
            Value::Bool(flag) => (Some(i128::from(*flag)), bool_habit(*flag)),
            other => {
                if report {
                    self.wrong_type(other, path, "an integer");
                }
                return None;
            }
        };
        if report {
            self.coercion(path, "an integer", coerced.map(|int| int.to_string()), &habit);
        }
        if self.harbor() { coerced } else { None }
    }

    /// A number; in the harbor profile also what Pydantic's lax mode turns into one.
    pub(super) fn float(&mut self, value: &Value, path: &Path<'_>) -> Option<f64> {
        self.float_quiet(value, path, true)
    }

    fn float_quiet(&mut self, value: &Value, path: &Path<'_>, report: bool) -> Option<f64> {
        let (coerced, habit) = match value {
            Value::Number(number) => return number.as_f64(),
            Value::String(text) => {
                if let Some(literal) = self.sentinel(value) {
                    // Reported by the reader; Harbor takes it as a float.
                    let float = match literal {
                        "Infinity" => f64::INFINITY,
                        "-Infinity" => f64::NEG_INFINITY,
                        _ => f64::NAN,
                    };
                    return if self.harbor() { Some(float) } else { None };
                }
                (python_float(text), quoted_number_habit(text))
            }
            Value::Bool(flag) => (Some(if *flag { 1.0 } else { 0.0 }), bool_habit(*flag)),
            other => {
                if report {
                    self.wrong_type(other, path, "a number");
                }
                return None;
            }
        };
        if report {
            self.coercion(path, "a number", coerced.map(|float| float.to_string()), &habit);
        }
        if self.harbor() { coerced } else { None }
    }

    /// `true` or `false`; in the harbor profile also what Pydantic's lax mode reads as one.
    pub(super) fn boolean(&mut self, value: &Value, path: &Path<'_>) -> Option<bool> {
        let (coerced, habit) = match value {
            Value::Bool(flag) => return Some(*flag),
            Value::Number(number) => {
                let coerced = match number.as_f64() {
                    Some(0.0) => Some(false),
                    Some(1.0) => Some(true),
                    _ => None,
                };
                (coerced, format!("the number {number}"))
            }
            Value::String(text) if self.sentinel(value).is_none() => {
                let coerced = match text.to_lowercase().as_str() {
                    "true" | "yes" | "on" | "t" | "y" | "1" => Some(true),
                    "false" | "no" | "off" | "f" | "n" | "0" => Some(false),
                    _ => None,
                };
                (
                    coerced,
                    format!(
                        "the string {}; Pydantic reads yes/no/on/off/t/f/y/n/1/0 as booleans, JSON has only true and false",
                        quote(text)
                    ),
                )
            }
            other => {
                self.wrong_type(other, path, "true or false");
                return None;
            }
        };
        self.coercion(path, "true or false", coerced.map(|flag| flag.to_string()), &habit);
        if self.harbor() { coerced } else { None }
    }

    /// Reports a value of another JSON type that Harbor may coerce (`coerced`) or not.
    fn coercion(&mut self, path: &Path<'_>, expected: &str, coerced: Option<String>, habit: &str) {
        match (self.profile, coerced) {
            (Profile::Strict, Some(coerced)) => self.error(
                Rule::Type,
                path,
                format!("expected {expected}, found {habit} (Harbor would coerce it to {coerced})"),
            ),
            (Profile::Harbor, Some(coerced)) => self.warn(
                Rule::Type,
                path,
                format!("expected {expected}, found {habit}; Harbor coerces it to {coerced}"),
            ),
            (_, None) => {
                self.error(Rule::Type, path, format!("expected {expected}, found {habit}"))
            }
        }
    }

    /// An array of integers or numbers; returns its length. Problems with elements are reported
    /// for the first few, then summarised, so a long array cannot flood the report.
    pub(super) fn scalar_array(
        &mut self,
        value: &Value,
        path: &Path<'_>,
        scalar: Scalar,
    ) -> Option<usize> {
        let elements = self.array(value, path)?;
        let mut reported = 0;
        let mut more = 0;
        for (element_idx, element) in elements.iter().enumerate() {
            let here = path.index(element_idx);
            let before = self.findings.len();
            let report = reported < MAX_ELEMENT_FINDINGS;
            match scalar {
                Scalar::Integer => {
                    self.integer_quiet(element, &here, report);
                }
                Scalar::Float => {
                    self.float_quiet(element, &here, report);
                }
            }
            if self.findings.len() > before {
                reported += 1;
            } else if !report && !self.element_fine(element, scalar) {
                more += 1;
            }
        }
        if more > 0 {
            let severity = self.findings.last().map_or(Severity::Error, |finding| finding.severity);
            self.report(
                Rule::Type,
                severity,
                path,
                format!(
                    "… and {more} more elements with problems like the ones above ({} expected)",
                    scalar.expected()
                ),
            );
        }
        Some(elements.len())
    }

    /// Whether an element would have produced no finding (used when findings are capped).
    fn element_fine(&self, element: &Value, scalar: Scalar) -> bool {
        match (element, scalar) {
            (Value::Number(number), Scalar::Integer) => number.is_i64() || number.is_u64(),
            (Value::Number(_), Scalar::Float) => true,
            (Value::String(_), Scalar::Float) => self.harbor() && self.sentinel(element).is_some(),
            _ => false,
        }
    }
}

/// Names the habit behind a number written as a string.
fn quoted_number_habit(text: &str) -> String {
    format!(
        "the string {}; numbers in quotes are text in JSON (Python writes them when code passes \
         str(n) or an f-string instead of the number)",
        quote(text)
    )
}

/// Names the habit behind `true` or `false` where a number is expected.
fn bool_habit(flag: bool) -> String {
    format!("{flag}; Python's bool is an int subclass, JSON's is not")
}
