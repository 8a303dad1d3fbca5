//! The ranks of an MPI job (`mpirun -np K endgames-mpi build …`), over
//! Open MPI or any MPI library the `mpi` crate builds against: the
//! [`Communicator`] of the distributed tablebase build. Only the thread
//! that called [`MpiWorld::init`] calls MPI (the level MPI calls
//! "funneled"); rayon's workers never do.
//!
//! A package of its own (the `oware` library knows nothing of MPI), so
//! that building it reuses the library as compiled for everything else;
//! its binary, `endgames-mpi`, is `bin/endgames.rs` with the `mpi`
//! feature: `endgames` whose `build` runs on every rank of the job.

use std::cell::Cell;

use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::SimpleCommunicator;
use mpi::traits::CommunicatorCollectives as _;
use mpi::Count;

use oware::cluster::{Communicator, Traffic};

/// MPI's world communicator; MPI is finalized when it is dropped.
pub struct MpiWorld {
    world: SimpleCommunicator,
    /// Most bytes per destination in one `MPI_Alltoallv` call.
    piece_bytes: usize,
    traffic: Cell<Traffic>,
    // Dropped last: finalizes MPI.
    _universe: mpi::environment::Universe,
}

/// Why MPI could not be started.
#[derive(Debug)]
pub struct MpiInitError;

impl std::fmt::Display for MpiInitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MPI could not be initialized (it was already, or the library refused)")
    }
}

impl std::error::Error for MpiInitError {}

impl MpiWorld {
    /// Initializes MPI; a program started without `mpirun` is rank 0 of 1.
    pub fn init() -> Result<MpiWorld, MpiInitError> {
        let (universe, _level) =
            mpi::initialize_with_threading(mpi::Threading::Funneled).ok_or(MpiInitError)?;
        let world = universe.world();
        let piece_bytes = piece_bytes(mpi::traits::Communicator::size(&world) as usize);
        Ok(MpiWorld { world, piece_bytes, traffic: Cell::new(Traffic::default()), _universe: universe })
    }

    /// Sends long messages in pieces of at most `bytes` (at least 1) per
    /// destination and call, rather than the largest pieces MPI takes: the
    /// checks use it to exercise the pieces with small builds. Every rank
    /// must set the same.
    pub fn with_piece_bytes(mut self, bytes: usize) -> MpiWorld {
        self.piece_bytes = bytes.clamp(1, self.piece_bytes);
        self
    }
}

/// Bytes per destination in one `MPI_Alltoallv` call: counts and
/// displacements are 32-bit, so a round's whole buffer stays below 2 GiB.
fn piece_bytes(ranks: usize) -> usize {
    (1usize << 30) / ranks.max(1)
}

impl MpiWorld {
    /// `MPI_Alltoall` of one word per rank, waited for without spinning
    /// ([`wait_idle`]). Every exchange starts with it, and a rank can wait
    /// there for a long time (the others wait while rank 0 solves a layer's
    /// small components): a blocking call would poll at full speed and,
    /// with several ranks on one machine, take the cores the working rank's
    /// threads need.
    fn all_to_all_waiting_idle(&self, send: &[u64], receive: &mut [u64]) {
        mpi::request::scope(|scope| {
            wait_idle(self.world.immediate_all_to_all_into(scope, send, receive));
        });
    }

    /// `MPI_Allreduce` of one word, waited for the same way: the sums and
    /// minimums that end every step of the games are where ranks wait for
    /// the slowest, or for rank 0 writing a snapshot.
    fn all_reduce_waiting_idle(&self, value: u64, operation: SystemOperation) -> u64 {
        let mut result = 0u64;
        mpi::request::scope(|scope| {
            wait_idle(self.world.immediate_all_reduce_into(scope, &value, &mut result, operation));
        });
        result
    }
}

