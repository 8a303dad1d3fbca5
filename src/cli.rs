//! What every binary shares: one-line errors with a non-zero exit, the
//! progress-bar factory (hidden when stderr is not a terminal), and reading
//! a state or game from an argument.

use std::fmt::Display;
use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::notation::Game;

/// Runs a binary's body: on error prints `name: error: cause: cause` on one
/// line of stderr and exits with status 1.
pub fn run<E: Display>(name: &str, body: impl FnOnce() -> Result<(), E>) {
    if let Err(error) = body() {
        eprintln!("{name}: error: {error}");
        std::process::exit(1);
    }
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
