//! One LZ4 block of a large input, made of pieces compressed on their own,
//! so a writer can compress the pieces on every core and still write the
//! one standard block the format stores (any LZ4 block decoder reads it;
//! this crate's reader is unchanged).
//!
//! An input longer than [`LZ4_PIECE`] is cut into pieces of that size (the
//! last one shorter), each compressed by itself, with the 64 KiB before it
//! as its dictionary: its matches may reach back across the seam, into
//! bytes the decoder has written just before, so cutting loses almost
//! nothing. A match's offset counts back from where it is written, and
//! the bytes before a piece are the same in the whole as when it was
//! compressed, so every sequence of every piece decodes the same in the
//! whole.
//!
//! Only the seams need work: an LZ4 block ends with a sequence of literals
//! and no match, which a decoder takes as the end of the block. At each
//! seam those last literals are carried over and written in front of the
//! next piece's first literals, as one run under that piece's first token
//! ([`Joiner`]). Nothing grows: the carried run's token is dropped, and one
//! length never needs more bytes than two lengths do, plus one. So the
//! joined block is at most the sum of the pieces' blocks, and the end of
//! the whole is the last piece's end, which keeps the format's rules for
//! a block's end (its last literals, its last match's distance from it).
//!
//! The pieces are fixed by the input's length alone, so the block is the
//! same bytes whether its pieces were compressed on one thread or many.

use lz4_flex::block::{
    CompressTable, compress_into_with_dict, compress_into_with_table, get_maximum_output_size,
};

/// The size of each piece of an input compressed in pieces: inputs up to
/// this long are one piece, one block as `lz4_flex` makes it.
pub const LZ4_PIECE: usize = 1 << 20;

/// How far back LZ4 matches reach: each piece after the first is
/// compressed with this much of the input before it as its dictionary.
const WINDOW: usize = 64 << 10;

/// One piece of an input, with the bytes before it that its matches may
/// reach into.
#[derive(Debug, Clone, Copy)]
pub struct Lz4Piece<'a> {
    /// Up to 64 KiB of the input just before the piece (none for the
    /// first).
    before: &'a [u8],
    /// The piece's own bytes.
    bytes: &'a [u8],
}

impl Lz4Piece<'_> {
    /// The most bytes its block takes: the size `out` must have.
    pub fn bound(&self) -> usize {
        get_maximum_output_size(self.bytes.len())
    }

    /// Compresses the piece into the start of `out` (at least
    /// [`Lz4Piece::bound`] long): its length and seams.
    ///
    /// Always `lz4_flex`'s table of 32-bit positions: its default under
    /// 64 KiB hashes 4 bytes, one RGBA pixel, so in flat-coloured art every
    /// pixel of a run lands in one slot and the row above is never found
    /// (sprites came out three times larger than liblz4 makes them). A
    /// piece after the first starts from the 64 KiB before it, as a
    /// dictionary: its matches may reach back across the seam (into bytes
    /// the decoder has already written), so cutting an atlas page in
    /// pieces loses almost nothing (without it, 2% on the benchmark's
    /// pages, whose rows repeat the row above).
    ///
    /// The block's seams (its first and last sequences) are found here
    /// too, on the thread that compressed it, so walking its sequences
    /// (a few percent of compressing them) is spread over the cores too.
    ///
    /// # Panics
    /// If `out` is shorter than the bound.
    pub fn compress(&self, out: &mut [u8]) -> Block {
        let len = self.block(out);
        let (first, last) = seams(&out[..len]).expect("lz4_flex writes whole blocks");
        Block { len, first, last }
    }

    /// The block alone, its length: what an input of one piece is, with
    /// no seams to find.
    fn block(&self, out: &mut [u8]) -> usize {
        let len = if self.before.is_empty() {
            compress_into_with_table(self.bytes, out, &mut CompressTable::large())
        } else {
            compress_into_with_dict(self.bytes, out, self.before)
        };
        len.expect("the output holds the bound")
    }
}

/// A piece compressed: its block's length and seams, for [`Joiner::push`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    len: usize,
    first: Sequence,
    last: Sequence,
}