/// Waits for a non-blocking call by testing it: at first between yields
/// of the core (most waits inside a layer's steps are short, and a sleep
/// would lengthen each), then with pauses that double up to 1 ms.
fn wait_idle<'a, R: ?Sized, S: mpi::request::Scope<'a>>(mut request: mpi::request::Request<'a, R, S>) {
    const YIELDS: u32 = 256;
    let mut pause = std::time::Duration::from_micros(1);
    for attempt in 0.. {
        match request.test() {
            Ok(_) => break,
            Err(pending) => request = pending,
        }
        if attempt < YIELDS {
            std::thread::yield_now();
        } else {
            std::thread::sleep(pause);
            pause = (pause * 2).min(std::time::Duration::from_millis(1));
        }
    }
}

impl Communicator for MpiWorld {
    fn rank(&self) -> usize {
        mpi::traits::Communicator::rank(&self.world) as usize
    }

    fn ranks(&self) -> usize {
        mpi::traits::Communicator::size(&self.world) as usize
    }

    fn exchange(&self, mut outgoing: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        let (k, me) = (self.ranks(), self.rank());
        assert_eq!(outgoing.len(), k, "one message per rank");
        let mut traffic = self.traffic.get();
        traffic.add_exchange(me, &outgoing);
        self.traffic.set(traffic);
        let own = std::mem::take(&mut outgoing[me]);
        let send_lengths: Vec<u64> = outgoing.iter().map(|m| m.len() as u64).collect();
        let mut receive_lengths = vec![0u64; k];
        self.all_to_all_waiting_idle(&send_lengths, &mut receive_lengths);
        let cap = self.piece_bytes;
        let longest = send_lengths.iter().chain(&receive_lengths).copied().max().unwrap_or(0);
        let mut pieces = 0u64;
        self.world.all_reduce_into(&(longest.div_ceil(cap as u64)), &mut pieces, SystemOperation::max());
        let mut incoming: Vec<Vec<u8>> =
            receive_lengths.iter().map(|&len| Vec::with_capacity(len as usize)).collect();
        for piece in 0..pieces as usize {
            let part = |len: u64| {
                let start = (piece * cap).min(len as usize);
                start..(start + cap).min(len as usize)
            };
            // Never an empty allocation: an empty vector's address is 1,
            // which Open MPI takes for MPI_IN_PLACE.
            let mut send = Vec::with_capacity(cap.min(outgoing.iter().map(Vec::len).sum::<usize>()).max(1));
            let (mut send_counts, mut send_displs) = (vec![0 as Count; k], vec![0 as Count; k]);
            for (to, message) in outgoing.iter().enumerate() {
                let range = part(message.len() as u64);
                send_displs[to] = send.len() as Count;
                send_counts[to] = range.len() as Count;
                send.extend_from_slice(&message[range]);
            }
            let (mut receive_counts, mut receive_displs) = (vec![0 as Count; k], vec![0 as Count; k]);
            let mut total = 0usize;
            for from in 0..k {
                let range = part(receive_lengths[from]);
                receive_displs[from] = total as Count;
                receive_counts[from] = range.len() as Count;
                total += range.len();
            }
            let mut receive = vec![0u8; total.max(1)];
            {
                let send_view = Partition::new(&send[..], &send_counts[..], &send_displs[..]);
                let mut receive_view =
                    PartitionMut::new(&mut receive[..], &receive_counts[..], &receive_displs[..]);
                self.world.all_to_all_varcount_into(&send_view, &mut receive_view);
            }
            for from in 0..k {
                let start = receive_displs[from] as usize;
                incoming[from].extend_from_slice(&receive[start..start + receive_counts[from] as usize]);
            }
        }
        incoming[me] = own;
        incoming
    }

    fn sum(&self, value: u64) -> u64 {
        self.all_reduce_waiting_idle(value, SystemOperation::sum())
    }

    fn min(&self, value: u64) -> u64 {
        self.all_reduce_waiting_idle(value, SystemOperation::min())
    }

    fn traffic(&self) -> Traffic {
        self.traffic.get()
    }
}
