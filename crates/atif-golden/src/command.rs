//! The commands atif prints for the user to type next: one shell quoting, and the `atif golden`
//! command that acts on one pending file.

use std::path::Path;

use crate::file;

/// The `atif golden VERB FILTER` command that acts on the pending file `pending` alone, run
/// from the current folder (with `--dir` when the pending file is outside it).
pub(crate) fn golden_command(verb: &str, pending: &Path) -> String {
    let golden = file::golden_for_pending(pending).unwrap_or_else(|| pending.to_owned());
    let name = golden.file_name().map(|name| name.to_string_lossy().into_owned());
    let mut command = format!("atif golden {verb} {}", shell_word(&name.unwrap_or_default()));
    // A relative path is relative to the current folder, and inside it unless it climbs out.
    let inside_cwd = match pending.is_absolute() {
        true => std::env::current_dir().is_ok_and(|cwd| pending.starts_with(cwd)),
        false => !pending.components().any(|part| part == std::path::Component::ParentDir),
    };
    if let (false, Some(dir)) = (inside_cwd, pending.parent()) {
        command.push_str(" --dir ");
        command.push_str(&shell_word(&dir.display().to_string()));
    }
    command
}

/// Quotes a word for a POSIX shell when it needs it: the one quoting of every command atif
/// prints for the user to type.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| c.is_ascii_alphanumeric() || "_-./=:,+@%".contains(c));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("a__b.json"), "a__b.json");
        assert_eq!(shell_word("it's here"), r"'it'\''s here'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn the_command_names_the_golden_and_a_folder_outside_the_current_one() {
        let command = golden_command("accept", Path::new("/elsewhere/g/a__b.json.new"));
        assert_eq!(command, "atif golden accept a__b.json --dir /elsewhere/g");
        let cwd = std::env::current_dir().unwrap();
        let inside = cwd.join("tests/golden/x.json.new");
        assert_eq!(golden_command("review", &inside), "atif golden review x.json");
        assert_eq!(golden_command("accept", Path::new("x.json.new")), "atif golden accept x.json");
        let above = Path::new("../g/x.json.new");
        assert_eq!(golden_command("accept", above), "atif golden accept x.json --dir ../g");
    }
}
