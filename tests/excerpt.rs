//! Excerpts of the shipped table: taken, written and read back to the same
//! samples; their check passes on the table as shipped and catches a
//! changed value, a move list that is not the rules', a text changed
//! without its checksum; the command line writes and checks them.

use std::fs;
use std::path::Path;

use crate::common::{run, Scratch, SHIPPED};

use oware::rank::layer_size;
use oware::tablebase::excerpt::{Excerpt, ExcerptError};
use oware::tablebase::Tablebase;

fn shipped() -> Tablebase {
    Tablebase::open(Path::new(SHIPPED)).unwrap()
}

#[test]
fn excerpts_read_back_and_pass_their_check() {
    let table = shipped();
    for (layer, count) in [(1, layer_size(1)), (6, 400), (12, 400)] {
        let excerpt = Excerpt::take(&table, layer, count, 7).unwrap();
        assert_eq!(excerpt.samples.len() as u64, count);
        assert_eq!(excerpt.table_checksum, table.header().body_checksum);
        let text = excerpt.render();
        assert_eq!(Excerpt::parse(&text).unwrap(), excerpt, "layer {layer}");
        // The same seed gives the same bytes; another seed, other positions.
        assert_eq!(Excerpt::take(&table, layer, count, 7).unwrap().render(), text);
        let report = excerpt.check();
        assert_eq!((report.positions, report.failures), (count, 0), "{:?}", report.examples);
        if layer >= 6 {
            assert_ne!(Excerpt::take(&table, layer, count, 8).unwrap().samples, excerpt.samples);
            // Both kinds of position are sampled and checked.
            assert!(report.rederived > 0 && report.cycle_checked > 0, "{report:?}");
        }
    }
    // The whole of a small layer, each position once.
    let whole = Excerpt::take(&table, 3, layer_size(3), 1).unwrap();
    assert!(whole.samples.iter().enumerate().all(|(i, s)| s.index == i as u64));
}

#[test]
fn the_check_catches_wrong_values_and_moves() {
    let table = shipped();
    let excerpt = Excerpt::take(&table, 9, 300, 3).unwrap();
    let failures = |changed: &Excerpt| {
        // Through the text, as a reader meets it.
        Excerpt::parse(&changed.render()).unwrap().check().failures
    };
    assert_eq!(failures(&excerpt), 0);
    // A position on no cycle whose best child is worth one seed less to
    // its mover: the position's own entry no longer matches its options.
    let (acyclic, best) = excerpt
        .samples
        .iter()
        .enumerate()
        .find_map(|(i, s)| {
            let best = (0..s.children.len()).max_by_key(|&j| 9 - s.children[j].entry.upper)?;
            let child = &s.children[best].entry;
            (!s.entry.on_cycle && child.is_exact() && child.value > 0).then_some((i, best))
        })
        .unwrap();
    let mut changed = excerpt.clone();
    let child = &mut changed.samples[acyclic].children[best].entry;
    let less = child.value - 1;
    (child.value, child.lower, child.upper) = (less, less, less);
    assert_eq!(failures(&changed), 1);
    // The sampled value itself off by one.
    let mut changed = excerpt.clone();
    let entry = &mut changed.samples[acyclic].entry;
    let n = 9;
    let other = if entry.value < n { entry.value + 1 } else { entry.value - 1 };
    (entry.value, entry.lower, entry.upper) = (other, other, other);
    assert_eq!(failures(&changed), 1);
    // A position on a cycle whose upper bound falls below an exit.
    let (cyclic, exit) = excerpt
        .samples
        .iter()
        .enumerate()
        .find_map(|(i, s)| {
            let best_exit = s
                .children
                .iter()
                .filter(|c| c.captured > 0 || !c.entry.on_cycle)
                .map(|c| 9 - c.entry.upper)
                .max()?;
            (s.entry.on_cycle && best_exit > 0).then_some((i, best_exit))
        })
        .unwrap();
    let mut changed = excerpt.clone();
    let entry = &mut changed.samples[cyclic].entry;
    (entry.value, entry.lower, entry.upper) = (exit - 1, exit - 1, exit - 1);
    assert_eq!(failures(&changed), 1);
    // A move the rules do not give: a dropped move, another capture.
    let mut changed = excerpt.clone();
    let many = changed.samples.iter().position(|s| s.children.len() > 1).unwrap();
    changed.samples[many].children.pop();
    assert_eq!(failures(&changed), 1);
    let mut changed = excerpt.clone();
    let capture = changed.samples.iter().position(|s| s.children.iter().any(|c| c.captured > 0)).unwrap();
    let child = changed.samples[capture].children.iter_mut().find(|c| c.captured > 0).unwrap();
    child.captured -= 1;
    child.position = oware::Position::new({
        let mut pits = child.position.pits();
        pits[6] += 1;
        pits
    });
    assert_eq!(failures(&changed), 1);
}

#[test]
fn a_changed_or_cut_excerpt_is_refused() {
    let text = Excerpt::take(&shipped(), 8, 50, 1).unwrap().render();
    let corrupt = |text: &str| match Excerpt::parse(text) {
        Err(ExcerptError::Corrupt { problem, .. }) => problem,
        other => panic!("{other:?}"),
    };
    // One digit of a value changed, the checksum left as it was.
    let at = text.find("position ").unwrap();
    let line_end = at + text[at..].find('\n').unwrap();
    let mut changed = text.clone();
    let digit = changed[at..line_end].rfind(|c: char| c.is_ascii_digit()).unwrap() + at;
    let old = changed.as_bytes()[digit];
    changed.replace_range(digit..digit + 1, if old == b'1' { "2" } else { "1" });
    assert!(corrupt(&changed).contains("checksum does not match"));
    // Cut short: the checksum line is gone, or its last lines.
    let cut = &text[..text.trim_end().rfind('\n').unwrap() + 1];
    assert!(corrupt(cut).contains("checksum"));
    assert!(corrupt(&text[..text.len() / 2]).contains("checksum"));
    assert!(corrupt("hello\n").contains("checksum"));
    assert!(Excerpt::parse("").is_err());
    // Not an excerpt at all, though signed.
    let other = "oware-excerpt 2\n";
    let signed = format!("{other}checksum {:016x}\n", oware::checksum::checksum(other.as_bytes()));
    assert!(corrupt(&signed).contains("oware-excerpt 1"));
}

