//! Files written whole or not at all: through a temporary name and a
//! rename, or, replacing a file, a swap that keeps the old one until its
//! caller frees it (the store's first crash-safety rule, in the
//! [module docs](super)).

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::{Store, StoreError, io_err};

impl Store {
    /// Gives the file at `dest` a second name under `tmp/`, so that
    /// replacing it does not free its blocks until that name is removed (see
    /// [`Retired`](crate::report::Retired)). `None` if there is no file, or
    /// it cannot be linked (another file system).
    fn retire(&self, dest: &Path) -> Option<PathBuf> {
        let link = self.temp_path("retired");
        fs::hard_link(dest, &link).ok().map(|()| link)
    }

    /// Writes `bytes` to `dest` through a temp file and a rename, so `dest` is
    /// never seen half-written.
    pub fn write_atomic(&self, dest: &Path, bytes: &[u8]) -> Result<(), StoreError> {
        self.write_atomic_with(dest, |f| f.write_all(bytes))
    }

    /// Like [`Store::write_atomic`], with the contents written by `write`
    /// into the temp file (for files too large to build in memory).
    pub fn write_atomic_with<T>(
        &self,
        dest: &Path,
        write: impl FnOnce(&mut io::BufWriter<File>) -> io::Result<T>,
    ) -> Result<T, StoreError> {
        write_then_rename(&self.temp_path("write"), dest, |f| {
            let mut out = io::BufWriter::with_capacity(1 << 20, f);
            let value = write(&mut out)?;
            out.flush()?;
            Ok(value)
        })
        .map_err(io_err("could not write", dest))
    }

    /// Like [`Store::write_atomic_with`], but the file it replaces is not
    /// freed: it is returned under a name in `tmp/` for the caller to
    /// remove when that costs nobody a wait (see
    /// [`Retired`](crate::report::Retired)). `None` if there was no file.
    ///
    /// Where the file system can swap two names at once (Linux), the new
    /// file and the old one do: `dest` takes the new file, the temp name
    /// the old one. Elsewhere, or with no file at `dest`, the old file gets
    /// a second name and a rename replaces it. Why swap: a rename that
    /// replaces a file makes ext4 allocate and start writing out every
    /// block of the new file first (its `auto_da_alloc`, which guards
    /// programs that do not fsync against empty files after a power loss).
    /// After a 48 MB parcel that stalled the next writes by 20 to 45 ms, on
    /// the way from a saved sprite to the running game. A swap is as
    /// atomic, and the writeback happens later, off that path; a power
    /// loss may then leave the new file unwritten (ARCHITECTURE.md, "No
    /// fsync", says what finds it).
    pub fn replace_keeping_old<T>(
        &self,
        dest: &Path,
        write: impl FnOnce(&mut io::BufWriter<File>) -> io::Result<T>,
    ) -> Result<(T, Option<PathBuf>), StoreError> {
        let tmp = self.temp_path("write");
        let placed = write_then(&tmp, |f| {
            let mut out = io::BufWriter::with_capacity(1 << 20, f);
            let value = write(&mut out)?;
            out.flush()?;
            if swap(&tmp, dest).is_ok() {
                return Ok((value, Some(tmp.clone())));
            }
            let old = self.retire(dest);
            creating_folder(dest, || fs::rename(&tmp, dest)).map(|()| (value, old))
        });
        placed.map_err(io_err("could not write", dest))
    }
}

/// Swaps the files at `a` and `b` at once, both left in place (Linux's
/// `renameat2` with `RENAME_EXCHANGE`). An error if either is missing or the
/// file system cannot.
#[cfg(target_os = "linux")]
fn swap(a: &Path, b: &Path) -> io::Result<()> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).map_err(io::Error::from)
}

#[cfg(not(target_os = "linux"))]
fn swap(_: &Path, _: &Path) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

/// Writes `tmp` with `write`, then renames it to `dest`; `tmp` is removed
/// if either fails.
pub(super) fn write_then_rename<T>(
    tmp: &Path,
    dest: &Path,
    write: impl FnOnce(File) -> io::Result<T>,
) -> io::Result<T> {
    write_then(tmp, |file| {
        write(file)
            .and_then(|value| creating_folder(dest, || fs::rename(tmp, dest)).map(|()| value))
    })
}

/// Creates `tmp` and runs `write_and_place` on it, which writes it and
/// puts it in place; `tmp` is removed if that fails.
fn write_then<T>(tmp: &Path, write_and_place: impl FnOnce(File) -> io::Result<T>) -> io::Result<T> {
    let file = creating_folder(tmp, || File::create(tmp))?;
    let result = write_and_place(file);
    if result.is_err() {
        let _ = fs::remove_file(tmp);
    }
    result
}

/// Runs `op` on `path`, creating `path`'s folder only when `op` says it is
/// missing: most folders exist, and a `mkdir` costs as much as a rename.
fn creating_folder<T>(path: &Path, op: impl Fn() -> io::Result<T>) -> io::Result<T> {
    match op() {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))?;
            op()
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replaced_file_is_kept_under_a_temp_name_until_its_caller_frees_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let dest = dir.path().join("parcels/main.parcel");
        let (len, old) = store
            .replace_keeping_old(&dest, |f| f.write_all(b"first").map(|()| 5))
            .unwrap();
        assert_eq!((len, old), (5, None), "nothing was there");
        // A reader that opened the first version before it is replaced.
        let reader = File::open(&dest).unwrap();

        let (_, old) = store
            .replace_keeping_old(&dest, |f| f.write_all(b"second"))
            .unwrap();
        let old = old.expect("the first version, under another name");
        assert!(old.starts_with(dir.path().join("tmp")), "{old:?}");
        assert_eq!(fs::read(&dest).unwrap(), b"second");
        assert_eq!(fs::read(&old).unwrap(), b"first");
        assert_eq!(io::read_to_string(reader).unwrap(), "first");

        // A write that fails leaves the file in place and no temp file.
        fs::remove_file(old).unwrap();
        let failed = store.replace_keeping_old(&dest, |f| {
            f.write_all(b"thi")?;
            Err::<(), _>(io::Error::other("the writer gave up"))
        });
        assert!(failed.is_err());
        assert_eq!(fs::read(&dest).unwrap(), b"second");
        assert_eq!(fs::read_dir(dir.path().join("tmp")).unwrap().count(), 0);
    }
}
