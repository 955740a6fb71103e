//! `image`: decode PNG/JPEG/WebP/BMP/TGA with memory limits (or rasterize an SVG:
//! [`super::svg`]), convert to RGBA8, store.
//!
//! Settings (all optional):
//!
//! | key             | default | meaning |
//! |-----------------|---------|---------|
//! | `premultiply`   | `false` | multiply color by alpha |
//! | `encoding`      | by variant | `"lz4"` or `"zstd"` compressed rows (decoded by `Image::pixels`), `"raw"` (nothing to decode, largest), or `"png"` (smallest for some art, needs an image library); unset: `"zstd"` in release, `"lz4"` otherwise |
//! | `max-dimension` | `16384` | width or height above this is an error |
//!
//! The output, of kind `image`, is the layout defined (and parsed) by
//! [`assets_runtime::image`]: a 16-byte header, then RGBA8 rows (raw or
//! compressed) or a PNG.

use std::borrow::Cow;
use std::io::Cursor;
use std::sync::{Mutex, PoisonError};

use assets_runtime::image::{
    Encoding as StoredEncoding, IMAGE_HEADER_LEN, ImageHeader, PixelFormat, encode_pixels,
    encode_pixels_into,
};
use assets_runtime::lz4_pieces::{
    Block, Joiner, LZ4_PIECE, Lz4Piece, lz4_pieces,
};
use image::codecs::png::PngEncoder;
use image::{
    ColorType, DynamicImage, ExtendedColorType, ImageDecoder, ImageEncoder, ImageReader, Limits,
    RgbaImage,
};
use serde::Deserialize;

use super::{Context, ProcessError, Processor, svg};
use crate::buffers::Buffers;
use crate::parallel;
pub use crate::manifest::Encoding;

/// Decodes images to RGBA8.
#[derive(Debug, Clone, Copy)]
pub struct Image;

/// Settings of the `image` processor.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ImageSettings {
    /// Multiply color channels by alpha.
    #[serde(default)]
    pub premultiply: bool,
    /// How pixels are stored; `None`: [`Encoding::default_for`] the variant.
    #[serde(default)]
    pub encoding: Option<Encoding>,
    /// Largest accepted width or height.
    #[serde(default = "default_max_dimension")]
    pub max_dimension: u32,
}

pub(crate) fn default_max_dimension() -> u32 {
    16384
}

impl Processor for Image {
    type Settings = ImageSettings;

    fn path_independent(&self) -> bool {
        true
    }

    fn name(&self) -> &str {
        "image"
    }

    fn version(&self) -> u32 {
        // 2: compressed rows by default (lz4 in dev, zstd in release);
        // 3: LZ4 finds matches in images under 64 KiB (`codec::encode_lz4`);
        // 4: rows past 1 MiB compressed in pieces, joined (`lz4_pieces`)
        4
    }

    fn process(&self, ctx: &mut Context<'_>, settings: ImageSettings) -> Result<(), ProcessError> {
        let bytes = ctx.source()?;
        // The pixels, the source's own layout when it is not RGBA8, and
        // the compressed output.
        reserve_decode(ctx, &bytes, settings.max_dimension, 3)?;
        let buffers = ctx.memo().buffers();
        let pixels = decode_in(&bytes, settings.max_dimension, buffers)?;
        ctx.emit(
            "image",
            pixels.finish_in(
                settings.premultiply,
                settings
                    .encoding
                    .unwrap_or_else(|| Encoding::default_for(ctx.variant())),
                Some(buffers),
            )?,
        )
    }
}

/// Reserves of the build's memory budget (see
/// [`Context::reserve_memory`]) what decoding `bytes` to RGBA8 holds,
/// `copies` times over (the copies the processor makes), as the header
/// declares it: before anything is allocated, so that a small file that
/// claims a huge image fails or waits its turn by name. Images under
/// 16 MiB in all are not counted: a build holds at most a few of those
/// per worker, and they are most of a game's.
///
/// An SVG's or EXR's size is the one its header declares (see
/// [`super::svg`]); an SVG with text is warned of here, before it is
/// rasterized without it.
pub(crate) fn reserve_decode(
    ctx: &mut Context<'_>,
    bytes: &[u8],
    max_dimension: u32,
    copies: u64,
) -> Result<(), ProcessError> {
    if svg::is_svg(bytes) && svg::has_text(bytes) {
        ctx.warn(
            "the SVG has text, which is not drawn (no fonts are read when rasterizing): \
             convert it to paths in the editor (Inkscape: Path > Object to Path)",
        );
    }
    if jpeg_cut_short(bytes) {
        ctx.warn(
            "the JPEG ends before its image does (no end-of-image marker after its data): \
             what is missing decodes as grey; cut short by an export or a copy that did not finish?",
        );
    }
    let (width, height) = match own_dimensions(bytes, max_dimension) {
        Some(dimensions) => dimensions?,
        None => decoder(bytes, max_dimension)?.dimensions(),
    };
    let held = u64::from(width) * u64::from(height) * 4 * copies;
    if held < 16 << 20 {
        return Ok(());
    }
    ctx.reserve_memory(held, &format!("a {width}x{height} image"))
}