#[test]
fn takes_only_what_the_table_has() {
    let table = shipped();
    assert!(matches!(
        Excerpt::take(&table, 13, 10, 1),
        Err(ExcerptError::LayerOutside { layer: 13, largest: 12 })
    ));
    for count in [0, layer_size(4) + 1] {
        let error = Excerpt::take(&table, 4, count, 1).unwrap_err();
        assert!(matches!(error, ExcerptError::Count { .. }), "{error}");
        assert!(error.to_string().contains("from 1 to 1365"), "{error}");
    }
}

#[test]
fn the_command_line_writes_and_checks_excerpts() {
    let endgames = env!("CARGO_BIN_EXE_endgames");
    let dir = Scratch::new("excerpt");
    let out = dir.join("layer-10.txt");
    let out = out.to_str().unwrap();
    let (ok, stdout, stderr) = run(
        endgames,
        &["excerpt", "-b", SHIPPED, "--layer", "10", "--count", "120", "--seed", "4", "-o", out],
    );
    assert!(ok, "{stderr}");
    assert!(stdout.contains("120 positions of layer 10"), "{stdout}");
    assert_eq!(fs::read_to_string(out).unwrap(), Excerpt::take(&shipped(), 10, 120, 4).unwrap().render());
    let (ok, stdout, stderr) = run(endgames, &["check-excerpt", out]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("120 positions checked"), "{stdout}");
    // A wrong value, signed again: the check fails and says where.
    let mut excerpt = Excerpt::parse(&fs::read_to_string(out).unwrap()).unwrap();
    let sample = excerpt.samples.iter_mut().find(|s| !s.entry.on_cycle).unwrap();
    let other = if sample.entry.value > 0 { sample.entry.value - 1 } else { 1 };
    (sample.entry.value, sample.entry.lower, sample.entry.upper) = (other, other, other);
    fs::write(out, excerpt.render()).unwrap();
    let (ok, stdout, stderr) = run(endgames, &["check-excerpt", out]);
    assert!(!ok);
    assert!(stdout.contains("failure: "), "{stdout}");
    assert!(stderr.contains("1 sampled entries fail the check"), "{stderr}");
    // Refused before any work: the table itself, a layer it lacks.
    let (ok, _, stderr) = run(endgames, &["excerpt", "-b", SHIPPED, "--layer", "3", "-o", SHIPPED]);
    assert!(!ok && stderr.contains("it is the input of this command"), "{stderr}");
    let (ok, _, stderr) = run(endgames, &["excerpt", "-b", SHIPPED, "--layer", "13", "-o", out]);
    assert!(!ok && stderr.contains("layer 13 is not in the table"), "{stderr}");
    // Not an excerpt.
    let (ok, _, stderr) = run(endgames, &["check-excerpt", SHIPPED]);
    assert!(!ok && stderr.lines().count() == 1, "{stderr}");
}

/// The second reader, `scripts/check-excerpt.py` (its own rules, parser
/// and checksum, written from the docs alone), agrees with ours on
/// excerpts of the shipped table and fails on a damaged one. Without
/// `python3` the test says so and passes, unless OWARE_REQUIRE_PYTHON=1
/// (`.ci/run` sets it) makes that a failure.
#[test]
fn the_python_reader_agrees() {
    let python = std::process::Command::new("python3").arg("--version").output();
    if !python.is_ok_and(|out| out.status.success()) {
        assert!(
            std::env::var("OWARE_REQUIRE_PYTHON").as_deref() != Ok("1"),
            "python3 is needed for the second reader of excerpts"
        );
        eprintln!("the_python_reader_agrees: SKIPPED: no python3 on the PATH");
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/check-excerpt.py");
    let dir = Scratch::new("python");
    let table = shipped();
    let mut paths = Vec::new();
    for layer in [2, 5, 9, 12] {
        let excerpt = Excerpt::take(&table, layer, 1_000.min(layer_size(layer)), layer as u64).unwrap();
        let path = dir.join(&format!("layer-{layer}.txt"));
        fs::write(&path, excerpt.render()).unwrap();
        paths.push(path.to_str().unwrap().to_string());
    }
    let args: Vec<&str> = std::iter::once(script).chain(paths.iter().map(String::as_str)).collect();
    let (ok, stdout, stderr) = run("python3", &args);
    assert!(ok, "{stdout}{stderr}");
    assert_eq!(stdout.matches(", 0 failures").count(), 4, "{stdout}");
    // A value off by one, signed again: the second reader fails too.
    let mut excerpt = Excerpt::parse(&fs::read_to_string(&paths[2]).unwrap()).unwrap();
    let sample = excerpt.samples.iter_mut().find(|s| !s.entry.on_cycle && !s.children.is_empty()).unwrap();
    let other = if sample.entry.value < 9 { sample.entry.value + 1 } else { 8 };
    (sample.entry.value, sample.entry.lower, sample.entry.upper) = (other, other, other);
    fs::write(&paths[2], excerpt.render()).unwrap();
    let (ok, stdout, _) = run("python3", &[script, &paths[2]]);
    assert!(!ok && stdout.contains("1 failures"), "{stdout}");
}
