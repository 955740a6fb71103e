//! Work spread over the cores inside one step.
//!
//! The scheduler runs steps in parallel, but some steps run alone at the end
//! of a build with a lot to do (an atlas reading thousands of cached sprites,
//! then drawing its pages). [`map`] splits such work across the machine's
//! cores; results come back in input order, so the output does not depend on
//! the thread count or on which thread finished first.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The number of cores this process may use (1 if unknown), asked once:
/// the answer reads cgroup files, and a build asks for it hundreds of
/// times (every [`map`]).
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// Frees `value` on a thread of its own, without waiting for it.
///
/// A 10k-asset build ends holding its plan, its records and its paths:
/// hundreds of thousands of allocations, tens of milliseconds to free on one
/// core after the work they served is done. Whoever waits for the build (a
/// game for its parcel, Cargo for the build script) need not wait for that.
/// `value` must own nothing whose drop others wait on (a lock, a file to
/// flush): only memory and read handles. If no thread can be started, it is
/// freed here.
pub(crate) fn drop_in_background<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new()
        .name("assets-free".into())
        .spawn(move || drop(value));
}

/// `f` applied to every item, on up to as many threads as there are cores,
/// in input order. Threads take the next run of items as they finish one
/// (single items when there are few: a few uneven ones, pages of different
/// sizes, still share out evenly), each run's results in a vector of its
/// exact length; the runs are then joined in order, so each result moves
/// once, whatever its size (a planned step is hundreds of bytes).
pub(crate) fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = cores().min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    // About 16 runs a thread: even enough, and few to join.
    let run = (items.len() / (threads * 16)).max(1);
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let start = next.fetch_add(run, Ordering::Relaxed);
            if start >= items.len() {
                return done;
            }
            let chunk = &items[start..(start + run).min(items.len())];
            done.push((start, chunk.iter().map(&f).collect::<Vec<R>>()));
        }
    };
    // The calling thread works too: one thread fewer to start.
    let mut runs: Vec<(usize, Vec<R>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
        let mut runs = work();
        for h in handles {
            runs.extend(
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            );
        }
        runs
    });
    runs.sort_unstable_by_key(|&(start, _)| start);
    let mut results = Vec::with_capacity(items.len());
    for (_, run) in runs {
        results.extend(run);
    }
    results
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_come_back_in_input_order() {
        let items: Vec<u64> = (0..1000).collect();
        let squares = super::map(&items, |&i| {
            if i % 7 == 0 {
                std::thread::yield_now();
            }
            i * i
        });
        assert_eq!(squares, items.iter().map(|i| i * i).collect::<Vec<_>>());
        assert!(super::map(&[] as &[u8], |&b| b).is_empty());
    }
}
