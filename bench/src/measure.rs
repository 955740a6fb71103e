//! Timing: medians with their spread, and side-by-side ratios.

use std::path::Path;
use std::time::{Duration, Instant};

/// Several timings of one thing.
#[derive(Debug, Clone)]
pub struct Sample(Vec<Duration>);

impl Sample {
    /// Times `f` `runs` times.
    pub fn of(runs: usize, mut f: impl FnMut() -> Duration) -> Sample {
        Sample::from((0..runs.max(1)).map(|_| f()).collect())
    }

    /// Timings taken elsewhere.
    pub fn from(mut times: Vec<Duration>) -> Sample {
        assert!(!times.is_empty(), "a sample needs a timing");
        times.sort();
        Sample(times)
    }

    /// The median.
    pub fn median(&self) -> Duration {
        self.0[self.0.len() / 2]
    }

    /// `median (min–max)` in milliseconds.
    pub fn ms(&self) -> String {
        format!(
            "{} ({}–{})",
            ms(self.median()),
            ms(self.0[0]),
            ms(self.0[self.0.len() - 1])
        )
    }
}

/// Times `runs` cold builds of the project at `dir`, each into a cache of
/// its own (`build` gets the cache directory), then makes the last one the
/// project's cache (`<dir>/target/assets`) and removes the others.
///
/// Why not empty one cache before each build: removing the previous
/// build's ten thousand files just before made ext4 step over the freed
/// inodes on every create (`recently_deleted` in a kernel profile), up to
/// doubling the build. That is the price of the deletion, not of the build,
/// and not one a fresh checkout or CI pays.
pub fn cold_builds(dir: &Path, runs: usize, mut build: impl FnMut(&Path) -> Duration) -> Sample {
    let caches: Vec<_> = (0..runs.max(1))
        .map(|k| dir.join(format!("cold-{k}/assets")))
        .collect();
    let sample = Sample::from(caches.iter().map(|c| build(c)).collect());
    let target = dir.join("target");
    let _ = std::fs::remove_dir_all(&target);
    std::fs::create_dir_all(&target).expect("create the target dir");
    let last = caches.last().expect("one cache at least");
    std::fs::rename(last, target.join("assets")).expect("keep the last cache");
    for cache in &caches {
        let _ = std::fs::remove_dir_all(cache.parent().expect("cold-k"));
    }
    sample
}

/// How long `f` takes, once.
pub fn time(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

/// Milliseconds with a sensible number of digits.
pub fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 {
        format!("{ms:.2}")
    } else if ms < 100.0 {
        format!("{ms:.1}")
    } else {
        format!("{ms:.0}")
    }
}

/// `a / b` as a ratio with two decimals.
pub fn ratio(a: Duration, b: Duration) -> String {
    format!("{:.2}", a.as_secs_f64() / b.as_secs_f64())
}

/// The median of paired ratios `a[i] / b[i]`: drift in the machine's speed
/// hits both sides of each pair alike.
pub fn paired_ratio(a: &[Duration], b: &[Duration]) -> String {
    let mut ratios: Vec<f64> = a
        .iter()
        .zip(b)
        .map(|(x, y)| x.as_secs_f64() / y.as_secs_f64())
        .collect();
    ratios.sort_by(f64::total_cmp);
    format!("{:.2}", ratios[ratios.len() / 2])
}
