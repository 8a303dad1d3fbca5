//! CPU time of the whole process (every thread), for honest per-phase
//! figures next to wall time on shared machines.

/// User plus system CPU seconds the process has used so far (0 where the
/// platform does not say).
pub fn process_seconds() -> f64 {
    #[cfg(unix)]
    {
        // Safety: getrusage writes into the struct we pass and reads nothing.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } == 0 {
            let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
            return seconds(usage.ru_utime) + seconds(usage.ru_stime);
        }
    }
    0.0
}

/// The most worker threads any command accepts: far more than any machine
/// this toolchain targets has cores, few enough that a typo (`100000`)
/// cannot exhaust the process's memory with stacks (each reserves
/// [`WORKER_STACK`] of address space; only the pages used are memory).
pub const MAX_THREADS: usize = 1024;

/// A thread count outside `1..=MAX_THREADS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadCountError {
    /// The thread count asked for.
    pub requested: usize,
}

impl std::fmt::Display for ThreadCountError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} threads: give 1 to {MAX_THREADS}", self.requested)
    }
}

impl std::error::Error for ThreadCountError {}

/// Checks a requested thread count; `None` means one per core.
pub fn thread_count(requested: Option<usize>) -> Result<usize, ThreadCountError> {
    match requested {
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_THREADS)),
        Some(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        Some(n) => Err(ThreadCountError { requested: n }),
    }
}

/// Each worker thread's stack: 32 MiB.
pub const WORKER_STACK: usize = 32 << 20;

/// Sizes the global worker pool (rayon's) with a checked thread count and
/// returns it. Call once, before any parallel work.
pub fn use_threads(requested: Option<usize>) -> Result<usize, Box<dyn std::error::Error + Send + Sync>> {
    let threads = thread_count(requested)?;
    // Deep recursions (the cycle searches' lines, up to
    // `SearchBudget::MAX_PATH` plies) need more than the default 2 MiB
    // stack; untouched pages cost nothing.
    rayon::ThreadPoolBuilder::new().num_threads(threads).stack_size(WORKER_STACK).build_global()?;
    Ok(threads)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_counts_are_bounded() {
        assert_eq!(thread_count(Some(3)), Ok(3));
        assert_eq!(thread_count(Some(0)), Err(ThreadCountError { requested: 0 }));
        assert_eq!(thread_count(Some(100_000)), Err(ThreadCountError { requested: 100_000 }));
        assert!((1..=MAX_THREADS).contains(&thread_count(None).unwrap()));
    }
}