/// Decodes `bytes` (PNG, JPEG, WebP, BMP or TGA, detected from content, or an SVG
/// rasterized) to RGBA8, refusing images wider or taller than
/// `max_dimension` before allocating them.
pub fn decode_rgba8(bytes: &[u8], max_dimension: u32) -> Result<RgbaImage, ProcessError> {
    Ok(decode_dynamic(bytes, max_dimension)?.into_rgba8())
}

/// Decodes `bytes` as [`decode_rgba8`] does, in the type the file holds
/// (floats for HDR and EXR files, which the texture processor keeps).
pub(crate) fn decode_dynamic(bytes: &[u8], max_dimension: u32) -> Result<DynamicImage, ProcessError> {
    if let Some(image) = decode_own(bytes, max_dimension) {
        return image;
    }
    DynamicImage::from_decoder(decoder(bytes, max_dimension)?).map_err(decode_error(max_dimension))
}

/// The images decoded here rather than by the `image` crate: an SVG,
/// rasterized ([`svg`]), and an OpenEXR file, read channel by channel
/// (`super::exr`, feature `hdr`). `None` for the others.
fn decode_own(bytes: &[u8], max_dimension: u32) -> Option<Result<DynamicImage, ProcessError>> {
    if svg::is_svg(bytes) {
        return Some(svg::rasterize(bytes, max_dimension).map(DynamicImage::ImageRgba8));
    }
    #[cfg(feature = "hdr")]
    if super::exr::is_exr(bytes) {
        return Some(super::exr::decode(bytes, max_dimension).map(DynamicImage::ImageRgba32F));
    }
    None
}

/// The size of an image [`decode_own`] decodes, from its header; `None`
/// for the others.
fn own_dimensions(bytes: &[u8], max_dimension: u32) -> Option<Result<(u32, u32), ProcessError>> {
    if svg::is_svg(bytes) {
        return Some(svg::dimensions(bytes, max_dimension));
    }
    #[cfg(feature = "hdr")]
    if super::exr::is_exr(bytes) {
        return Some(super::exr::dimensions(bytes, max_dimension));
    }
    None
}

/// [`decode_rgba8`] as an [`ImageResource`]: an image that is RGBA8 already
/// (most with an alpha channel) is decoded straight into a buffer of
/// `buffers`, given back by [`ImageResource::finish_in`]. A build's
/// textures are hundreds of kilobytes each, and a fresh buffer of that size
/// is mapped and cleared by the kernel a page at a time: page faults were
/// 6% of a cold build's CPU time (BENCHMARKS.md, "Textures decoded into
/// reused buffers").
pub(crate) fn decode_in(
    bytes: &[u8],
    max_dimension: u32,
    buffers: &Buffers,
) -> Result<ImageResource, ProcessError> {
    if let Some(image) = decode_own(bytes, max_dimension) {
        return Ok(ImageResource::from_image(image?.into_rgba8()));
    }
    let decoder = decoder(bytes, max_dimension)?;
    if decoder.color_type() != ColorType::Rgba8 {
        let image = DynamicImage::from_decoder(decoder).map_err(decode_error(max_dimension))?;
        return Ok(ImageResource::from_image(image.into_rgba8()));
    }
    let (width, height) = decoder.dimensions();
    let len = width as usize * height as usize * 4;
    // Cleared, not scratch: a decoder that stopped short without an error
    // must not leave another image's pixels in this one.
    let mut pixels = buffers.zeroed(len);
    if let Err(e) = decoder.read_image(&mut pixels) {
        buffers.give_back(pixels);
        return Err(decode_error(max_dimension)(e));
    }
    Ok(ImageResource {
        bytes: pixels,
        start: 0,
        width,
        height,
    })
}

