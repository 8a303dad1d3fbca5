//! Resident memory of this process, as the operating system counts it, and
//! its peaks per phase of a long computation; and the hints that make
//! big arrays read at random cheaper (huge pages, prefetches).
//!
//! Two figures matter to someone sizing a machine for a build: anonymous
//! memory (the heap: arrays, queues, stacks), which must fit in RAM, and
//! file-backed memory (pages of memory-mapped files, such as the lower
//! layers of a tablebase), which the kernel may drop and read again. Linux
//! reports both in `/proc/self/status` (`RssAnon`, `RssFile`); elsewhere
//! nothing is measured and the figures read 0.
//!
//! A [`PeakSampler`] reads them every few milliseconds on a thread of its
//! own and keeps, per phase, the highest value seen. Sampling can miss a
//! peak shorter than its period; the arrays that decide a big layer's peak
//! live for seconds or minutes.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Resident memory of the process, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resident {
    /// Anonymous pages: heap, stacks.
    pub anonymous: u64,
    /// Pages of mapped files (and shared memory).
    pub file: u64,
}

/// The process's resident memory now; `None` where the system does not
/// report it (anything but Linux).
pub fn resident() -> Option<Resident> {
    // Only Linux's /proc has these fields; elsewhere a /proc/self/status
    // (an emulation, say) is not read as if it were Linux's.
    if cfg!(target_os = "linux") {
        parse_status(&std::fs::read_to_string("/proc/self/status").ok()?)
    } else {
        None
    }
}

/// `RssAnon` and `RssFile` (+ `RssShmem`) of a `/proc/<pid>/status` text.
fn parse_status(status: &str) -> Option<Resident> {
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kib: u64 = line[name.len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kib * 1024)
    };
    let anonymous = field("RssAnon:")?;
    let file = field("RssFile:")? + field("RssShmem:").unwrap_or(0);
    Some(Resident { anonymous, file })
}

/// Hands memory the allocator holds but no longer uses back to the system
/// (glibc keeps freed blocks in its arenas; between the phases of a big
/// layer that is hundreds of megabytes). Does nothing elsewhere.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Asks the kernel to back the spare capacity of `buffer` with huge pages
/// (Linux: `madvise(MADV_HUGEPAGE)`; where transparent huge pages are set
/// to `madvise`, nothing else gets them). For big arrays read at random,
/// such as a transposition table: with small pages nearly every read also
/// misses the TLB. Call it after reserving and before filling: pages
/// already touched keep their size. Only whole 2 MiB blocks are advised
/// (smaller ranges cannot get a huge page). Only advice: it changes no
/// value, and does nothing elsewhere or when the kernel declines.
pub fn advise_huge_pages<T>(buffer: &mut Vec<T>) {
    let spare = buffer.spare_capacity_mut();
    advise_range(spare.as_mut_ptr() as usize, std::mem::size_of_val(spare));
}

/// Asks the processor to bring `item`'s cache line in, for a read soon
/// after: a loop over many independent reads at random (a layer's labels,
/// a table's buckets) then waits for several at once rather than one after
/// another. A hint: no effect on any result.
#[inline]
pub fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and faults on no
    // address; SSE, which it needs, is part of every x86-64 processor.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(item as *const T as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

/// Blocks from this size up get [`HugePageAllocator`]'s advice: the
/// per-position arrays of a big layer (a byte a position of layer 20 is
/// 85 MB), not the many small vectors of everything else.
pub const HUGE_PAGES_FROM: usize = 32 << 20;

/// The system allocator, which also asks for huge pages behind every
/// block of [`HUGE_PAGES_FROM`] bytes or more, as [`advise_huge_pages`]
/// does for one vector. A binary that builds big tables makes it its
/// global allocator (`#[global_allocator]`): the labels, counters and
/// bounds of a layer are arrays of a byte or a few a position, read and
/// written at random, and with 4 KiB pages nearly every such access also
/// misses the TLB; where transparent huge pages are set to `madvise` (the
/// usual default) no array gets them unasked. It changes no value: the
/// advice only sizes the pages. (glibc hands out blocks this big by
/// `mmap`, untouched, so the advice comes before their first fault; a
/// block grown in place by `realloc` is advised again.)
pub struct HugePageAllocator;

impl HugePageAllocator {
    #[inline]
    fn advise(block: *mut u8, size: usize) {
        if size >= HUGE_PAGES_FROM && !block.is_null() {
            advise_range(block as usize, size);
        }
    }
}

// SAFETY: every call is passed to `System` unchanged; the advice only
// touches the kernel's bookkeeping of the block's own pages.
unsafe impl std::alloc::GlobalAlloc for HugePageAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let block = std::alloc::System.alloc(layout);
        Self::advise(block, layout.size());
        block
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        let block = std::alloc::System.alloc_zeroed(layout);
        Self::advise(block, layout.size());
        block
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: std::alloc::Layout) {
        std::alloc::System.dealloc(block, layout)
    }

    unsafe fn realloc(&self, block: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        let moved = std::alloc::System.realloc(block, layout, new_size);
        Self::advise(moved, new_size);
        moved
    }
}

