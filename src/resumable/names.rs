//! The files a resumable directory owns, by exact name: a run removes
//! only leftovers it could have written itself (never the user's own files
//! beside them), and no command writes its output over one of them or
//! over its own input.
//!
//! A name pattern is literal text in which `#` stands for one or more
//! decimal digits; a temporary file is a pattern's name with `.tmp`
//! appended (`super::atomic::temporary_path`).

use std::fs;
use std::path::Path;

/// What a kind of resumable directory owns: the first word of its
/// manifest, its lock, its checkpoints' names, the names of a checkpoint's
/// parts, if it has any (the checkpoint's name with `-r#` before its
/// extension: [`part_owner`]), and every name it writes (`#`:
/// digits).
pub(crate) struct DirectoryKind {
    pub manifest_signature: &'static str,
    pub lock: &'static str,
    pub checkpoint: &'static str,
    pub checkpoint_part: Option<&'static str>,
    pub files: &'static [&'static str],
}

/// A tablebase build directory (`tablebase::build`).
pub(crate) const BUILD_DIRECTORY: DirectoryKind = DirectoryKind {
    manifest_signature: "oware-tablebase-build",
    lock: "build.lock",
    checkpoint: "checkpoint-#-#.zst",
    checkpoint_part: Some("checkpoint-#-#-r#.zst"),
    files: &[
        "manifest",
        "build.lock",
        "layer-#.bin",
        "layer-#.stats",
        "layer-#-g#.bin",
        "layer-#-g#.stats",
        "checkpoint-#-#.zst",
        "checkpoint-#-#-r#.zst",
        "checkpoint-#-#.content",
        "tablebase.owtb",
        "tablebase.owtb.zst",
        "stats.json",
        "endgames-2.0.bin",
    ],
};

/// An opening book directory (`book::store`).
pub(crate) const BOOK_DIRECTORY: DirectoryKind = DirectoryKind {
    manifest_signature: "oware-opening-book",
    lock: "grow.lock",
    checkpoint: "checkpoint-#.owbook",
    checkpoint_part: None,
    files: &["manifest", "grow.lock", "checkpoint-#.owbook"],
};

/// Whether `name` is one of `patterns` exactly (see the module notes).
pub(crate) fn matches(name: &str, pattern: &str) -> bool {
    let (mut name, mut pattern) = (name.as_bytes(), pattern.as_bytes());
    loop {
        match (pattern.first(), name.first()) {
            (None, None) => return true,
            (Some(b'#'), Some(c)) if c.is_ascii_digit() => {
                let digits = name.iter().take_while(|c| c.is_ascii_digit()).count();
                name = &name[digits..];
                pattern = &pattern[1..];
            }
            (Some(p), Some(c)) if p == c && *p != b'#' => {
                name = &name[1..];
                pattern = &pattern[1..];
            }
            _ => return false,
        }
    }
}

/// Why writing `output` would destroy something, if it would: `output`
/// is one of `inputs`, or a file (or a file's temporary) a build or book
/// directory owns, named directly or by a symbolic link (an output follows
/// links), or what stands there is no file an output may replace, or its
/// directory is missing (`atomic::output_target`). Asked before the work,
/// so that nothing is computed for an output that cannot be written.
pub(crate) fn refuse_output(output: &Path, inputs: &[&Path]) -> Option<String> {
    if let Ok(written) = fs::canonicalize(output) {
        if inputs.iter().any(|input| fs::canonicalize(input).is_ok_and(|read| read == written)) {
            return Some("it is the input of this command".into());
        }
    }
    let target = match super::atomic::output_target(output) {
        Ok(target) => target,
        Err(e) => return Some(e.to_string()),
    };
    owned_by_a_directory(output).or_else(|| owned_by_a_directory(&target))
}

/// Why `output` belongs to a build or book directory, if it does.
fn owned_by_a_directory(output: &Path) -> Option<String> {
    let name = output.file_name()?.to_str()?;
    let dir = super::atomic::directory_of(output);
    let manifest = fs::read(dir.join("manifest")).ok()?;
    let stem = name.strip_suffix(".tmp").unwrap_or(name);
    [BUILD_DIRECTORY, BOOK_DIRECTORY].iter().find_map(|kind| {
        let owned = manifest.starts_with(kind.manifest_signature.as_bytes())
            && kind.files.iter().any(|pattern| matches(stem, pattern));
        owned.then(|| format!("{} belongs to the {} in {}", name, kind.manifest_signature, dir.display()))
    })
}

