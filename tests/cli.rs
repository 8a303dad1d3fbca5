//! The binaries: results on stdout, one clear line and a non-zero exit on
//! bad input.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{run, scratch};

fn perft(args: &[&str]) -> (bool, String, String) {
    run(env!("CARGO_BIN_EXE_perft"), args)
}

#[test]
fn perft_counts_from_a_game() {
    let (ok, stdout, _) = perft(&["4-4-4-4-4-4-4-4-4-4-4-4-0-0-S moves FfBeBcD", "--depth", "4", "--divide"]);
    assert!(ok);
    assert!(stdout.contains("depth  4:                  692"), "{stdout}");
}

#[test]
fn bad_input_is_one_line_and_a_failure() {
    for args in [
        vec!["4-4-4-4-4-4-4-4-4-4-4-4-0-0-X"],
        vec!["4-4-4-4-4-4-4-4-4-4-4-4-0-0-S moves FF"],
        vec!["4-4-4-4-4-4-4-4-4-4-4-5-0-0-S"],
        vec!["--check", "/nonexistent/perft.txt"],
        vec!["--depth", "-3"],
    ] {
        let (ok, stdout, stderr) = perft(&args);
        assert!(!ok, "{args:?} succeeded: {stdout}");
        if args[0] != "--depth" {
            assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
            assert!(stderr.starts_with("perft: error: "), "{stderr}");
        }
    }
}

/// Reads the first line of a binary's stdout and closes the pipe, as
/// `| head -1` does; returns the exit status and stderr.
fn first_line_then_close(exe: &str, args: &[&str]) -> (std::process::ExitStatus, String, String) {
    use std::io::{BufRead, BufReader, Read};
    use std::process::Stdio;
    let mut child =
        Command::new(exe).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("runs");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut first).expect("a line");
    // The reader is dropped here: the pipe is closed.
    let mut stderr = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut stderr).expect("stderr");
    (child.wait().expect("exits"), first, stderr)
}

#[test]
fn a_closed_pipe_ends_a_binary_quietly() {
    let perft = env!("CARGO_BIN_EXE_perft");
    // Depth 12 would print twelve lines, the last after hours of work: the
    // pipe is closed long before, and the next line ends the program.
    let (status, first, stderr) = first_line_then_close(perft, &["--depth", "12", "--threads", "1"]);
    assert!(first.starts_with("state: "), "{first}");
    assert!(status.success(), "{status}: {stderr}");
    assert_eq!(stderr, "");
    let endgames = env!("CARGO_BIN_EXE_endgames");
    let table = concat!(env!("CARGO_MANIFEST_DIR"), "/data/endgames-12.owtb.zst");
    let state = "0-0-0-0-0-1-0-0-0-0-1-1-22-23-S";
    let (status, first, stderr) = first_line_then_close(endgames, &["probe", "--tablebase", table, state]);
    assert!(first.starts_with("state: "), "{first}");
    assert!(status.success(), "{status}: {stderr}");
    assert_eq!(stderr, "");
}

