//! Atomic writes: through links, with ordinary permissions, never half a file.

use std::path::Path;

use atif_fs::{resolve_symlinks, write_atomic, write_atomic_with};

use crate::file_names;

#[test]
fn write_atomic_creates_parent_folders_and_leaves_only_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/c.json");
    assert_eq!(write_atomic(&path, b"one\n").unwrap(), path);
    write_atomic(&path, b"two\n").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "two\n");
    assert_eq!(file_names(path.parent().unwrap()), ["c.json"]);
}

#[cfg(unix)]
#[test]
fn writing_through_a_link_updates_its_target_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let target = real.join("golden.json");
    std::fs::write(&target, b"old\n").unwrap();
    let links = dir.path().join("links");
    std::fs::create_dir(&links).unwrap();
    // A relative link to a relative link: both resolve against their own folders.
    std::fs::create_dir(links.join("deeper")).unwrap();
    std::os::unix::fs::symlink("../../real/golden.json", links.join("deeper/hop.json")).unwrap();
    std::os::unix::fs::symlink("deeper/hop.json", links.join("golden.json")).unwrap();
    let link = links.join("golden.json");

    let written = write_atomic(&link, b"new\n").unwrap();
    assert_eq!(written, links.join("deeper/../../real/golden.json"));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "still a link");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "new\n");
    assert_eq!(file_names(&links), ["deeper", "golden.json"], "nothing written beside the link");
    assert_eq!(file_names(&real), ["golden.json"], "no temporary file left beside the target");

    // A dangling link creates its target.
    std::os::unix::fs::symlink("../real/fresh.json", links.join("fresh.json")).unwrap();
    write_atomic(&links.join("fresh.json"), b"x").unwrap();
    assert_eq!(std::fs::read(real.join("fresh.json")).unwrap(), b"x");
}

#[cfg(unix)]
#[test]
fn a_loop_of_links_is_an_error_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    std::os::unix::fs::symlink("b.json", &a).unwrap();
    std::os::unix::fs::symlink("a.json", dir.path().join("b.json")).unwrap();
    let err = write_atomic(&a, b"x").unwrap_err();
    assert_eq!(err.to_string(), format!("cannot resolve {}", a.display()));
    assert!(
        std::error::Error::source(&err).unwrap().to_string().contains("symbolic links in a row")
    );
    assert_eq!(resolve_symlinks(Path::new("/no/such/file")).unwrap(), Path::new("/no/such/file"));
}

#[cfg(unix)]
#[test]
fn new_files_get_ordinary_permissions_and_replaced_files_keep_theirs() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let plain = dir.path().join("plain.json");
    std::fs::write(&plain, b"x").unwrap();
    let fresh = dir.path().join("fresh.json");
    write_atomic(&fresh, b"one\n").unwrap();
    assert_eq!(mode(&fresh), mode(&plain));
    std::fs::set_permissions(&fresh, std::fs::Permissions::from_mode(0o640)).unwrap();
    write_atomic(&fresh, b"two\n").unwrap();
    assert_eq!(mode(&fresh), 0o640);
}

#[test]
fn a_failed_write_keeps_the_old_contents_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    // A non-empty folder where the file should go makes the final rename fail.
    let path = dir.path().join("golden.json");
    std::fs::create_dir(&path).unwrap();
    std::fs::write(path.join("keep"), b"old").unwrap();
    let err = write_atomic(&path, b"new").unwrap_err();
    assert_eq!(err.to_string(), format!("cannot replace {}", path.display()));
    assert_eq!(std::fs::read(path.join("keep")).unwrap(), b"old");
    assert_eq!(file_names(dir.path()), ["golden.json"]);
}

#[test]
fn write_atomic_with_writes_what_the_writer_produces_piece_by_piece() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.json");
    std::fs::write(&path, b"old\n").unwrap();
    let written = write_atomic_with(&path, |out| {
        for idx in 0..100_000 {
            write!(out, "{idx},")?;
        }
        out.write_all(b"\n")
    })
    .unwrap();
    assert_eq!(written, path);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("0,1,2,") && text.ends_with("99998,99999,\n"), "{}", &text[..20]);
    assert_eq!(text.len(), 588_891);
    assert_eq!(file_names(dir.path()), ["script.json"]);
}

#[test]
fn a_writer_that_fails_half_way_leaves_the_old_file_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.json");
    std::fs::write(&path, b"the good recording\n").unwrap();
    let err = write_atomic_with(&path, |out| {
        // More than the buffer holds, so part of it reaches the temporary file first.
        out.write_all(&[b'x'; 200_000])?;
        Err(std::io::Error::other("the recording cannot be serialised"))
    })
    .unwrap_err();
    assert_eq!(err.action, "write");
    assert!(err.to_string().starts_with("cannot write "), "{err}");
    assert_eq!(err.source.to_string(), "the recording cannot be serialised");
    assert_eq!(std::fs::read(&path).unwrap(), b"the good recording\n");
    assert_eq!(file_names(dir.path()), ["script.json"], "the temporary file is removed");
}
