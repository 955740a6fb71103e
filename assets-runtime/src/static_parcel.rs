//! [`StaticParcel`]: a parcel compiled into the program, validated on first use.

use std::ops::Deref;
use std::sync::OnceLock;

use crate::parcel::Parcel;

/// A parcel embedded with `include_bytes!`, as `include_parcel!` declares it:
/// `static PARCEL: StaticParcel`. It dereferences to a [`Parcel`], validated
/// the first time it is used (about a microsecond per hundred resources).
#[derive(Debug)]
pub struct StaticParcel {
    bytes: &'static [u8],
    parcel: OnceLock<Parcel<'static>>,
}

impl StaticParcel {
    /// Wraps embedded parcel bytes.
    pub const fn new(bytes: &'static [u8]) -> StaticParcel {
        StaticParcel {
            bytes,
            parcel: OnceLock::new(),
        }
    }

    /// The parcel, validated on the first call.
    ///
    /// # Panics
    ///
    /// If the embedded bytes are not a valid parcel. `include_parcel!` only
    /// embeds parcels the pipeline wrote, so this means the file was changed
    /// behind the build's back.
    pub fn get(&self) -> &Parcel<'static> {
        self.parcel.get_or_init(|| {
            Parcel::from_bytes(self.bytes)
                .unwrap_or_else(|e| panic!("the embedded parcel is invalid: {e}"))
        })
    }
}

impl Deref for StaticParcel {
    type Target = Parcel<'static>;

    fn deref(&self) -> &Parcel<'static> {
        self.get()
    }
}