/// Whether `bytes` are a JPEG whose image data began but never ended: no
/// end-of-image marker after the first scan's header. The JPEG decoder
/// does not fail on such a file, as libjpeg does not: it fills in what is
/// missing (grey rows at the bottom, or a blurred image for a progressive
/// file), so a file cut short by an interrupted export or copy would
/// otherwise build without a word. A JPEG cut off before its first scan
/// is not judged here: the decoder fails on it by itself.
///
/// The marker segments before the scan are walked by their lengths, since
/// they may hold a whole thumbnail JPEG (Exif); after it, in entropy-coded
/// data, a 0xFF byte is always followed by 0x00 or a restart marker, so
/// 0xFF 0xD9 there is the end.
fn jpeg_cut_short(bytes: &[u8]) -> bool {
    if !bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return false;
    }
    let mut at = 2;
    loop {
        // Any number of 0xFF fill bytes may come before a marker.
        while bytes.get(at + 1) == Some(&0xFF) {
            at += 1;
        }
        let (Some(0xFF), Some(&marker)) = (bytes.get(at), bytes.get(at + 1)) else {
            return false;
        };
        match marker {
            // Markers without a length: TEM and the restart markers.
            0x01 | 0xD0..=0xD7 => {
                at += 2;
                continue;
            }
            0xD9 => return false,
            _ => {}
        }
        let Some(&[high, low]) = bytes.get(at + 2..at + 4) else {
            return false;
        };
        let next = at + 2 + usize::from(u16::from_be_bytes([high, low]));
        if marker == 0xDA {
            let Some(data) = bytes.get(next..) else {
                return false;
            };
            let end = [0xFF, 0xD9];
            return !(data.ends_with(&end) || data.windows(2).any(|w| w == end));
        }
        at = next;
    }
}

/// Why an image file that ends too soon cannot be decoded.
const CUT_SHORT: &str = "could not decode image: the file ends before its image does (cut short: an export or a copy that did not finish?)";

/// Whether `bytes`, a WebP file, are shorter than the size their RIFF
/// header declares: the WebP decoder calls such a file a corrupt bitstream.
fn riff_cut_short(bytes: &[u8]) -> bool {
    let Some(&[a, b, c, d]) = bytes.get(4..8) else {
        return false;
    };
    bytes.starts_with(b"RIFF") && (bytes.len() as u64) < u64::from(u32::from_le_bytes([a, b, c, d])) + 8
}

/// Why bytes are no image at all.
const NOT_AN_IMAGE: &str = "not a PNG, JPEG, WebP, BMP or TGA image (unrecognized contents)";

/// Whether `bytes` begin with a plausible TGA header, the one format here
/// without a signature (the `image` crate does not guess it): no colour
/// map or one of 8 to 32 bits, an image type TGA defines (colour-mapped,
/// true-colour or grey, plain or run-length encoded), a size, and a pixel
/// depth of 8, 15, 16, 24 or 32 bits. Text and other binary files fail it
/// in the first three bytes.
fn is_tga(bytes: &[u8]) -> bool {
    let Some(header) = bytes.get(..18) else {
        return false;
    };
    let colour_map = match header[1] {
        0 => true,
        1 => matches!(header[7], 15 | 16 | 24 | 32),
        _ => false,
    };
    let size = |at: usize| u16::from_le_bytes([header[at], header[at + 1]]);
    colour_map
        && matches!(header[2], 1 | 2 | 3 | 9 | 10 | 11)
        && size(12) > 0
        && size(14) > 0
        && matches!(header[16], 8 | 15 | 16 | 24 | 32)
}

/// A decoder for `bytes` (format from their contents) that refuses images
/// wider or taller than `max_dimension`, and any over 1 GiB decoded.
fn decoder(bytes: &[u8], max_dimension: u32) -> Result<impl ImageDecoder + '_, ProcessError> {
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| ProcessError::msg(format!("could not read image: {e}")))?;
    if reader.format().is_none() && is_tga(bytes) {
        reader.set_format(image::ImageFormat::Tga);
    }
    if reader.format().is_none() {
        return Err(ProcessError::msg(NOT_AN_IMAGE));
    }
    if reader.format() == Some(image::ImageFormat::WebP) && riff_cut_short(bytes) {
        return Err(ProcessError::msg(CUT_SHORT));
    }
    let mut limits = Limits::default();
    limits.max_image_width = Some(max_dimension);
    limits.max_image_height = Some(max_dimension);
    limits.max_alloc = Some(1 << 30);
    reader.limits(limits.clone());
    let decoder = reader.into_decoder().map_err(decode_error(max_dimension))?;
    limits
        .reserve(decoder.total_bytes())
        .map_err(decode_error(max_dimension))?;
    Ok(decoder)
}

