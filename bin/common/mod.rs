//! What every binary shares: one-line errors with a non-zero exit, output
//! that survives a closed pipe, progress bars (drawn only when stderr is a
//! terminal) behind the library's observer, and reading a state or game
//! from an argument. The library knows nothing of this.

// Each binary uses its own part of this module.
#![allow(dead_code, unused_imports, unused_macros)]

use std::fmt::{Arguments, Display};
use std::io::{ErrorKind, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use oware::progress::Observer;
use oware::Game;

/// Huge pages behind every big block, for every binary
/// (`oware::memory::HugePageAllocator`): a tablebase layer's arrays and a
/// search's table are read and written at random, and with small pages
/// nearly every access also misses the TLB.
#[global_allocator]
static ALLOCATOR: oware::memory::HugePageAllocator = oware::memory::HugePageAllocator;

/// Runs a binary's body: on error prints `name: error: what: cause: cause`
/// on one line of stderr ([`one_line`]) and exits with status 1.
pub fn run(name: &str, body: impl FnOnce() -> anyhow::Result<()>) {
    if let Err(error) = body() {
        // (If nobody reads stderr either, there is no one left to tell.)
        let _ = writeln!(std::io::stderr(), "{name}: error: {}", one_line(&error));
        std::process::exit(1);
    }
}

/// The command line parsed into `T`. A usage error is one line in the
/// binaries' one error format (`NAME: error: …`, exit status 2, clap's
/// own); `--help` and `--version` print as clap prints them.
pub fn parse_args<T: clap::Parser>(name: &str) -> T {
    use clap::error::ErrorKind;
    match T::try_parse() {
        Ok(args) => args,
        Err(error)
            if matches!(
                error.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) =>
        {
            error.exit()
        }
        Err(error) => {
            // clap's text: "error: …", indented details, a usage line and a
            // hint; the message and its details make the line.
            let text = error.render().to_string();
            let parts: Vec<&str> = text
                .lines()
                .map(str::trim)
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
                .filter(|l| !l.is_empty())
                .collect();
            let line = parts.join(" ");
            let _ = writeln!(std::io::stderr(), "{name}: error: {}", line.trim_start_matches("error: "));
            std::process::exit(2);
        }
    }
}

/// An error and its causes on one line, each cause after a colon unless
/// the text so far holds it already (the library's errors name their
/// cause in their own text, and some also return it as their source).
pub fn one_line(error: &anyhow::Error) -> String {
    let mut line = error.to_string();
    for cause in error.chain().skip(1) {
        let text = cause.to_string();
        if !line.contains(&text) {
            line += ": ";
            line += &text;
        }
    }
    line
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
macro_rules! say {
    ($($arg:tt)*) => { $crate::common::say_line(format_args!($($arg)*)) };
}

/// `eprintln!` for a job's log: never stops the job (see [`note_line`]).
macro_rules! note {
    ($($arg:tt)*) => { $crate::common::note_line(format_args!($($arg)*)) };
}

pub(crate) use {note, say};

/// Reads a game (or a bare state) given on the command line; the default is
/// the start of the game.
pub fn parse_game(text: Option<&str>) -> anyhow::Result<Game> {
    let text = text.unwrap_or("4-4-4-4-4-4-4-4-4-4-4-4-0-0-S");
    text.parse::<Game>().map_err(|e| {
        // A long input is not echoed whole: the error says where it fails.
        let shown: String = text.chars().take(60).collect();
        let more = if shown.len() < text.len() {
            format!("…' ({} characters)", text.chars().count())
        } else {
            "'".into()
        };
        anyhow::anyhow!("cannot read the game '{shown}{more}: {e}")
    })
}

/// The longest duration an argument may give: a century, which every
/// clock sum (`Instant + Duration`) holds.
pub const MAX_ARGUMENT_SECONDS: f64 = 100.0 * 365.25 * 86_400.0;

/// A duration given in seconds by `flag`: a finite number, positive (or
/// zero, if `zero_allowed`), at most [`MAX_ARGUMENT_SECONDS`].
pub fn seconds_argument(flag: &str, seconds: f64, zero_allowed: bool) -> anyhow::Result<Duration> {
    let least_ok = if zero_allowed { seconds >= 0.0 } else { seconds > 0.0 };
    if !(least_ok && seconds <= MAX_ARGUMENT_SECONDS) {
        let which = if zero_allowed { "a number of seconds from 0" } else { "a positive number of seconds" };
        anyhow::bail!("{flag} takes {which} up to {MAX_ARGUMENT_SECONDS:.0} (a century), not {seconds}");
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// A progress bar over `total` items counted in `unit`, drawn only when
/// stderr is a terminal so logs and CI stay clean.
pub fn progress_bar(total: u64, message: impl Into<String>, unit: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    let template =
        format!("{{msg:>14}} [{{bar:32}}] {{human_pos}}/{{human_len}} {unit} {{rate}} ETA {{eta}}");
    let style = ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar());
    // Whole units a second, grouped by thousands ("4,568/s", not
    // indicatif's "4,567.5763/s").
    let style = style.with_key("rate", |state: &indicatif::ProgressState, out: &mut dyn std::fmt::Write| {
        let _ = write!(out, "{}/s", thousands(state.per_sec().round() as u64));
    });
    bar.set_style(style);
    bar.set_message(message.into());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

pub use oware::text::thousands;

/// The search engine's options shared by the `search` and `bench`
/// binaries.
#[derive(clap::Args, Clone, Debug)]
pub struct EngineArgs {
    /// Transposition table size in MiB (0: none).
    #[arg(long, default_value_t = 16)]
    pub hash: usize,
    /// Move ordering up to this step: none, table-move, captures, defensive,
    /// history.
    #[arg(long, default_value = "history")]
    pub ordering: String,
    /// Evaluation weights: fitted, engine-2014, or store,big,empty,small,row
    /// (each within ±10000).
    #[arg(long, default_value = "fitted")]
    pub weights: String,
}

/// The observer a binary hands to a long job: log lines on stderr (unless
/// quiet), and one progress bar, redrawn for each phase, when stderr is a
/// terminal.
pub struct Console {
    quiet: bool,
    /// Printed once, above the first log line (a table's column names).
    header: Option<String>,
    header_shown: AtomicBool,
    bar: Mutex<Option<ProgressBar>>,
    /// The bar's first position of a phase is where a resumed job starts,
    /// not progress: the rate and ETA start counting after it.
    fresh: AtomicBool,
}

impl Console {
    pub fn new(quiet: bool) -> Console {
        Console {
            quiet,
            header: None,
            header_shown: AtomicBool::new(false),
            bar: Mutex::new(None),
            fresh: AtomicBool::new(false),
        }
    }

    /// Prints `header` above the first log line.
    pub fn with_header(mut self, header: String) -> Console {
        self.header = Some(header);
        self
    }

    fn with_bar(&self, f: impl FnOnce(&ProgressBar)) {
        if let Ok(bar) = self.bar.lock() {
            if let Some(bar) = bar.as_ref() {
                f(bar);
            }
        }
    }
}

impl Observer for Console {
    fn line(&self, text: &str) {
        if self.quiet {
            return;
        }
        let print = || {
            if let Some(header) = &self.header {
                if !self.header_shown.swap(true, Ordering::Relaxed) {
                    note!("{header}");
                }
            }
            note!("{text}");
        };
        match self.bar.lock().ok().and_then(|bar| bar.clone()) {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }

    fn phase(&self, name: &str, total: u64, unit: &'static str) {
        if self.quiet || !std::io::stderr().is_terminal() {
            return;
        }
        if let Ok(mut slot) = self.bar.lock() {
            if let Some(old) = slot.take() {
                old.finish_and_clear();
            }
            *slot = Some(progress_bar(total, name, unit));
            self.fresh.store(true, Ordering::Relaxed);
        }
    }

    fn position(&self, done: u64) {
        self.with_bar(|bar| {
            bar.set_position(done);
            if self.fresh.swap(false, Ordering::Relaxed) {
                bar.reset_eta();
            }
        });
    }

    fn advance(&self, more: u64) {
        self.fresh.store(false, Ordering::Relaxed);
        self.with_bar(|bar| bar.inc(more));
    }

    fn detail(&self, text: &str) {
        self.with_bar(|bar| bar.set_message(text.to_string()));
    }

    fn finish(&self) {
        if let Ok(mut slot) = self.bar.lock() {
            if let Some(bar) = slot.take() {
                bar.finish_and_clear();
            }
        }
    }
}