impl Block {
    /// The block's length: `out[..len]` of [`Lz4Piece::compress`].
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the block is empty (it never is: an empty piece's block is
    /// one token).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The pieces `raw` is compressed in, in order: one (possibly empty) when
/// it is at most [`LZ4_PIECE`] long.
pub fn lz4_pieces(raw: &[u8]) -> impl ExactSizeIterator<Item = Lz4Piece<'_>> {
    let count = raw.len().div_ceil(LZ4_PIECE).max(1);
    (0..count).map(move |i| {
        let start = i * LZ4_PIECE;
        let end = if count == 1 {
            raw.len()
        } else {
            (start + LZ4_PIECE).min(raw.len())
        };
        Lz4Piece {
            before: &raw[start.saturating_sub(WINDOW)..start],
            bytes: &raw[start..end],
        }
    })
}

/// The most bytes the joined block of `raw_len` bytes of input takes: the
/// sum of its pieces' bounds.
pub fn lz4_block_bound(raw_len: usize) -> usize {
    if raw_len <= LZ4_PIECE {
        return get_maximum_output_size(raw_len);
    }
    let (whole, rest) = (raw_len / LZ4_PIECE, raw_len % LZ4_PIECE);
    whole * get_maximum_output_size(LZ4_PIECE)
        + if rest > 0 {
            get_maximum_output_size(rest)
        } else {
            0
        }
}

/// Joins the blocks of consecutive pieces into one block, written from the
/// start of the slice it is given (see the module's docs).
pub struct Joiner<'o> {
    out: &'o mut [u8],
    len: usize,
    /// The last literals of the blocks pushed so far, not written yet:
    /// they go in front of the next block's first literals, or end the
    /// block.
    carried: Vec<u8>,
}

impl<'o> Joiner<'o> {
    /// A joiner writing into `out`, which must hold the sum of the lengths
    /// of the blocks that will be pushed.
    pub fn new(out: &'o mut [u8]) -> Joiner<'o> {
        Joiner {
            out,
            len: 0,
            carried: Vec::new(),
        }
    }

    /// Appends the next piece's block: `bytes` as [`Lz4Piece::compress`]
    /// wrote them, `block` what it returned.
    ///
    /// # Panics
    /// If `out` is shorter than the blocks pushed, or `bytes` is not the
    /// block `block` describes.
    pub fn push(&mut self, bytes: &[u8], block: &Block) {
        assert_eq!(bytes.len(), block.len, "the block compressed");
        let Block { first, last, .. } = *block;
        if first == last {
            // Literals alone: all carried on to the next block.
            self.carried.extend_from_slice(&bytes[first.literals()]);
            return;
        }
        let literals = self.carried.len() + first.literals().len();
        self.token_and_length(literals, first.match_nibble);
        let mut carried = std::mem::take(&mut self.carried);
        self.write(&carried);
        self.write(&bytes[first.literals()]);
        self.write(&bytes[first.literals_end..last.start]);
        carried.clear();
        carried.extend_from_slice(&bytes[last.literals()]);
        self.carried = carried;
    }

    /// Ends the block with the carried literals; its length.
    pub fn finish(mut self) -> usize {
        let carried = std::mem::take(&mut self.carried);
        self.token_and_length(carried.len(), 0);
        self.write(&carried);
        self.len
    }

    fn write(&mut self, bytes: &[u8]) {
        self.out[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }

    /// A token for `literals` literals and the match length nibble, then
    /// the literals' length bytes past 15.
    fn token_and_length(&mut self, literals: usize, match_nibble: u8) {
        let nibble = literals.min(15) as u8;
        self.write(&[nibble << 4 | match_nibble]);
        if literals >= 15 {
            let mut rest = literals - 15;
            while rest >= 255 {
                self.write(&[255]);
                rest -= 255;
            }
            self.write(&[rest as u8]);
        }
    }
}

/// A block whose sequences run past its end: not one `lz4_flex` wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct NotABlock;

/// One sequence of a block: where its token is, where its literals are,
/// and the token's match length nibble.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sequence {
    start: usize,
    literals_start: usize,
    literals_end: usize,
    match_nibble: u8,
}

impl Sequence {
    /// The sequence whose token is at `start`.
    fn at(block: &[u8], start: usize) -> Result<Sequence, NotABlock> {
        let token = *block.get(start).ok_or(NotABlock)?;
        let mut at = start + 1;
        let len = read_length(block, &mut at, usize::from(token >> 4))?;
        let end = at.checked_add(len).filter(|&e| e <= block.len());
        Ok(Sequence {
            start,
            literals_start: at,
            literals_end: end.ok_or(NotABlock)?,
            match_nibble: token & 0x0f,
        })
    }

