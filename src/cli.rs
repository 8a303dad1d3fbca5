//! What every binary shares: one-line errors with a non-zero exit, the
//! progress-bar factory (hidden when stderr is not a terminal), and reading
//! a state or game from an argument.

use std::fmt::{Arguments, Display};
use std::io::{ErrorKind, IsTerminal, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::notation::Game;

/// Runs a binary's body: on error prints `name: error: cause: cause` on one
/// line of stderr and exits with status 1.
pub fn run<E: Display>(name: &str, body: impl FnOnce() -> Result<(), E>) {
    if let Err(error) = body() {
        // (If nobody reads stderr either, there is no one left to tell.)
        let _ = writeln!(std::io::stderr(), "{name}: error: {error}");
        std::process::exit(1);
    }
}

/// Writes one line of a command's output to stdout (what [`say!`] calls).
/// When nobody reads it any more (`… | head`), the rest of the output is
/// wanted by no one: the program ends at once, quietly, with status 0.
/// Any other write error ends it with status 1 and a line on stderr.
pub fn say_line(line: Arguments) {
    let mut out = std::io::stdout().lock();
    if let Err(error) = out.write_fmt(line).and_then(|()| out.write_all(b"\n")).and_then(|()| out.flush()) {
        if error.kind() == ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        let _ = writeln!(std::io::stderr(), "error: cannot write the output: {error}");
        std::process::exit(1);
    }
}

/// Writes one line of a long job's log to stderr (what [`note!`] calls).
/// A job outlives its log: when nobody reads it any more the line is
/// dropped and the job goes on (a build keeps building, its files are what
/// matters).
pub fn note_line(line: Arguments) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// `println!` for a command's output: ends the program quietly when the
/// reader has gone (see [`say_line`]).
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => { $crate::cli::say_line(format_args!($($arg)*)) };
}

/// `eprintln!` for a job's log: never stops the job (see [`note_line`]).
#[macro_export]
macro_rules! note {
    ($($arg:tt)*) => { $crate::cli::note_line(format_args!($($arg)*)) };
}

/// Reads a game (or a bare state) given on the command line; the default is
/// the start of the game.
pub fn parse_game(text: Option<&str>) -> anyhow::Result<Game> {
    let text = text.unwrap_or("4-4-4-4-4-4-4-4-4-4-4-4-0-0-S");
    text.parse::<Game>().map_err(|e| anyhow::anyhow!("cannot read the game '{text}': {e}"))
}

/// A progress bar over `total` items counted in `unit`, drawn only when
/// stderr is a terminal so logs and CI stay clean.
pub fn progress_bar(total: u64, message: impl Into<String>, unit: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    let template =
        format!("{{msg:>14}} [{{bar:32}}] {{human_pos}}/{{human_len}} {unit} {{per_sec}} ETA {{eta}}");
    bar.set_style(ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar()));
    bar.set_message(message.into());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// Formats a count with thousands separators: 1234567 → "1,234,567".
pub fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The search engine's options shared by the `search` and `bench`
/// binaries.
#[derive(clap::Args, Clone, Debug)]
pub struct EngineArgs {
    /// Transposition table size in MiB (0: none).
    #[arg(long, default_value_t = 16)]
    pub hash: usize,
    /// Move ordering up to this step: none, table-move, captures, defensive,
    /// history (`bench` also takes `all`: each step in turn).
    #[arg(long, default_value = "history")]
    pub ordering: String,
    /// Evaluation weights: fitted, engine-2014, or store,big,empty,small,row.
    #[arg(long, default_value = "fitted")]
    pub weights: String,
}
