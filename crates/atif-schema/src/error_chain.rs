//! `error_chain`: an error and its causes as one line of text.

/// The message of `err` followed by each of its causes, joined by `: ` (`cannot read x.json:
/// Is a directory`), as an error reporter such as anyhow's `{:#}` shows it.
///
/// For text that is stored or sent on rather than shown by an error reporter: a crash message
/// in a trajectory, a JSON reply, a panic message. It lives here because every crate that
/// writes such text (`atif-replay`, `atif-proxy`, `atif-golden`) already depends on
/// `atif-schema`, so the workspace writes it one way. Not every crate does: `atif-secrets`,
/// `atif-fs` and `atif-normalize` do not.
///
/// ```
/// use std::fmt;
///
/// #[derive(Debug)]
/// struct ReadFailed(std::io::Error);
///
/// impl fmt::Display for ReadFailed {
///     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
///         f.write_str("cannot read x.json")
///     }
/// }
///
/// impl std::error::Error for ReadFailed {
///     fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
///         Some(&self.0)
///     }
/// }
///
/// let err = ReadFailed(std::io::Error::other("is a directory"));
/// assert_eq!(atif_schema::error_chain(&err), "cannot read x.json: is a directory");
/// ```
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(source) = cause {
        text.push_str(": ");
        text.push_str(&source.to_string());
        cause = source.source();
    }
    text
}