    fn literals(&self) -> std::ops::Range<usize> {
        self.literals_start..self.literals_end
    }

    /// Where the next sequence starts (past the match's offset and length
    /// bytes), or `None` for the last: it has no match, its literals end
    /// the block.
    fn next(&self, block: &[u8]) -> Result<Option<usize>, NotABlock> {
        if self.literals_end == block.len() {
            return Ok(None);
        }
        let mut at = self.literals_end + 2;
        read_length(block, &mut at, usize::from(self.match_nibble))?;
        Ok(Some(at))
    }
}

/// A block's first and last sequences (the same one for a block of
/// literals alone).
fn seams(block: &[u8]) -> Result<(Sequence, Sequence), NotABlock> {
    let first = Sequence::at(block, 0)?;
    let mut last = first;
    while let Some(next) = last.next(block)? {
        last = Sequence::at(block, next)?;
    }
    Ok((first, last))
}

/// A length whose token nibble is `nibble`: 15 means bytes follow, each
/// added, until one is not 255.
fn read_length(block: &[u8], at: &mut usize, nibble: usize) -> Result<usize, NotABlock> {
    let mut len = nibble;
    if nibble == 15 {
        loop {
            let byte = *block.get(*at).ok_or(NotABlock)?;
            *at += 1;
            len += usize::from(byte);
            if byte != 255 {
                break;
            }
        }
    }
    Ok(len)
}

/// `raw` as one block, compressed piece by piece on this thread, written
/// from the start of `out` (at least [`lz4_block_bound`] long); its length.
/// A writer with threads to spare compresses the pieces apart and joins
/// them the same way, to the same bytes.
pub(crate) fn compress_lz4_in_pieces(raw: &[u8], out: &mut [u8], piece_out: &mut Vec<u8>) -> usize {
    let mut pieces = lz4_pieces(raw);
    if pieces.len() == 1 {
        // Every sprite and most textures: no seams, no walk of the block.
        return pieces.next().expect("one piece").block(out);
    }
    let bound = get_maximum_output_size(LZ4_PIECE);
    if piece_out.len() < bound {
        piece_out.resize(bound, 0);
    }
    let mut joiner = Joiner::new(out);
    for piece in pieces {
        let block = piece.compress(piece_out);
        joiner.push(&piece_out[..block.len], &block);
    }
    joiner.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes of every kind a page holds: runs (transparent space), rows that
    /// repeat (flat art), and noise that does not compress, in stretches
    /// that fall across the seams.
    fn mixed(len: usize, seed: u32) -> Vec<u8> {
        let mut state = seed.max(1);
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state
        };
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            let stretch = (next() % 300_000) as usize + 1;
            match next() % 3 {
                0 => out.extend(std::iter::repeat_n(0u8, stretch)),
                1 => out.extend((0..stretch).map(|i| (i / 16 % 7) as u8 * 30)),
                _ => out.extend((0..stretch).map(|_| next() as u8)),
            }
        }
        out.truncate(len);
        out
    }

    fn joined(raw: &[u8]) -> Vec<u8> {
        let mut out = vec![0; lz4_block_bound(raw.len())];
        let len = compress_lz4_in_pieces(raw, &mut out, &mut Vec::new());
        out.truncate(len);
        out
    }

    #[test]
    fn pieces_joined_decode_to_the_input_whatever_lies_at_the_seams() {
        let cases: Vec<Vec<u8>> = vec![
            mixed(3 * LZ4_PIECE + 12_345, 7),
            mixed(2 * LZ4_PIECE, 99),
            // All noise: every piece is one run of literals, carried on
            // through every seam to the end.
            (0..(5 * LZ4_PIECE / 2) as u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
                .collect(),
            // All one byte: every piece a long match.
            vec![0; 4 * LZ4_PIECE + 1],
            // A last piece of one byte.
            mixed(LZ4_PIECE + 1, 3),
        ];
        for raw in &cases {
            let block = joined(raw);
            let whole = lz4_flex::block::compress(raw);
            assert!(
                lz4_flex::block::decompress(&block, raw.len()).is_ok_and(|d| d == *raw),
                "{} bytes",
                raw.len()
            );
            // Pieces start from the bytes before them: the seams cost next
            // to nothing.
            assert!(
                block.len() <= whole.len() + whole.len() / 100 + 64,
                "{} against {}",
                block.len(),
                whole.len()
            );
            let sum: usize = lz4_pieces(raw)
                .map(|p| p.compress(&mut vec![0; p.bound()]).len())
                .sum();
            assert!(block.len() <= sum, "never more than the pieces' blocks");
        }
    }

    /// The seams' hard cases: a last piece too short for any match (one to
    /// twenty bytes), a piece of noise (literals alone, carried through)
    /// between compressible ones, a piece whose block opens with a match
    /// (no literals of its own to join the carried ones to), and a pattern
    /// whose period does not divide the piece, so matches straddle every
    /// seam through the dictionary. Each must decode to its input.
    #[test]
    fn every_kind_of_seam_decodes() {
        let noise = |len: usize, seed: u32| -> Vec<u8> {
            (0..len as u32)
                .map(|i| (i.wrapping_add(seed).wrapping_mul(2_654_435_761) >> 13) as u8)
                .collect()
        };
        let pattern = |len: usize| -> Vec<u8> { (0..len).map(|i| (i % 1021) as u8).collect() };
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for tail in [1, 2, 5, 12, 13, 20] {
            cases.push(pattern(2 * LZ4_PIECE + tail));
            cases.push([noise(LZ4_PIECE, 1), noise(tail, 2)].concat());
        }
        cases.push(
            [
                pattern(LZ4_PIECE),
                noise(LZ4_PIECE, 3),
                pattern(LZ4_PIECE + 77),
            ]
            .concat(),
        );
        cases.push([noise(LZ4_PIECE, 4), vec![7; LZ4_PIECE], noise(3, 5)].concat());
        cases.push(pattern(5 * LZ4_PIECE - 1));
        for raw in &cases {
            let block = joined(raw);
            assert!(
                lz4_flex::block::decompress(&block, raw.len()).is_ok_and(|d| d == *raw),
                "{} bytes",
                raw.len()
            );
        }
    }

    #[test]
    fn an_input_of_one_piece_is_the_plain_block() {
        for raw in [Vec::new(), mixed(LZ4_PIECE, 5), mixed(1000, 1)] {
            let mut reference = vec![0; get_maximum_output_size(raw.len())];
            let len = compress_into_with_table(&raw, &mut reference, &mut CompressTable::large())
                .unwrap();
            assert_eq!(joined(&raw), reference[..len]);
        }
        assert_eq!(lz4_pieces(&[]).len(), 1);
        assert_eq!(lz4_pieces(&vec![0; LZ4_PIECE + 1]).len(), 2);
    }

    #[test]
    fn a_block_that_runs_past_its_end_is_refused() {
        // 15 literals and more to come, but nothing follows.
        assert_eq!(seams(&[0xf0]), Err(NotABlock));
        // A match whose offset is cut off, then nothing.
        assert_eq!(seams(&[0x14, b'a', 1]), Err(NotABlock));
        // Literals alone: one sequence, first and last.
        let (first, last) = seams(&[0x20, b'a', b'b']).unwrap();
        assert_eq!((first, first.literals()), (last, 1..3));
    }
}