/// What went wrong decoding an image limited to `max_dimension`.
fn decode_error(max_dimension: u32) -> impl Fn(image::ImageError) -> ProcessError {
    move |e| match e {
        image::ImageError::Limits(l) => ProcessError::msg(format!(
            "image is too large to decode ({l}); the limit is {max_dimension}x{max_dimension} (`max-dimension`)"
        )),
        // A file cut short (an export or a copy that did not finish) is
        // the usual cause, and the decoder's own words, "unexpected end of
        // file", do not say that it is the image file that is short.
        image::ImageError::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            ProcessError::msg(CUT_SHORT)
        }
        e => ProcessError::msg(format!("could not decode image: {e}")),
    }
}

/// Multiplies color by alpha, rounding to nearest, in RGBA8 `pixels`.
/// Opaque pixels are left as they are, so an opaque image (most textures
/// exported with an alpha channel) costs one pass that only reads.
pub(crate) fn premultiply(pixels: &mut [u8]) {
    // An AND of every alpha: 255 only if all are; a loop that vectorizes,
    // where stopping at the first translucent pixel would not.
    let alphas = pixels.chunks_exact(4).fold(u8::MAX, |all, p| all & p[3]);
    if alphas == u8::MAX {
        return;
    }
    for p in pixels.chunks_exact_mut(4) {
        let a = u16::from(p[3]);
        for c in &mut p[..3] {
            *c = mul_div_255(u16::from(*c) * a);
        }
    }
}

/// The `image` resource of `rows` under `header`, its rows compressed as
/// `header.encoding` says on this thread (into a buffer of `buffers`,
/// given back), or `None` when they come out no smaller.
fn compressed(
    header: ImageHeader,
    rows: &[u8],
    buffers: Option<&Buffers>,
) -> Result<Option<Vec<u8>>, ProcessError> {
    let mut scratch =
        buffers.map(|b| b.scratch(lz4_flex::block::get_maximum_output_size(rows.len())));
    let payload = match &mut scratch {
        Some(scratch) => encode_pixels_into(header.encoding, rows, scratch)
            .map(|len| Cow::Borrowed(&scratch[..len])),
        None => encode_pixels(header.encoding, rows).map(Cow::Owned),
    }
    .ok_or_else(|| {
        ProcessError::msg(
            "`encoding = \"zstd\"` needs the `zstd` feature of assets-build (on by default)",
        )
    })?;
    let out = (payload.len() < rows.len()).then(|| {
        let mut out = Vec::with_capacity(IMAGE_HEADER_LEN + payload.len());
        out.extend_from_slice(&header.encode());
        out.extend_from_slice(&payload);
        out
    });
    if let (Some(buffers), Some(scratch)) = (buffers, scratch) {
        buffers.give_back(scratch);
    }
    Ok(out)
}