/// `madvise(MADV_HUGEPAGE)` on the whole 2 MiB blocks inside
/// `start..start + len` (Linux; nothing elsewhere). Only advice.
fn advise_range(start: usize, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE_PAGE: usize = 2 << 20;
        // 2 MiB is a multiple of every page size Linux uses (4, 16, 64 KiB).
        let first = start.next_multiple_of(HUGE_PAGE);
        let last = (start + len) / HUGE_PAGE * HUGE_PAGE;
        if last > first {
            // SAFETY: the caller's range is memory it owns; MADV_HUGEPAGE
            // changes no content.
            unsafe {
                libc::madvise(first as *mut libc::c_void, last - first, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, len);
}

/// How often a [`PeakSampler`] reads the figures.
const PERIOD: Duration = Duration::from_millis(10);

/// Peaks of resident memory per phase, sampled on a background thread
/// until dropped. Phases are numbered `0..phases`; [`PeakSampler::enter`]
/// says which one runs.
pub struct PeakSampler {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    stop: AtomicBool,
    phase: AtomicUsize,
    /// Per phase: peak anonymous, peak file-backed bytes.
    anonymous: Vec<AtomicU64>,
    file: Vec<AtomicU64>,
}

impl Shared {
    fn sample(&self) {
        // (The phase first: a sample read after a phase change belongs to
        // the new phase.)
        let phase = self.phase.load(Relaxed);
        if let Some(now) = resident() {
            self.anonymous[phase].fetch_max(now.anonymous, Relaxed);
            self.file[phase].fetch_max(now.file, Relaxed);
        }
    }
}

impl PeakSampler {
    /// Starts sampling, in phase 0. If no thread can be started the
    /// sampler still records the samples taken at each phase change.
    pub fn start(phases: usize) -> PeakSampler {
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            phase: AtomicUsize::new(0),
            anonymous: (0..phases.max(1)).map(|_| AtomicU64::new(0)).collect(),
            file: (0..phases.max(1)).map(|_| AtomicU64::new(0)).collect(),
        });
        shared.sample();
        let looping = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("memory sampler".into())
            .spawn(move || {
                while !looping.stop.load(Relaxed) {
                    looping.sample();
                    std::thread::park_timeout(PERIOD);
                }
            })
            .ok();
        PeakSampler { shared, thread }
    }

    /// From now on samples count for `phase` (samples the end of the
    /// previous phase and the start of this one).
    pub fn enter(&self, phase: usize) {
        self.shared.sample();
        self.shared.phase.store(phase.min(self.shared.anonymous.len() - 1), Relaxed);
        self.shared.sample();
    }

    /// Peak `(anonymous, file-backed)` bytes seen in `phase` so far.
    pub fn peak(&self, phase: usize) -> (u64, u64) {
        self.shared.sample();
        let phase = phase.min(self.shared.anonymous.len() - 1);
        (self.shared.anonymous[phase].load(Relaxed), self.shared.file[phase].load(Relaxed))
    }
}

impl Drop for PeakSampler {
    fn drop(&mut self) {
        self.shared.stop.store(true, Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_huge_page_allocator_hands_out_the_system_allocators_blocks() {
        use std::alloc::{GlobalAlloc, Layout};
        // Above the advice's threshold, as a layer's arrays are, and below.
        for size in [HUGE_PAGES_FROM + 4096 + 3, 1000] {
            let layout = Layout::from_size_align(size, 8).expect("a layout");
            // SAFETY: the blocks are used within their layouts and freed once.
            unsafe {
                let zeroed = HugePageAllocator.alloc_zeroed(layout);
                assert!(!zeroed.is_null());
                let bytes = std::slice::from_raw_parts_mut(zeroed, size);
                assert!(bytes.iter().all(|&b| b == 0), "zeroed block of {size} bytes");
                for (k, b) in bytes.iter_mut().enumerate() {
                    *b = (k % 251) as u8;
                }
                // Grown past the threshold (or further): the content moves along.
                let grown = HugePageAllocator.realloc(zeroed, layout, 2 * size + HUGE_PAGES_FROM);
                assert!(!grown.is_null());
                let kept = std::slice::from_raw_parts(grown, size);
                assert!(
                    kept.iter().enumerate().all(|(k, &b)| b == (k % 251) as u8),
                    "{size} bytes after realloc"
                );
                HugePageAllocator
                    .dealloc(grown, Layout::from_size_align(2 * size + HUGE_PAGES_FROM, 8).unwrap());
                let plain = HugePageAllocator.alloc(layout);
                assert!(!plain.is_null());
                plain.write_bytes(7, size);
                assert_eq!(*plain.add(size - 1), 7);
                HugePageAllocator.dealloc(plain, layout);
            }
        }
    }

    #[test]
    fn the_status_fields_are_read_in_bytes() {
        let status = "Name:\tx\nVmRSS:\t  9000 kB\nRssAnon:\t    5000 kB\nRssFile:\t    3000 kB\nRssShmem:\t       1000 kB\n";
        assert_eq!(parse_status(status), Some(Resident { anonymous: 5000 * 1024, file: 4000 * 1024 }));
        assert_eq!(parse_status("Name:\tx\n"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn linux_reports_both_figures_of_this_process() {
        let now = resident().expect("Linux reports RssAnon and RssFile");
        // The test's heap and stacks are anonymous; its own code is a
        // mapped file.
        assert!(now.anonymous > 0 && now.file > 0, "{now:?}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_phase_sees_an_array_it_touches() {
        // (Other tests share the process, so only a lower bound is sure:
        // the array's own pages are resident while it lives.)
        let sampler = PeakSampler::start(2);
        sampler.enter(1);
        let array = vec![1u8; 64 << 20];
        std::hint::black_box(&array);
        let during = sampler.peak(1).0;
        drop(array);
        assert!(during >= 64 << 20, "{during} bytes");
        assert!(sampler.peak(0).0 > 0, "phase 0 was sampled at the start");
    }

    #[cfg(not(target_os = "linux"))]
    #[test]
    fn elsewhere_nothing_is_measured_and_every_peak_is_zero() {
        assert_eq!(resident(), None);
        let sampler = PeakSampler::start(2);
        sampler.enter(1);
        let array = vec![1u8; 1 << 20];
        std::hint::black_box(&array);
        assert_eq!((sampler.peak(0), sampler.peak(1)), ((0, 0), (0, 0)));
    }
}