/// Whether two output paths name the same file, whether it exists yet or
/// not (`out.bin` and `./out.bin` do).
pub(crate) fn same_output(a: &Path, b: &Path) -> bool {
    let resolve = |path: &Path| -> Option<std::path::PathBuf> {
        if let Ok(full) = fs::canonicalize(path) {
            return Some(full);
        }
        let dir = super::atomic::directory_of(path);
        Some(fs::canonicalize(dir).ok()?.join(path.file_name()?))
    };
    match (resolve(a), resolve(b)) {
        (Some(a), Some(b)) => a == b,
        _ => a == b,
    }
}

/// The names of the files in `dir` that start with `prefix` and match
/// `pattern`, in order.
pub(crate) fn find_all(dir: &Path, prefix: &str, pattern: &str) -> Vec<String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<String> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_str()?.to_string();
            (name.starts_with(prefix) && matches(&name, pattern)).then_some(name)
        })
        .collect();
    found.sort();
    found
}

/// The first file in `dir` (by name) that only a directory of `kind`
/// writes: any of its names but its lock and temporary files.
pub(crate) fn first_owned(dir: &Path, kind: &DirectoryKind) -> Option<String> {
    let entries = fs::read_dir(dir).ok()?;
    let mut owned: Vec<String> = entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str().map(str::to_string))
        .filter(|name| name != kind.lock && kind.files.iter().any(|pattern| matches(name, pattern)))
        .collect();
    owned.sort();
    owned.into_iter().next()
}

/// The checkpoint a checkpoint part belongs to: the part's name without
/// its `-r#` (`checkpoint-07-000003-r0001.zst` belongs to
/// `checkpoint-07-000003.zst`).
pub(crate) fn part_owner(part: &str) -> Option<String> {
    let (head, tail) = part.rsplit_once("-r")?;
    let extension = tail.trim_start_matches(|c: char| c.is_ascii_digit());
    (extension.len() < tail.len()).then(|| format!("{head}{extension}"))
}

/// Removes from `dir` the temporary files of the names `kind` writes, and
/// its checkpoints and checkpoint parts other than `current` and the parts
/// of `current`. Errors are ignored: a stray left behind is harmless, the
/// next run tries again.
pub(crate) fn remove_strays(dir: &Path, kind: &DirectoryKind, current: Option<&str>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let temporary =
            name.strip_suffix(".tmp").is_some_and(|stem| kind.files.iter().any(|p| matches(stem, p)));
        let stale_checkpoint = matches(name, kind.checkpoint) && Some(name) != current;
        let stale_part = kind.checkpoint_part.is_some_and(|pattern| matches(name, pattern))
            && part_owner(name).as_deref() != current;
        if temporary || stale_checkpoint || stale_part {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exact_names_match() {
        assert!(matches("checkpoint-08-000012.zst", "checkpoint-#-#.zst"));
        assert!(matches("layer-08-g12.bin", "layer-#-g#.bin"));
        assert!(matches("manifest", "manifest"));
        for name in [
            "checkpoint-08-000012.zst.bak",
            "checkpoint-x-1.zst",
            "my-checkpoint-1-1.zst",
            "checkpoint--1.zst",
        ] {
            assert!(!matches(name, "checkpoint-#-#.zst"), "{name}");
        }
    }

    #[test]
    fn the_users_files_stay() {
        let dir = std::env::temp_dir().join(format!("oware-strays-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let ours = [
            "manifest.tmp",
            "checkpoint-03-000001.zst",
            "checkpoint-03-000002.zst.tmp",
            "checkpoint-03-000002-r0001.zst",
            "checkpoint-03-000003-r0002.zst.tmp",
            "checkpoint-03-000002.content.tmp",
        ];
        let theirs = [
            "notes.tmp",
            "checkpoint-mine.txt",
            "manifest.bak.tmp",
            "checkpoint-03-000009.zst.orig",
            "checkpoint-03-000002-rx.zst",
        ];
        let keep =
            ["checkpoint-03-000003.zst", "checkpoint-03-000003-r0000.zst", "checkpoint-03-000003-r0001.zst"];
        for name in ours.iter().chain(&theirs).chain(&keep) {
            fs::write(dir.join(name), b"x").unwrap();
        }
        remove_strays(&dir, &BUILD_DIRECTORY, Some(keep[0]));
        for name in ours {
            assert!(!dir.join(name).exists(), "{name}");
        }
        for name in theirs.iter().chain(&keep) {
            assert!(dir.join(name).exists(), "{name}");
        }
        assert_eq!(part_owner("checkpoint-03-000003-r0001.zst").as_deref(), Some(keep[0]));
        assert_eq!(part_owner("checkpoint-03-000003.zst"), None);
        fs::remove_dir_all(&dir).unwrap();
    }
}
