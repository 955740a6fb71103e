//! [`StaticParcel`]: a parcel compiled into the program, or (a development
//! build's) mapped from the file the build script wrote, validated on first
//! use.

use std::ops::Deref;
use std::sync::OnceLock;

use crate::parcel::Parcel;

/// A parcel as `include_parcel!` declares it: `static PARCEL:
/// StaticParcel`. It dereferences to a [`Parcel`], validated the first time
/// it is used (about a microsecond per hundred resources).
///
/// A release build embeds the parcel with `include_bytes!`. A development
/// build maps the file the build script wrote instead ([`StaticParcel::mapped`]),
/// so the program does not hold (and the linker does not write again
/// after each asset edit) tens of megabytes of content; only a change of
/// the parcel's names recompiles it.
#[derive(Debug)]
pub struct StaticParcel {
    source: Source,
    parcel: OnceLock<Parcel<'static>>,
}

#[derive(Debug)]
enum Source {
    Embedded(&'static [u8]),
    File(&'static str),
}

impl StaticParcel {
    /// Wraps embedded parcel bytes.
    pub const fn new(bytes: &'static [u8]) -> StaticParcel {
        StaticParcel {
            source: Source::Embedded(bytes),
            parcel: OnceLock::new(),
        }
    }

    /// The parcel in the file at `path`, opened (memory-mapped where the
    /// `mmap` feature is on) on first use and kept for the program's life.
    pub const fn mapped(path: &'static str) -> StaticParcel {
        StaticParcel {
            source: Source::File(path),
            parcel: OnceLock::new(),
        }
    }

    /// The parcel, validated on the first call.
    ///
    /// # Panics
    ///
    /// If the embedded bytes are not a valid parcel, or a mapped parcel's
    /// file cannot be read or is not one. `include_parcel!` only names
    /// parcels the pipeline wrote, so this means the file was changed or
    /// removed behind the build's back (a development build's program run
    /// after `cargo clean`, or moved to another machine: build it again, or
    /// in release, which embeds).
    pub fn get(&self) -> &Parcel<'static> {
        self.parcel.get_or_init(|| match self.source {
            Source::Embedded(bytes) => Parcel::from_bytes(bytes)
                .unwrap_or_else(|e| panic!("the embedded parcel is invalid: {e}")),
            Source::File(path) => {
                let open = crate::ParcelBuf::open(std::path::Path::new(path));
                let buf = open.unwrap_or_else(|e| {
                    panic!("the parcel this development build reads, `{path}`: {e}; build again")
                });
                // Kept for the program's life, as an embedded parcel is.
                Box::leak(Box::new(buf)).parcel()
            }
        })
    }
}

impl Deref for StaticParcel {
    type Target = Parcel<'static>;

    fn deref(&self) -> &Parcel<'static> {
        self.get()
    }
}
