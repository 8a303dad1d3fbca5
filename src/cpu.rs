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
