//! The watch policy driven by hand: a clock that moves only when told, and
//! file changes given as the watcher would report them.

use super::*;

fn at(paths: &[&str]) -> Change {
    Change::At(paths.iter().map(PathBuf::from).collect())
}

fn path(p: &str) -> PathBuf {
    PathBuf::from(p)
}

/// A machine past its first build, idle work done: waiting for changes.
fn waiting(t0: Instant) -> Watch {
    let mut w = Watch::new();
    assert_eq!(w.next(t0), Next::Build(Change::Unknown));
    w.built(t0);
    assert_eq!(w.next(t0 + IDLE), Next::Idle);
    w.idle_done(t0 + IDLE, None);
    assert_eq!(w.next(t0 + IDLE), Next::WaitUntil(None));
    w
}

#[test]
fn the_first_build_is_of_everything_and_the_idle_work_comes_once_after_it() {
    let t0 = Instant::now();
    let mut w = Watch::new();
    assert_eq!(w.next(t0), Next::Build(Change::Unknown));
    // Asked again before the build is said to be done: nothing to do.
    assert_eq!(w.next(t0), Next::WaitUntil(None));
    let done = t0 + Duration::from_millis(700);
    w.built(done);
    assert_eq!(w.next(done), Next::WaitUntil(Some(done + IDLE)));
    assert_eq!(w.next(done + IDLE), Next::Idle);
    assert!(w.is_quiet());
    w.idle_done(done + IDLE, None);
    assert_eq!(w.next(done + 10 * IDLE), Next::WaitUntil(None));
}

#[test]
fn a_save_settles_sooner_once_its_file_is_closed() {
    let t0 = Instant::now();
    let mut w = waiting(t0);
    let ms = |n| t0 + Duration::from_millis(n);
    // An in-place save: written (still open), then closed.
    w.see(ms(1000), FileChange::Written(path("assets/a.png")));
    assert_eq!(w.next(ms(1000)), Next::WaitUntil(Some(ms(1000) + QUIET)));
    w.see(ms(1005), FileChange::Closed(path("assets/a.png")));
    let settled = ms(1005) + QUIET_CLOSED;
    assert_eq!(w.next(ms(1006)), Next::WaitUntil(Some(settled)));
    assert_eq!(w.next(settled), Next::Build(at(&["assets/a.png"])));

    // A safe-write: a temp file written, closed, renamed over the file.
    w.built(ms(1100));
    w.see(ms(2000), FileChange::Written(path("assets/.a.png.tmp")));
    w.see(ms(2001), FileChange::Closed(path("assets/.a.png.tmp")));
    w.see(ms(2002), FileChange::Moved(path("assets/.a.png.tmp")));
    w.see(ms(2002), FileChange::Moved(path("assets/a.png")));
    assert_eq!(
        w.next(ms(2002) + QUIET_CLOSED),
        Next::Build(at(&["assets/.a.png.tmp", "assets/a.png"]))
    );

    // A writer that never closes: the longer quiet time ends it.
    w.built(ms(2100));
    w.see(ms(3000), FileChange::Written(path("assets/b.png")));
    w.see(ms(3000), FileChange::Touched(path("assets/new")));
    assert_eq!(
        w.next(ms(3000) + QUIET_CLOSED),
        Next::WaitUntil(Some(ms(3000) + QUIET))
    );
    assert_eq!(
        w.next(ms(3000) + QUIET),
        Next::Build(at(&["assets/b.png", "assets/new"]))
    );
}