/// The `image` resource of `rows` under `header`, its rows one LZ4 block
/// compressed in pieces on every core and joined
/// ([`assets_runtime::lz4_pieces`]): the bytes one thread makes, spread
/// over the cores. A watched edit that moves sprites on one atlas page
/// waited for that page's compression on one core while the others idled
/// (a 1901×2048 page: 6.8 ms on one core, 5.0 ms in pieces on two).
fn lz4_in_pieces(header: ImageHeader, rows: &[u8], buffers: Option<&Buffers>) -> Vec<u8> {
    let pieces: Vec<Lz4Piece<'_>> = lz4_pieces(rows).collect();
    let bound = pieces.iter().map(Lz4Piece::bound).max().unwrap_or(0);
    let len = pieces.len() * bound;
    let mut scratch = match buffers {
        Some(buffers) => buffers.scratch(len),
        None => vec![0; len],
    };
    let work: Vec<(Lz4Piece<'_>, Mutex<&mut [u8]>)> = (pieces.into_iter())
        .zip(scratch[..len].chunks_mut(bound).map(Mutex::new))
        .collect();
    let blocks = parallel::map(&work, |(piece, out)| {
        piece.compress(&mut out.lock().unwrap_or_else(PoisonError::into_inner))
    });
    drop(work);
    let mut out = vec![0; IMAGE_HEADER_LEN + blocks.iter().map(Block::len).sum::<usize>()];
    out[..IMAGE_HEADER_LEN].copy_from_slice(&header.encode());
    let mut joiner = Joiner::new(&mut out[IMAGE_HEADER_LEN..]);
    for (bytes, block) in scratch.chunks(bound).zip(&blocks) {
        joiner.push(&bytes[..block.len()], block);
    }
    let payload = joiner.finish();
    out.truncate(IMAGE_HEADER_LEN + payload);
    if let Some(buffers) = buffers {
        buffers.give_back(scratch);
    }
    out
}

/// `x / 255` rounded to nearest, for `x <= 255 * 255`, without a division
/// (textures are hundreds of thousands of pixels; this loop vectorizes).
fn mul_div_255(x: u16) -> u8 {
    let t = u32::from(x) + 128;
    ((t + (t >> 8)) >> 8) as u8
}

/// An `image` resource being made: RGBA8 pixels, and, when the buffer was
/// made here, room for the header before them. Raw encoding fills in that
/// header and the buffer is the resource, with no copy of what can be a
/// 64 MiB atlas page; a decoded image is taken as it is (no copy either),
/// since compressed encodings write a new buffer anyway.
pub(crate) struct ImageResource {
    /// The pixels, from `start`.
    bytes: Vec<u8>,
    /// Where the pixels start in `bytes`: after the header's room, or at 0
    /// for a decoded image taken as it is.
    start: usize,
    width: u32,
    height: u32,
}

impl ImageResource {
    /// Transparent black pixels in a buffer from `buffers`, given back by
    /// [`ImageResource::finish_in`].
    pub(crate) fn new_in(width: u32, height: u32, buffers: &Buffers) -> ImageResource {
        ImageResource {
            bytes: buffers.zeroed(IMAGE_HEADER_LEN + width as usize * height as usize * 4),
            start: IMAGE_HEADER_LEN,
            width,
            height,
        }
    }

    /// `image`'s pixels, taken without a copy.
    pub fn from_image(image: RgbaImage) -> ImageResource {
        let (width, height) = image.dimensions();
        ImageResource {
            bytes: image.into_raw(),
            start: 0,
            width,
            height,
        }
    }

    fn len(&self) -> usize {
        self.width as usize * self.height as usize * 4
    }

    /// The RGBA8 rows.
    pub fn pixels_mut(&mut self) -> &mut [u8] {
        let range = self.start..self.start + self.len();
        &mut self.bytes[range]
    }

    fn pixels(&self) -> &[u8] {
        &self.bytes[self.start..self.start + self.len()]
    }

    /// The resource as raw rows under `header` (made raw), its buffer
    /// given back to `buffers` if the rows are copied out of it.
    fn finish_raw(
        mut self,
        header: ImageHeader,
        buffers: Option<&Buffers>,
    ) -> Result<Vec<u8>, ProcessError> {
        let header = ImageHeader {
            encoding: StoredEncoding::Raw,
            ..header
        };
        if self.start == IMAGE_HEADER_LEN && self.bytes.len() == IMAGE_HEADER_LEN + self.len() {
            self.bytes[..IMAGE_HEADER_LEN].copy_from_slice(&header.encode());
            return Ok(self.bytes);
        }
        let mut out = Vec::with_capacity(IMAGE_HEADER_LEN + self.len());
        out.extend_from_slice(&header.encode());
        out.extend_from_slice(self.pixels());
        if let Some(buffers) = buffers {
            buffers.give_back(self.bytes);
        }
        Ok(out)
    }

    /// The resource's bytes: premultiplied if asked, stored as `encoding`
    /// says, except that rows which do not compress are stored raw (the
    /// reader's `Image::pixels` reads both). With `buffers`, compressed
    /// into a buffer of the pool, given back with the pixels' buffer once
    /// the resource is copied out (an atlas page: tens of megabytes that
    /// the next page reuses).
    pub(crate) fn finish_in(
        mut self,
        premultiplied: bool,
        encoding: Encoding,
        buffers: Option<&Buffers>,
    ) -> Result<Vec<u8>, ProcessError> {
        if premultiplied {
            premultiply(self.pixels_mut());
        }
        let header = ImageHeader {
            width: self.width,
            height: self.height,
            format: if premultiplied {
                PixelFormat::Rgba8Premultiplied
            } else {
                PixelFormat::Rgba8
            },
            encoding: encoding.into(),
        };
        match encoding {
            Encoding::Raw => self.finish_raw(header, buffers),
            Encoding::Lz4 | Encoding::Zstd => {
                let rows = self.pixels();
                let out = if encoding == Encoding::Lz4 && rows.len() > LZ4_PIECE {
                    Some(lz4_in_pieces(header, rows, buffers))
                } else {
                    compressed(header, rows, buffers)?
                };
                // Noise does not compress: raw is smaller and needs no decoding.
                let Some(out) = out.filter(|out| out.len() < IMAGE_HEADER_LEN + rows.len()) else {
                    return self.finish_raw(header, buffers);
                };
                if let Some(buffers) = buffers {
                    buffers.give_back(self.bytes);
                }
                Ok(out)
            }
            Encoding::Png => {
                let mut out = header.encode().to_vec();
                PngEncoder::new(&mut out)
                    .write_image(
                        self.pixels(),
                        self.width,
                        self.height,
                        ExtendedColorType::Rgba8,
                    )
                    .map_err(|e| ProcessError::msg(format!("could not encode PNG: {e}")))?;
                Ok(out)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::ImageFormat;

    fn png(w: u32, h: u32) -> Vec<u8> {
        let img = RgbaImage::from_fn(w, h, |x, y| image::Rgba([x as u8, y as u8, 7, 128]));
        let mut out = Cursor::new(Vec::new());
        img.write_to(&mut out, ImageFormat::Png).unwrap();
        out.into_inner()
    }

    #[test]
    fn raw_output_has_the_documented_header() {
        let img = decode_rgba8(&png(3, 2), 16).unwrap();
        let out = ImageResource::from_image(img.clone())
            .finish_in(false, Encoding::Raw, None)
            .unwrap();
        #[rustfmt::skip]
        let header: [u8; 16] = [
            b'A', b'I', b'M', b'G', // magic
            1, 0,                   // layout version
            1,                      // RGBA8 straight
            0,                      // raw
            3, 0, 0, 0,             // width
            2, 0, 0, 0,             // height
        ];
        assert_eq!(out[..16], header);
        assert_eq!(out.len(), 16 + 3 * 2 * 4);
        assert_eq!(out[16..20], [0, 0, 7, 128]);
    }

    #[test]
    fn division_by_255_is_exact_for_every_channel_and_alpha() {
        for c in 0..=255u16 {
            for a in 0..=255u16 {
                let x = c * a;
                assert_eq!(u16::from(mul_div_255(x)), (x + 127) / 255, "{c} * {a}");
            }
        }
    }

    #[test]
    fn premultiplying_leaves_an_opaque_image_as_it_was() {
        let mut img = RgbaImage::from_fn(9, 5, |x, y| image::Rgba([x as u8 * 20, y as u8, 3, 255]));
        let before = img.clone();
        premultiply(&mut img);
        assert_eq!(img, before);
        // One translucent pixel anywhere and every pixel is multiplied.
        img.put_pixel(8, 4, image::Rgba([200, 200, 200, 0]));
        premultiply(&mut img);
        assert_eq!(img.get_pixel(8, 4).0, [0, 0, 0, 0]);
        assert_eq!(img.get_pixel(1, 1).0, before.get_pixel(1, 1).0);
    }

    #[test]
    fn premultiplying_scales_color_by_alpha() {
        let mut img = RgbaImage::from_pixel(1, 1, image::Rgba([255, 100, 0, 128]));
        premultiply(&mut img);
        assert_eq!(img.get_pixel(0, 0).0, [128, 50, 0, 128]);
    }

    #[test]
    fn png_output_is_the_header_then_a_png_of_the_finished_pixels() {
        let img = decode_rgba8(&png(3, 2), 16).unwrap();
        let out = ImageResource::from_image(img.clone())
            .finish_in(true, Encoding::Png, None)
            .unwrap();
        let header = ImageHeader::parse(&out).unwrap();
        assert_eq!(header.encoding, StoredEncoding::Png);
        assert_eq!(header.format, PixelFormat::Rgba8Premultiplied);
        let back = decode_rgba8(&out[IMAGE_HEADER_LEN..], 16).unwrap();
        assert_eq!((back.width(), back.height()), (3, 2));
        assert_eq!(back.get_pixel(1, 1).0, [1, 1, 4, 128]);
    }

    #[test]
    fn decoding_into_a_used_buffer_gives_what_a_fresh_decode_gives() {
        let buffers = Buffers::default();
        let rgb = {
            let img = image::RgbImage::from_fn(5, 4, |x, y| image::Rgb([x as u8 * 40, y as u8, 9]));
            let mut out = Cursor::new(Vec::new());
            img.write_to(&mut out, ImageFormat::Png).unwrap();
            out.into_inner()
        };
        for (bytes, encoding) in [
            (png(7, 5), Encoding::Lz4),
            (png(7, 5), Encoding::Raw),
            (rgb, Encoding::Lz4),
        ] {
            // A pooled buffer holding another image's bytes.
            buffers.give_back(vec![0xAB; 4096]);
            let pooled = decode_in(&bytes, 16, &buffers).unwrap();
            assert_eq!(pooled.pixels(), decode_rgba8(&bytes, 16).unwrap().as_raw());
            let fresh = ImageResource::from_image(decode_rgba8(&bytes, 16).unwrap());
            assert_eq!(
                pooled.finish_in(true, encoding, Some(&buffers)).unwrap(),
                fresh.finish_in(true, encoding, None).unwrap()
            );
        }
        let err = match decode_in(&png(20, 2), 16, &buffers) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("a 20 px wide image decoded under a 16 px limit"),
        };
        assert!(err.contains("too large") && err.contains("16x16"), "{err}");
    }

    /// An image past one LZ4 piece is compressed on every core, into the
    /// bytes the runtime's encoder makes on one thread (what the layout
    /// must be a function of: the rows, not the cores), and reads back.
    #[test]
    fn an_image_compressed_in_pieces_on_every_core_is_the_one_thread_block() {
        let buffers = Buffers::default();
        // A page-like image: clear space, flat sprites, a noisy band, at
        // sizes whose rows fall across the pieces' seams.
        for (w, h) in [(1030, 700), (2048, 1901)] {
            let img = RgbaImage::from_fn(w, h, |x, y| {
                let v = (x / 8) * 31 + (y / 8) * 17;
                match (x / 300 + y / 200) % 3 {
                    0 => image::Rgba([0; 4]),
                    1 => image::Rgba([v as u8, (v >> 3) as u8, 9, 255]),
                    _ => image::Rgba([((x * y) ^ (x * 7)) as u8, (y * 13) as u8, x as u8, 200]),
                }
            });
            assert!(img.as_raw().len() > 2 * LZ4_PIECE);
            let ours = ImageResource::from_image(img.clone())
                .finish_in(false, Encoding::Lz4, Some(&buffers))
                .unwrap();
            let header = ImageHeader::parse(&ours).unwrap();
            assert_eq!(header.encoding, StoredEncoding::Lz4, "{w}x{h} compresses");
            let one_thread = encode_pixels(StoredEncoding::Lz4, img.as_raw()).unwrap();
            assert!(ours[IMAGE_HEADER_LEN..] == one_thread[..], "{w}x{h}: same block");
            let image = assets_runtime::image::Image {
                header,
                data: &ours[IMAGE_HEADER_LEN..],
            };
            assert!(image.pixels().unwrap()[..] == img.as_raw()[..], "{w}x{h} reads back");
        }
    }

    #[test]
    fn oversized_images_are_refused_before_decoding() {
        let err = decode_rgba8(&png(20, 2), 16).unwrap_err().to_string();
        assert!(err.contains("too large"), "{err}");
    }

    /// A 2×2 TGA as the format's specification lays one out, written
    /// byte by byte (not by the `image` crate, which reads it): red, green
    /// over blue, white, as `top` row then bottom row.
    fn tga(image_type: u8, depth: u8, top_left_origin: bool) -> Vec<u8> {
        let mut file = vec![0u8; 18];
        file[2] = image_type;
        file[12..16].copy_from_slice(&[2, 0, 2, 0]);
        file[16] = depth;
        // Alpha bits, and bit 5: the first row stored is the top one.
        file[17] = if depth == 32 { 8 } else { 0 } | if top_left_origin { 0x20 } else { 0 };
        let bgra = |[r, g, b, a]: [u8; 4]| [b, g, r, a];
        let (top, bottom) = ([[255, 0, 0, 255], [0, 255, 0, 128]], [[0, 0, 255, 255], [255; 4]]);
        let rows = if top_left_origin { [top, bottom] } else { [bottom, top] };
        let px = depth as usize / 8;
        for row in rows {
            let bytes: Vec<u8> = row.iter().flat_map(|&p| bgra(p)[..px].to_vec()).collect();
            if image_type == 10 {
                // Run-length: each pixel a raw packet of one.
                for pixel in bytes.chunks(px) {
                    file.push(0);
                    file.extend_from_slice(pixel);
                }
            } else {
                file.extend_from_slice(&bytes);
            }
        }
        file
    }

    #[test]
    fn tga_and_bmp_files_decode_as_their_formats_lay_them_out() {
        let want_rgba = [255, 0, 0, 255, 0, 255, 0, 128, 0, 0, 255, 255, 255, 255, 255, 255];
        let want_rgb = [255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255, 255, 255, 255];
        for (image_type, depth, top_left, want) in [
            (2, 24, false, want_rgb),
            (2, 32, true, want_rgba),
            (10, 32, false, want_rgba),
            (10, 24, true, want_rgb),
        ] {
            let file = tga(image_type, depth, top_left);
            assert!(is_tga(&file));
            let got = decode_rgba8(&file, 16).unwrap();
            assert_eq!(got.dimensions(), (2, 2));
            assert_eq!(got.as_raw()[..], want, "type {image_type}, {depth} bits, top-left {top_left}");
        }

        // A 24-bit BMP, rows bottom first, each padded to 4 bytes.
        let mut bmp = b"BM".to_vec();
        let rows: [[u8; 8]; 2] = [[255, 0, 0, 255, 255, 255, 0, 0], [0, 0, 255, 0, 255, 0, 0, 0]];
        let size = 14 + 40 + 16u32;
        bmp.extend_from_slice(&size.to_le_bytes());
        bmp.extend_from_slice(&[0; 4]);
        bmp.extend_from_slice(&54u32.to_le_bytes());
        bmp.extend_from_slice(&40u32.to_le_bytes());
        bmp.extend_from_slice(&2i32.to_le_bytes());
        bmp.extend_from_slice(&2i32.to_le_bytes());
        bmp.extend_from_slice(&1u16.to_le_bytes());
        bmp.extend_from_slice(&24u16.to_le_bytes());
        bmp.extend_from_slice(&[0; 24]);
        rows.iter().for_each(|r| bmp.extend_from_slice(r));
        let got = decode_rgba8(&bmp, 16).unwrap();
        assert_eq!(got.as_raw()[..], want_rgb);

        // Cut or corrupted anywhere: an error or an image, never a panic.
        for file in [tga(10, 32, false), bmp] {
            for len in 0..file.len() {
                let _ = decode_rgba8(&file[..len], 16);
            }
            for at in 0..file.len() {
                let mut corrupt = file.clone();
                corrupt[at] ^= 0xa5;
                let _ = decode_rgba8(&corrupt, 16);
            }
        }
    }

    #[test]
    fn a_jpeg_cut_short_is_told_from_a_whole_one() {
        let image = image::RgbImage::from_fn(64, 64, |x, y| image::Rgb([x as u8 * 4, y as u8 * 4, 90]));
        let mut jpeg = Vec::new();
        image::codecs::jpeg::JpegEncoder::new(&mut jpeg)
            .encode_image(&image)
            .unwrap();
        assert!(!jpeg_cut_short(&jpeg));
        // Bytes after the end (a camera's trailer) are no cut.
        let mut trailer = jpeg.clone();
        trailer.extend_from_slice(b"trailing bytes");
        assert!(!jpeg_cut_short(&trailer));
        // Cut inside its data, it still decodes, with grey for the rest.
        let cut = &jpeg[..jpeg.len() * 3 / 4];
        assert!(jpeg_cut_short(cut));
        assert!(decode_rgba8(cut, 64).is_ok());
        // An Exif thumbnail is a whole JPEG, end marker included, inside
        // an APP1 segment before the image's own scan: it does not end
        // the image.
        let mut thumbnailed = vec![0xFF, 0xD8, 0xFF, 0xE1];
        thumbnailed.extend_from_slice(&u16::try_from(jpeg.len() + 2).unwrap().to_be_bytes());
        thumbnailed.extend_from_slice(&jpeg);
        thumbnailed.extend_from_slice(&jpeg[2..]);
        assert!(!jpeg_cut_short(&thumbnailed));
        assert!(jpeg_cut_short(&thumbnailed[..thumbnailed.len() - 40]));
        // Cut in its headers: the decoder's own error, nothing to add.
        assert!(!jpeg_cut_short(&jpeg[..20]));
        assert!(decode_rgba8(&jpeg[..20], 64).is_err());
        assert!(!jpeg_cut_short(&png(4, 4)));
    }

    #[test]
    fn garbage_is_not_an_image() {
        let err = decode_rgba8(b"hello world, not a png", 16)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a PNG, JPEG, WebP, BMP or TGA"), "{err}");
        for other in [&b"hello world, not a png"[..], &[0u8; 40], &png(2, 2)] {
            assert!(!is_tga(other));
        }
        let mut truncated = png(8, 8);
        truncated.truncate(truncated.len() / 2);
        let err = decode_rgba8(&truncated, 16).unwrap_err().to_string();
        assert!(err.contains("the file ends before its image does"), "{err}");
        let mut webp = Vec::new();
        image::codecs::webp::WebPEncoder::new_lossless(&mut webp)
            .encode(&[200; 8 * 8 * 4], 8, 8, image::ExtendedColorType::Rgba8)
            .unwrap();
        assert!(decode_rgba8(&webp, 16).is_ok());
        let err = decode_rgba8(&webp[..webp.len() - 4], 16).unwrap_err().to_string();
        assert!(err.contains("the file ends before its image does"), "{err}");
    }
}
