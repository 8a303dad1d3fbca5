//! The binaries: results on stdout, one clear line and a non-zero exit on
//! bad input.

use std::process::Command;

fn perft(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_perft")).args(args).output().expect("runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
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