/// A file written every 10 ms for 3 s (an exporter writing frames, a
/// `git checkout`): builds come at most once per `SETTLE_MAX`, each
/// file is built, and the last build comes soon after the storm ends.
#[test]
fn a_save_storm_builds_at_most_once_per_settle_window_and_misses_nothing() {
    let t0 = Instant::now();
    let mut w = waiting(t0);
    let start = t0 + Duration::from_secs(1);
    let mut built: Vec<(Instant, HashSet<PathBuf>)> = Vec::new();
    let mut now = start;
    let end = start + Duration::from_secs(3);
    let mut written = HashSet::new();
    let mut i = 0;
    while now < end + Duration::from_secs(2) {
        if now < end && (now - start).as_millis().is_multiple_of(10) {
            let file = path(&format!("assets/frames/{i}.png"));
            i += 1;
            w.see(now, FileChange::Written(file.clone()));
            w.see(now, FileChange::Closed(file.clone()));
            written.insert(file);
        }
        loop {
            match w.next(now) {
                Next::Build(Change::At(paths)) => {
                    built.push((now, paths));
                    w.built(now);
                }
                Next::Build(other) => panic!("{other:?}"),
                Next::Idle => w.idle_done(now, None),
                Next::WaitUntil(_) => break,
            }
        }
        now += Duration::from_millis(1);
    }
    assert!(
        (3..=4).contains(&built.len()),
        "{} builds for a 3 s storm",
        built.len()
    );
    // While it lasts, a build comes only when a burst reaches the window;
    // the last one, once the storm ends.
    let times: Vec<u128> = built
        .iter()
        .map(|(t, _)| (*t - start).as_millis())
        .collect();
    for pair in times[..times.len() - 1].windows(2) {
        assert!(pair[1] - pair[0] >= SETTLE_MAX.as_millis(), "{times:?}");
    }
    let all: HashSet<PathBuf> = built.iter().flat_map(|(_, p)| p.iter().cloned()).collect();
    assert_eq!(all, written);
    let last = built.last().unwrap().0;
    assert!(last - end <= Duration::from_millis(20), "{:?}", last - end);
}

#[test]
fn the_idle_work_can_ask_for_a_settle_and_then_rests() {
    let t0 = Instant::now();
    let mut w = Watch::new();
    w.next(t0);
    w.built(t0);
    assert_eq!(w.next(t0 + IDLE), Next::Idle);
    // Patched parcels: the idle work asks for them to be written whole.
    w.idle_done(t0 + IDLE, Some(Change::Settle));
    assert_eq!(w.next(t0 + IDLE), Next::Build(Change::Settle));
    let done = t0 + 2 * IDLE;
    w.built(done);
    assert_eq!(w.next(done + IDLE), Next::Idle);
    w.idle_done(done + IDLE, None);
    assert_eq!(w.next(done + 100 * IDLE), Next::WaitUntil(None));
}

/// A save during the idle work makes it stop (`is_quiet`), and is built
/// together with the files it found changed behind the watcher's back.
#[test]
fn a_save_during_the_idle_work_is_built_with_what_the_work_found() {
    let t0 = Instant::now();
    let mut w = Watch::new();
    w.next(t0);
    w.built(t0);
    let idle = t0 + IDLE;
    assert_eq!(w.next(idle), Next::Idle);
    assert!(w.is_quiet());
    w.see(idle, FileChange::Written(path("assets/b.png")));
    assert!(!w.is_quiet(), "the idle work must stop");
    // Not built while the idle work runs, however long it takes.
    assert_eq!(w.next(idle + SETTLE_MAX * 2), Next::WaitUntil(None));
    let done = idle + Duration::from_millis(30);
    w.see(done, FileChange::Closed(path("assets/b.png")));
    w.idle_done(done, Some(at(&["assets/drifted.txt"])));
    assert_eq!(w.next(done), Next::WaitUntil(Some(done + QUIET_CLOSED)));
    assert_eq!(
        w.next(done + QUIET_CLOSED),
        Next::Build(at(&["assets/b.png", "assets/drifted.txt"]))
    );
}

#[test]
fn lost_events_build_everything() {
    let t0 = Instant::now();
    let mut w = waiting(t0);
    let t = t0 + Duration::from_secs(2);
    w.see(t, FileChange::Written(path("assets/a.png")));
    w.see(t, FileChange::Lost);
    assert_eq!(w.next(t + QUIET), Next::Build(Change::Unknown));
}

/// The machine does not know how a build went, by design: the save after a
/// failed build (the fix) is built like any other, once, and so is the one
/// after it. (`cargo-assets/tests/watch.rs` checks the failure itself.)
#[test]
fn every_save_is_built_once_whatever_the_build_before_it_did() {
    let t0 = Instant::now();
    let mut w = waiting(t0);
    let mut builds = Vec::new();
    let mut now = t0 + Duration::from_secs(1);
    // Broken, fixed, edited.
    for _ in 0..3 {
        w.see(now, FileChange::Written(path("assets/level.lvl")));
        w.see(now, FileChange::Closed(path("assets/level.lvl")));
        loop {
            match w.next(now) {
                Next::Build(change) => {
                    builds.push(change);
                    now += Duration::from_millis(80);
                    w.built(now);
                }
                Next::Idle => w.idle_done(now, None),
                Next::WaitUntil(None) => break,
                Next::WaitUntil(Some(t)) => now = t,
            }
        }
        now += Duration::from_secs(1);
    }
    assert_eq!(builds, vec![at(&["assets/level.lvl"]); 3]);
}