#[test]
fn a_build_outlives_its_closed_log() {
    use std::process::Stdio;
    let dir = scratch("closed-log");
    // Both streams closed before the first line: the build goes on and
    // finishes its files.
    let mut child = Command::new(env!("CARGO_BIN_EXE_endgames"))
        .args(["build", "--max-seeds", "6", "--no-compress", "--dir"])
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().expect("exits");
    assert!(status.success(), "{status}");
    assert!(dir.join("tablebase.owtb").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn exports_never_write_over_their_input_or_a_directory_s_files() {
    let dir = scratch("overwrite");
    let endgames = env!("CARGO_BIN_EXE_endgames");
    let built = Command::new(endgames)
        .args(["build", "--max-seeds", "4", "--no-compress", "-q", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(built.status.success());
    // Quiet: the one-line summary, nothing on stderr.
    let stdout = String::from_utf8_lossy(&built.stdout);
    assert!(stdout.lines().count() == 1 && stdout.starts_with("1,820 positions, "), "{stdout}");
    assert!(built.stderr.is_empty(), "{}", String::from_utf8_lossy(&built.stderr));
    let before: Vec<_> = ["tablebase.owtb", "stats.json", "manifest"]
        .iter()
        .map(|name| std::fs::read(dir.join(name)).unwrap())
        .collect();
    for target in ["tablebase.owtb", "stats.json", "manifest", "layer-02.bin"] {
        let out = Command::new(endgames)
            .args(["export", "-b"])
            .arg(&dir)
            .arg("-o")
            .arg(dir.join(target))
            .output()
            .unwrap();
        assert!(!out.status.success(), "{target}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with("endgames: error: will not write"), "{stderr}");
    }
    let table = dir.join("tablebase.owtb");
    let out =
        Command::new(endgames).args(["export", "-b"]).arg(&table).arg("-o").arg(&table).output().unwrap();
    assert!(!out.status.success());
    let after: Vec<_> = ["tablebase.owtb", "stats.json", "manifest"]
        .iter()
        .map(|name| std::fs::read(dir.join(name)).unwrap())
        .collect();
    assert!(before == after, "a file of the build changed");
    // A file of the user's own beside them is fine.
    let out = Command::new(endgames)
        .args(["export", "-b"])
        .arg(&dir)
        .arg("-o")
        .arg(dir.join("mine.bin"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let mine = std::fs::read(dir.join("mine.bin")).unwrap();
    let export = |to: &Path| {
        Command::new(endgames).args(["export", "-b"]).arg(&dir).arg("-o").arg(to).output().unwrap()
    };
    // A symbolic link is followed: the file it leads to is replaced, the
    // link kept; one that leads into the build directory is refused.
    let elsewhere = scratch("overwrite-elsewhere");
    let target = elsewhere.join("target.bin");
    std::fs::write(&target, b"old").unwrap();
    let link = elsewhere.join("link.bin");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert!(export(&link).status.success());
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(&target).unwrap(), mine);
    let into_build = elsewhere.join("into-build.bin");
    std::os::unix::fs::symlink(dir.join("manifest"), &into_build).unwrap();
    // A FIFO (whose reader would get nothing), a directory, a folder that
    // does not exist: refused before anything is written, left as they are.
    let fifo = elsewhere.join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for (to, why) in [
        (into_build, "belongs to the"),
        (fifo.clone(), "a FIFO is there, not a regular file"),
        (elsewhere.clone(), "a directory is there"),
        (elsewhere.join("missing").join("out.bin"), "no directory"),
    ] {
        let out = export(&to);
        assert!(!out.status.success(), "{}", to.display());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with("endgames: error: will not write") && stderr.contains(why), "{stderr}");
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(!elsewhere.join("missing").exists());
    assert!(
        before == ["tablebase.owtb", "stats.json", "manifest"].map(|n| std::fs::read(dir.join(n)).unwrap())
    );
    std::fs::remove_dir_all(&elsewhere).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn numbers_out_of_range_are_one_line_and_a_failure() {
    let build = ["build", "--dir", "/nonexistent/never-created"];
    let cases: [(&str, &[&str]); 12] = [
        (env!("CARGO_BIN_EXE_perft"), &["--threads", "100000"]),
        (env!("CARGO_BIN_EXE_perft"), &["--threads", "0"]),
        (env!("CARGO_BIN_EXE_tablebase-bench"), &["-n", "49"]),
        (
            env!("CARGO_BIN_EXE_endgames"),
            &["build", "--dir", "/nonexistent/never-created", "--max-seeds", "31"],
        ),
        (env!("CARGO_BIN_EXE_endgames"), &["--threads", "5000", "verify", "-b", "data/endgames-12.owtb.zst"]),
        // Durations beyond what a clock can add (they used to panic).
        (env!("CARGO_BIN_EXE_search"), &["--time", "2e19"]),
        (env!("CARGO_BIN_EXE_search"), &["--time", "1e19"]),
        (env!("CARGO_BIN_EXE_bench"), &["--time", "1e19"]),
        (env!("CARGO_BIN_EXE_endgames"), &[build[0], build[1], build[2], "--checkpoint-seconds", "2e19"]),
        (
            env!("CARGO_BIN_EXE_openings"),
            &["grow", "--book", "/nonexistent/never-created", "--hours", "1e300"],
        ),
        // A line longer than a worker thread's stack holds.
        (env!("CARGO_BIN_EXE_endgames"), &[build[0], build[1], build[2], "--search-max-path", "100000"]),
        // The one weight whose absolute value overflows.
        (env!("CARGO_BIN_EXE_search"), &["--weights=-2147483648,0,0,0,0"]),
    ];
    for (exe, args) in cases {
        let out = Command::new(exe).args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains("error: "), "{stderr}");
    }
    assert!(!std::path::Path::new("/nonexistent/never-created").exists());
    // (The build above fails on its directory too: the message says why.)
    let out = Command::new(env!("CARGO_BIN_EXE_endgames"))
        .args([build[0], build[1], build[2], "--search-max-path", "100000"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("at most 4096"), "{out:?}");
}

/// Zero depths, nodes and strides are refused (they used to print a move as
/// if searched, or silently became 1), perft's depth is bounded, a perft
/// file without a line checks nothing and says so, and a long input is
/// not echoed whole.
#[test]
fn empty_work_is_refused_not_pretended() {
    let dir = scratch("empty-work");
    let empty = dir.join("empty.txt");
    std::fs::write(&empty, "# only a comment\n").unwrap();
    let long = "x".repeat(100_000);
    let cases: [(&str, Vec<&str>, &str); 7] = [
        (env!("CARGO_BIN_EXE_search"), vec!["--nodes", "0"], "0 is not in 1.."),
        (env!("CARGO_BIN_EXE_search"), vec!["--depth", "0"], "0 is not in 1.."),
        (env!("CARGO_BIN_EXE_bench"), vec!["--every", "0"], "0 is not in 1.."),
        (env!("CARGO_BIN_EXE_bench"), vec!["--depth", "0"], "0 is not in 1.."),
        (env!("CARGO_BIN_EXE_perft"), vec!["--depth", "100"], "100 is not in 1..=20"),
        (env!("CARGO_BIN_EXE_perft"), vec!["--check", empty.to_str().unwrap()], "holds no perft line"),
        (env!("CARGO_BIN_EXE_search"), vec![long.as_str()], "(100000 characters)"),
    ];
    for (exe, args, expected) in cases {
        let out = Command::new(exe).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && out.stdout.is_empty(), "{}: {stderr}", args[0]);
        assert!(stderr.contains(expected) && stderr.len() < 400, "{}: {stderr}", args[0]);
        // One error format in every binary, the command line's too.
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        let name = Path::new(exe).file_name().unwrap().to_string_lossy();
        assert!(stderr.starts_with(&format!("{name}: error: ")), "{stderr}");
    }
    // A missing argument names it on the line.
    let out = Command::new(env!("CARGO_BIN_EXE_openings")).args(["stats"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with("openings: error: ") && stderr.contains("--book <BOOK>"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// On a machine without Open MPI the distributed build's check says it is
/// skipped and what to install, and `make test` goes on; CI's
/// `MPI_CHECK=required` makes that an error.
#[test]
fn the_mpi_check_is_skipped_in_one_line_without_open_mpi() {
    let dir = scratch("no-mpi");
    // A PATH with the few tools the check's first lines use, and no MPI.
    for tool in ["dirname", "ls"] {
        let found =
            ["/usr/bin", "/bin"].iter().map(|d| Path::new(d).join(tool)).find(|p| p.exists()).unwrap();
        std::os::unix::fs::symlink(found, dir.join(tool)).unwrap();
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/mpi-check.sh");
    let run = |required: bool| {
        let mut command = Command::new("/bin/bash");
        command.arg(script).env("PATH", &dir).env_remove("MPI_CHECK");
        if required {
            command.env("MPI_CHECK", "required");
        }
        command.output().unwrap()
    };
    let skipped = run(false);
    let stderr = String::from_utf8_lossy(&skipped.stderr);
    assert!(skipped.status.success(), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("mpi-check: SKIPPED: ") && stderr.contains("mpirun mpicc"), "{stderr}");
    assert!(stderr.contains("apt-get install openmpi-bin libopenmpi-dev libclang-dev"), "{stderr}");
    let required = run(true);
    let stderr = String::from_utf8_lossy(&required.stderr);
    assert!(!required.status.success() && stderr.starts_with("mpi-check: error: "), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A match whose games could not be written is refused before it plays;
/// the probes draw the board before the value.
#[test]
fn a_match_checks_its_games_path_first_and_probes_draw_the_board() {
    let out = Command::new(env!("CARGO_BIN_EXE_match"))
        .args(["--openings", "1", "--nodes", "1000", "--games", "/nonexistent/folder/out.games"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.lines().count() == 1, "{stderr}");
    assert!(stderr.contains("no directory /nonexistent/folder"), "{stderr}");
    assert!(out.stdout.is_empty(), "it played: {}", String::from_utf8_lossy(&out.stdout));
    let state = "0-0-0-0-1-2-0-0-0-1-0-2-23-19-S";
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/data/");
    for (exe, args) in [
        (env!("CARGO_BIN_EXE_endgames"), vec!["probe", "-b", "endgames-12.owtb.zst", state]),
        (env!("CARGO_BIN_EXE_search"), vec!["--depth", "2", state]),
        (env!("CARGO_BIN_EXE_openings"), vec!["probe", "-b", "openings-2014.bin", state]),
    ] {
        let args: Vec<String> = args
            .iter()
            .map(|a| {
                if a.contains(".owtb") || a.ends_with(".bin") {
                    format!("{data}{a}")
                } else {
                    a.to_string()
                }
            })
            .collect();
        let out = Command::new(exe).args(&args).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(
            stdout.contains("  [ 2][ 0][ 1][ 0][ 0][ 0]\n  [ 0][ 0][ 0][ 0][ 1][ 2]\n"),
            "{args:?}: {stdout}"
        );
        assert!(
            stdout.contains("North, store 19") && stdout.contains("South, store 23, to move"),
            "{stdout}"
        );
    }
    // A finished game, in words (it was Rust's debug output).
    let out = Command::new(env!("CARGO_BIN_EXE_endgames"))
        .args(["probe", "-b", &format!("{data}endgames-12.owtb.zst"), "0-0-0-0-0-0-0-0-0-0-0-0-24-24-S"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let over = "the game is over (a player has more than half the seeds, or both have half): \
                final score South 24, North 24";
    assert!(stdout.contains(over), "{stdout}");
    assert!(!stdout.contains("Some(") && !stdout.contains("Decided"), "{stdout}");
}

#[test]
fn probe_search_and_verify_read_every_table_format() {
    let dir = scratch("formats");
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/data/");
    let engine = format!("{data}endgames-12-2.0.bin");
    let engine_zst = dir.join("endgames-12-2.0.bin.zst");
    let bytes = std::fs::read(&engine).unwrap();
    std::fs::write(&engine_zst, zstd::encode_all(&bytes[..], 3).unwrap()).unwrap();
    let ours = format!("{data}endgames-12.owtb.zst");
    // Off every cycle: the engine layout holds it EXACT too.
    let state = "0-0-0-0-0-2-1-0-0-0-0-0-22-23-S";
    let tables = [ours.as_str(), engine.as_str(), engine_zst.to_str().unwrap()];
    for (i, table) in tables.into_iter().enumerate() {
        let out = Command::new(env!("CARGO_BIN_EXE_endgames"))
            .args(["probe", "-b", table, state])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{table}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(stdout.contains("no checksum"), i > 0, "{table}: {stdout}");
        assert!(stdout.contains("result: South loses 22-26"), "{stdout}");
        let out = Command::new(env!("CARGO_BIN_EXE_search"))
            .args(["--tablebase", table, "--nodes", "2000", state])
            .output()
            .unwrap();
        assert!(out.status.success(), "{table}: {}", String::from_utf8_lossy(&out.stderr));
    }
    // `verify` checks what each layout allows: the engine's, its length
    // and ranges only (and says so); a damaged engine file fails.
    let verify = |table: &str| {
        Command::new(env!("CARGO_BIN_EXE_endgames")).args(["verify", "-b", table]).output().unwrap()
    };
    for table in [engine.as_str(), engine_zst.to_str().unwrap()] {
        let out = verify(table);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && stdout.contains("entries are in range"), "{table}: {stdout}");
        assert!(stdout.contains("no checksum"), "{stdout}");
    }
    let mut damaged = bytes.clone();
    let last = damaged.len() - 2; // a 12-seed entry, before the trailing byte
    damaged[last] = 0xFF; // 63 captures with 12 seeds on the board
    let damaged_path = dir.join("damaged-2.0.bin");
    std::fs::write(&damaged_path, &damaged).unwrap();
    let out = verify(damaged_path.to_str().unwrap());
    assert!(!out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn match_refuses_bad_settings_in_one_line() {
    let cases: [&[&str]; 8] = [
        &["--openings", "0"],
        &["--nodes", "0"],
        &["--time-ms", "0"],
        &["--max-move-loss=-5"],
        &["--margin=-1"],
        &["--book-a", "/nonexistent/book"],
        &["--engine", "negamax", "--tablebase-b", "data/endgames-12.owtb.zst"],
        &["--opening-plies", "9"],
    ];
    for args in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_match")).args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("match: error: "), "{stderr}");
    }
}

/// An error wrapped with what was being done still says why it happened,
/// on the same line, each cause once.
#[test]
fn an_error_line_names_its_cause() {
    let cases: [(&str, &[&str], &str); 3] = [
        (
            env!("CARGO_BIN_EXE_match"),
            &["--tablebase-a", "README.md"],
            "cannot open the tablebase README.md: README.md: ",
        ),
        (
            env!("CARGO_BIN_EXE_bench"),
            &["--file", "/nonexistent/bench-games"],
            "cannot read /nonexistent/bench-games: No such file",
        ),
        (
            env!("CARGO_BIN_EXE_openings"),
            &["grow", "--book", "/nonexistent/b", "--expansions", "1", "--threads", "0"],
            "--threads: 0 threads",
        ),
    ];
    for (exe, args, expected) in cases {
        let out = Command::new(exe).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.lines().count() == 1, "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    let out =
        Command::new(env!("CARGO_BIN_EXE_search")).args(["-b", "/nonexistent/t.owtb"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("No such file").count(), 1, "{stderr}");

    // A path of the wrong kind is named as such (the system's own words
    // were "File exists", "Not a directory", "No such device", and a text
    // file's first line was shown as if read two bytes a character).
    let dir = scratch("wrong-kinds");
    let (text, build) = (dir.join("notes.txt"), dir.join("build"));
    std::fs::write(&text, "hello\n").unwrap();
    let elsewhere = dir.join("elsewhere");
    let (text, build, folder) = (text.to_str().unwrap(), build.to_str().unwrap(), dir.to_str().unwrap());
    let elsewhere = elsewhere.to_str().unwrap();
    let built = Command::new(env!("CARGO_BIN_EXE_endgames"))
        .args(["build", "--max-seeds", "2", "--no-compress", "-q", "--dir", build])
        .output()
        .unwrap();
    assert!(built.status.success());
    let endgames = env!("CARGO_BIN_EXE_endgames");
    let openings = env!("CARGO_BIN_EXE_openings");
    let cases: [(&str, &[&str], &str); 6] = [
        (endgames, &["build", "--max-seeds", "3", "--dir", text], "a file is there, not a directory"),
        // (A build directory is a table: its file, or its layers.)
        (
            endgames,
            &["build", "--max-seeds", "3", "--dir", elsewhere, "--from", folder],
            "a directory, not a table file",
        ),
        (endgames, &["verify", "-b", text], "its first line starts 'hello'"),
        (openings, &["stats", "--book", text], "neither a book directory nor an opening book file"),
        (
            openings,
            &["export", "--book", text, "--classic", "x.bin"],
            "a file is there, not an opening book directory",
        ),
        (openings, &["stats", "--book", build], "a tablebase build directory, not an opening book directory"),
    ];
    for (exe, args, expected) in cases {
        let out = Command::new(exe).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.lines().count() == 1, "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    assert_eq!(std::fs::read_to_string(dir.join("notes.txt")).unwrap(), "hello\n");
    // `verify` on a build directory checks its layer files too, and a
    // damaged one is named with the way out.
    let layer = dir.join("build").join("layer-01.bin");
    let mut bytes = std::fs::read(&layer).unwrap();
    bytes[3] ^= 1;
    std::fs::write(&layer, &bytes).unwrap();
    let out = Command::new(endgames).args(["verify", "-b", build]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.lines().count() == 1, "{stderr}");
    assert!(stderr.contains("layer-01.bin: checksum mismatch") && stderr.contains("`--from`"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The rows of a Markdown table in `text` whose first cell is `first`.
fn table_rows<'a>(text: &'a str, first: &str) -> Vec<Vec<&'a str>> {
    text.lines()
        .filter(|line| line.starts_with('|'))
        .map(|line| line.trim_matches('|').split('|').map(str::trim).collect::<Vec<_>>())
        .filter(|cells| cells[0] == first)
        .collect()
}

/// W / D / L of a match row, summed.
fn games_in(cell: &str) -> u32 {
    cell.split('/').map(|n| n.trim().parse::<u32>().unwrap()).sum()
}

/// The score of a cell "S ± E" (or "+D ± E").
fn score_in(cell: &str) -> f64 {
    cell.split(" ± ").next().unwrap().parse().unwrap()
}

/// The match scripts, run with this build's `match` and nothing else from
/// the caller's environment: no cargo on the path (a script that ignored
/// MATCH would fail), none of the scripts' own variables.
fn script(name: &str) -> Command {
    let mut command = Command::new(name);
    for variable in [
        "BOOK",
        "TABLE",
        "RULE",
        "RULES",
        "OUT",
        "GAMES",
        "WORK",
        "ENGINE_BOOK",
        "ENGINE_TABLE",
        "FIRST",
        "SECOND",
        "RESUME",
        "MATCH_ARGS",
    ] {
        command.env_remove(variable);
    }
    command
        .env("PATH", "/usr/bin:/bin")
        .env("MATCH", env!("CARGO_BIN_EXE_match"))
        .env("NODES", "2000")
        .env("OPENINGS", "2")
        // Openings of 2 plies: choosing them takes milliseconds, 4-ply
        // ones two seconds a match (their depth-10 searches).
        .env("MATCH_ARGS", "--opening-plies 2");
    command
}

/// The scripts that regenerate the README's match tables, run at a tiny
/// scale. Every table must hold the games played, and every game-by-game
/// comparison must be the difference of the two scores it compares, in
/// the right order (with 4 games every score is a multiple of 1/8, printed
/// exactly).
#[test]
fn the_match_scripts_write_their_tables() {
    let dir = scratch("scripts");

    // At 3,000 nodes the two books score differently (−0.5 against no
    // books and −0.75 against the engine's, today), so a comparison in the
    // wrong order shows.
    let out = script("scripts/compare-books.sh")
        .env("NODES", "3000")
        .env("FIRST", "data/book-dir")
        .env("SECOND", "data/book")
        .env("WORK", &dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut scores = Vec::new();
    for name in ["book-dir", "book"] {
        let table = std::fs::read_to_string(dir.join(format!("matches-{name}.md"))).unwrap();
        let rows = table_rows(&table, "3000");
        assert_eq!(rows.len(), 2, "{table}"); // against no books, against the engine's
        for row in &rows {
            assert_eq!(games_in(row[4]), 4, "{table}");
        }
        scores.push(rows.iter().map(|row| score_in(row[3])).collect::<Vec<_>>());
    }
    assert!(scores[0].iter().zip(&scores[1]).all(|(a, b)| a != b), "{scores:?}");
    let comparison = std::fs::read_to_string(dir.join("compare-books.md")).unwrap();
    let rows = table_rows(&comparison, "3000");
    assert_eq!(rows.len(), 2, "{comparison}");
    for (k, row) in rows.iter().enumerate() {
        assert_eq!(score_in(row[2]), scores[0][k] - scores[1][k], "{comparison}");
        assert_eq!(row[3], "4", "{comparison}");
    }

    // Resumed, a match played before with the same settings and files is
    // not played again (`false` as the match would fail the script): the
    // table is the first run's, row for row. With another setting, it is.
    let again = dir.join("again.md");
    let resumed = |rule: &str, table: &std::path::Path, games: &str, matcher: &str| {
        script("scripts/matches.sh")
            .env("NODES", "3000")
            .env("BOOK", "data/book")
            .env("TABLE", table)
            .env("GAMES", dir.join(games))
            .env("OUT", &again)
            .env("RESUME", "1")
            .env("RULE", rule)
            .env("MATCH", matcher)
            .output()
            .unwrap()
    };
    let shipped = std::path::Path::new("data/endgames-12.owtb.zst");
    let out = resumed("--margin 0 --min-count 0", shipped, "games/book", "/bin/false");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let first = std::fs::read_to_string(dir.join("matches-book.md")).unwrap();
    assert_eq!(std::fs::read_to_string(&again).unwrap(), first);
    let out = resumed("--margin 1 --min-count 0", shipped, "games/book", "/bin/false");
    assert!(!out.status.success());

    // Nor is it reused when a file it read has changed under the same name.
    let table = dir.join("table.owtb.zst");
    std::fs::copy(shipped, &table).unwrap();
    let rule = "--margin 0 --min-count 0";
    let out = resumed(rule, &table, "games/copy", env!("CARGO_BIN_EXE_match"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = resumed(rule, &table, "games/copy", "/bin/false");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut changed = std::fs::read(shipped).unwrap();
    changed.push(0);
    std::fs::write(&table, changed).unwrap();
    assert!(!resumed(rule, &table, "games/copy", "/bin/false").status.success());

    let leave = dir.join("leave-rule.md");
    let out = script("scripts/leave-rule.sh")
        .env("BOOK", "data/book-dir")
        .env("RULES", " ; --margin 0;--margin 0 --min-depth 4 ;")
        .env("OUT", &leave)
        .env("GAMES", dir.join("leave-rule"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = std::fs::read_to_string(&leave).unwrap();
    let first = table_rows(&table, "`--margin 0`");
    assert_eq!(first.len(), 1, "{table}");
    assert_eq!(games_in(first[0][2]), 4, "{table}");
    let second = table_rows(&table, "`--margin 0 --min-depth 4`");
    assert_eq!(second.len(), 2, "{table}"); // its match, then its comparison
    assert_eq!(games_in(second[0][2]), 4, "{table}");
    assert_eq!(score_in(second[1][1]), score_in(second[0][1]) - score_in(first[0][1]), "{table}");
    assert!(second[1][2].ends_with(" of 4"), "{table}");
    assert!(table.contains("minus `--margin 0` ± s.e."), "{table}");
    std::fs::remove_dir_all(&dir).unwrap();
}
