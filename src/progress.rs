//! How a long job (a tablebase build, a book's growth) tells whoever runs
//! it what it is doing, without the library knowing of terminals: the job
//! calls an [`Observer`]; a binary implements one with progress bars and
//! log lines, a test or an engine passes [`Silent`].

/// What a long job reports. Every method does nothing unless implemented.
/// Jobs call it from their worker threads too, so it must be `Sync`.
pub trait Observer: Sync {
    /// One line worth keeping: a layer finished, a resume, a file written.
    fn line(&self, _text: &str) {}
    /// A phase of work begins, `total` units long (`unit` names them,
    /// e.g. "positions"); its description is `name`.
    fn phase(&self, _name: &str, _total: u64, _unit: &'static str) {}
    /// The current phase has done `done` units in all.
    fn position(&self, _done: u64) {}
    /// The current phase has done `more` units more.
    fn advance(&self, _more: u64) {}
    /// The current phase's description changes (a round, a count).
    fn detail(&self, _text: &str) {}
    /// The phases of a step (a layer, a growth) are over; a new phase may
    /// follow.
    fn finish(&self) {}
}

/// Reports nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Observer for Silent {}

/// A [`Silent`] with a `'static` address, the default of every job.
pub static SILENT: Silent = Silent;
