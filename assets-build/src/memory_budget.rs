//! [`MemoryBudget`]: the bytes a build's steps may hold at once for large
//! decodes, so that peak memory stays under a bound whatever the content.
//!
//! A PNG of 261 KB can claim 16384 × 16384 pixels: a gigabyte once decoded,
//! two or three with the copies a processor makes, and a build decodes as
//! many at once as it has workers. Limits on width and height
//! (`max-dimension`) bound one image; the budget bounds them together.
//!
//! A processor that is about to decode something large asks first, through
//! [`Context::reserve_memory`](crate::Context::reserve_memory), with an
//! estimate made from the header (the built-in image, sprite and texture
//! processors do). The reservation is held until the step ends. A request
//! larger than the whole budget fails the step by name, before anything is
//! allocated; a smaller one waits until the steps holding the rest are done,
//! so large decodes take turns while small ones never wait.
//!
//! No deadlock: a thread that already holds a reservation (a step that
//! asks twice, or one built inline while another step on the same thread
//! waits for it) is granted more at once, over the budget if need be,
//! instead of waiting for itself. A step should reserve after asking for
//! the other assets it needs, as the built-ins do: a step that waits for a
//! dependency while holding memory makes that dependency's decode wait too.

use std::cell::Cell;
use std::fmt;
use std::sync::{Condvar, Mutex};

/// The default budget: 1 GiB. Room for an 8192 × 8192 texture and its
/// copies, where a 16384 × 16384 image (which `max-dimension` allows) must
/// be asked for.
pub const DEFAULT_MEMORY_BUDGET: u64 = 1 << 30;

thread_local! {
    /// Bytes reserved by the steps running on this thread.
    static HELD: Cell<u64> = const { Cell::new(0) };
}

/// Bytes that a build's steps may reserve at once (see the module docs).
#[derive(Debug)]
pub(crate) struct MemoryBudget {
    limit: u64,
    used: Mutex<u64>,
    freed: Condvar,
}

/// A reservation, given back when dropped.
#[derive(Debug)]
pub(crate) struct Reservation<'b> {
    budget: &'b MemoryBudget,
    bytes: u64,
}

/// A request larger than the whole budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OverBudget {
    /// What was asked for.
    pub asked: u64,
    /// The budget.
    pub limit: u64,
}

impl MemoryBudget {
    /// A budget of `limit` bytes.
    pub(crate) fn new(limit: u64) -> MemoryBudget {
        MemoryBudget {
            limit,
            used: Mutex::new(0),
            freed: Condvar::new(),
        }
    }

    /// Reserves `bytes`, waiting until they fit beside the others'.
    pub(crate) fn reserve(&self, bytes: u64) -> Result<Reservation<'_>, OverBudget> {
        if bytes > self.limit {
            return Err(OverBudget {
                asked: bytes,
                limit: self.limit,
            });
        }
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        if HELD.get() == 0 {
            while *used + bytes > self.limit {
                used = self.freed.wait(used).unwrap_or_else(|p| p.into_inner());
            }
        }
        *used += bytes;
        HELD.set(HELD.get() + bytes);
        Ok(Reservation {
            budget: self,
            bytes,
        })
    }

    /// Bytes reserved now.
    #[cfg(test)]
    fn used(&self) -> u64 {
        *self.used.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        let mut used = self.budget.used.lock().unwrap_or_else(|p| p.into_inner());
        *used -= self.bytes;
        HELD.set(HELD.get().saturating_sub(self.bytes));
        self.budget.freed.notify_all();
    }
}

impl fmt::Display for OverBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "needs about {} of memory, more than the build's memory budget of {} (raise it with `--memory-budget` or CARGO_ASSETS_MEMORY_BUDGET, e.g. `4GiB`)",
            human_bytes(self.asked),
            human_bytes(self.limit)
        )
    }
}

/// `1.5MiB`, as Cargo writes sizes.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut size = bytes as f64;
    let mut unit = 0;
    while size >= 1024.0 && unit < UNITS.len() - 1 {
        size /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes}B")
    } else {
        format!("{size:.1}{}", UNITS[unit])
    }
}

/// Reads a size as `--memory-budget` takes it: bytes, or a number with a
/// unit, `512MiB`, `4GiB`, `2G` (binary units either way; spaces allowed).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size: expected bytes or e.g. `512MiB`, `4GiB`"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        other => {
            return Err(format!(
                "`{other}` is not a unit of size: use B, KiB, MiB, GiB or TiB"
            ));
        }
    };
    Ok((number * (1u64 << shift) as f64) as u64)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_request_over_the_budget_fails_and_ones_that_fit_take_turns() {
        let budget = Arc::new(MemoryBudget::new(100));
        let over = budget.reserve(101).unwrap_err();
        assert_eq!(
            over,
            OverBudget {
                asked: 101,
                limit: 100
            }
        );
        assert!(
            over.to_string().contains(
                "needs about 101B of memory, more than the build's memory budget of 100B"
            )
        );
        // Eight threads each asking for 40: never more than two at once.
        let peak = Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (budget, peak) = (Arc::clone(&budget), Arc::clone(&peak));
                std::thread::spawn(move || {
                    let held = budget.reserve(40).unwrap();
                    peak.fetch_max(budget.used(), Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(5));
                    drop(held);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(peak.load(Ordering::SeqCst), 80);
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn a_thread_holding_a_reservation_is_never_made_to_wait_for_itself() {
        let budget = MemoryBudget::new(100);
        let a = budget.reserve(80).unwrap();
        let b = budget.reserve(80).unwrap();
        assert_eq!(budget.used(), 160);
        drop((a, b));
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(parse_size("4GiB"), Ok(4 << 30));
        assert_eq!(parse_size("512 MiB"), Ok(512 << 20));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("4 GB2").is_err());
        assert_eq!(human_bytes(3 << 29), "1.5GiB");
    }
}
