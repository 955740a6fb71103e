//! Large byte buffers handed back and handed out again, instead of
//! allocated afresh.
//!
//! An atlas page is tens of megabytes of pixels, drawn, compressed and
//! dropped. A fresh allocation of that size is mapped by the kernel a page
//! at a time on first touch, and unmapped when freed: in a profile of
//! watched edits, allocating, faulting in and clearing two 16 MiB pages took
//! longer than drawing them (BENCHMARKS.md, "Pages drawn once"). A buffer
//! handed back here is handed out again, already mapped, and is cleared with
//! one `memset`.
//!
//! Each build's store has a pool, so the pages of a build's atlases reuse
//! each other's memory; a long-lived pipeline (`watch`) keeps one in its
//! memory across builds, so a re-pack after an edit maps nothing new.
//! A build's textures are decoded into them as well (each hundreds of
//! kilobytes, mapped afresh otherwise). Bounded: at most [`Buffers::KEPT`]
//! buffers are kept, the smallest first dropped, none over [`Buffers::MAX`]
//! bytes.

use std::sync::Mutex;

/// A pool of large byte buffers.
#[derive(Debug, Default)]
pub(crate) struct Buffers {
    kept: Mutex<Vec<Vec<u8>>>,
}

impl Buffers {
    /// The most buffers kept: pixels and their compressed bytes on each of
    /// a few cores.
    pub(crate) const KEPT: usize = 4;
    /// The largest buffer kept: a 4096x4096 RGBA8 page and its header.
    pub(crate) const MAX: usize = (64 << 20) + 64;

    /// A buffer of `len` zero bytes.
    pub(crate) fn zeroed(&self, len: usize) -> Vec<u8> {
        match self.take(len) {
            Some(mut buffer) => {
                buffer.clear();
                buffer.resize(len, 0);
                buffer
            }
            None => vec![0; len],
        }
    }

    /// A buffer of at least `len` bytes, whatever they hold: scratch space
    /// to be written before it is read (a compressor's output, a decoded
    /// image). Only bytes never handed out before are cleared.
    pub(crate) fn scratch(&self, len: usize) -> Vec<u8> {
        match self.take(len) {
            Some(mut buffer) => {
                if buffer.len() < len {
                    buffer.resize(len, 0);
                }
                buffer
            }
            None => vec![0; len],
        }
    }

    /// Keeps `buffer` for a later [`Buffers::zeroed`] or
    /// [`Buffers::scratch`] (its bytes stay as they are until then). Past
    /// [`Buffers::KEPT`], the smallest goes: a texture's buffer is cheap to
    /// make again, an atlas page's is not, and either can serve the other.
    pub(crate) fn give_back(&self, buffer: Vec<u8>) {
        if buffer.capacity() > Self::MAX || buffer.capacity() == 0 {
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.push(buffer);
        if kept.len() > Self::KEPT {
            let smallest = (0..kept.len())
                .min_by_key(|&i| kept[i].capacity())
                .expect("more than KEPT buffers");
            kept.swap_remove(smallest);
        }
    }

    /// The smallest kept buffer of at least `len` bytes of capacity.
    fn take(&self, len: usize) -> Option<Vec<u8>> {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let best = (0..kept.len())
            .filter(|&i| kept[i].capacity() >= len)
            .min_by_key(|&i| kept[i].capacity())?;
        Some(kept.swap_remove(best))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_given_back_is_handed_out_again_cleared_or_as_it_was() {
        let buffers = Buffers::default();
        let mut a = buffers.zeroed(1000);
        assert_eq!(a, vec![0; 1000]);
        a.fill(7);
        let at = a.as_ptr();
        buffers.give_back(a);
        let b = buffers.zeroed(600);
        assert_eq!(b.as_ptr(), at, "the same memory");
        assert_eq!(b, vec![0; 600], "cleared");
        buffers.give_back(b);
        let c = buffers.scratch(900);
        assert_eq!(c.as_ptr(), at);
        assert!(c.len() >= 900);
        buffers.give_back(c);
        let d = buffers.zeroed(2000);
        assert_ne!(d.as_ptr(), at, "too small: a new buffer");
        assert_eq!(d, vec![0; 2000]);
    }

    #[test]
    fn the_pool_keeps_a_bounded_number_of_bounded_buffers() {
        let buffers = Buffers::default();
        for len in 1..=Buffers::KEPT + 3 {
            buffers.give_back(vec![1; len * 100]);
        }
        buffers.give_back(Vec::with_capacity(Buffers::MAX + 1));
        let kept = buffers.kept.lock().unwrap();
        assert_eq!(kept.len(), Buffers::KEPT);
        assert!(
            kept.iter().all(|b| b.capacity() > 3 * 100),
            "the smallest ones went first"
        );
    }
}
