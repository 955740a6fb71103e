//! OpenEXR files, decoded channel by channel (feature `hdr`).
//!
//! The `image` crate reads an EXR only when one of its layers has `R`, `G`
//! and `B` channels. Editors and engines write others as often: a single
//! `R` channel (Godot's signed distance fields and baked light data, masks,
//! height maps), or a luminance `Y` (grey scale). This module reads every
//! EXR the `image`, `sprite` and `texture` processors are given, with the
//! `exr` crate the `image` crate itself uses, and places channels by name:
//!
//! - `R`, `G`, `B`, `A` where a GPU samples them; a colour channel the file
//!   lacks is 0 and a missing `A` is 1, as a GPU reads a one- or
//!   two-channel texture. So an `R`-only distance field is sampled as `.r`.
//! - `Y` alone (no `R`, `G` or `B`) is grey: `R = G = B = Y`.
//! - Luminance with chroma (`RY`, `BY`) is refused, naming the channels:
//!   the file is to be saved as RGB.
//! - Other channels (depth `Z`, object ids, a render's other passes) are
//!   left out. The layer used is the first one with a colour channel.
//!
//! Pixels land in the display window, as the `image` crate places them
//! (the data window may be smaller, offset, or larger; what lies outside
//! it is transparent black, as OpenEXR has it), so an RGB or RGBA file
//! decodes to the same floats as before this module. Sizes are checked
//! from the headers before any pixel is allocated: `max-dimension` and
//! 1 GiB of decoded floats for the display window and for every part's
//! data window (all parts are read, the one used chosen after).

use exr::prelude::{ReadChannels, ReadLayers, Text, Vec2};
use image::Rgba32FImage;

use super::ProcessError;

/// RGBA where the file has no such channel.
const MISSING: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

/// The decoded floats an EXR may take: 1 GiB, the `image` crate's limit.
const MAX_DECODED: u64 = 1 << 30;

/// Whether `bytes` begin as an OpenEXR file does.
pub(crate) fn is_exr(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x76, 0x2f, 0x31, 0x01])
}

/// The display size of the EXR in `bytes`, read from its header, after
/// checking the sizes [`decode`] will allocate.
pub(crate) fn dimensions(bytes: &[u8], max_dimension: u32) -> Result<(u32, u32), ProcessError> {
    let meta = exr::meta::MetaData::read_from_buffered(bytes, false).map_err(exr_error)?;
    let header = first_with_colour(&meta.headers, |h| {
        (!h.deep, h.channels.list.iter().map(|c| &c.name).collect())
    })?;
    let display = header.shared_attributes.display_window.size;
    check_size(display, max_dimension, "image")?;
    for part in meta.headers.iter().filter(|h| !h.deep) {
        check_size(part.layer_size, max_dimension, "data window")?;
    }
    Ok((display.width() as u32, display.height() as u32))
}

/// The EXR in `bytes` as RGBA floats, channels placed by name (module doc).
pub(crate) fn decode(bytes: &[u8], max_dimension: u32) -> Result<Rgba32FImage, ProcessError> {
    let (width, height) = dimensions(bytes, max_dimension)?;
    let image = exr::prelude::read()
        .no_deep_data()
        .largest_resolution_level()
        .all_channels()
        .all_layers()
        .all_attributes()
        .from_buffered(std::io::Cursor::new(bytes))
        .map_err(exr_error)?;
    let layer = first_with_colour(&image.layer_data, |l| {
        (true, l.channel_data.list.iter().map(|c| &c.name).collect())
    })?;
    let channels = &layer.channel_data.list;
    let named = |name: &str| channels.iter().find(|c| c.name.eq(name));
    if let Some(chroma) = ["RY", "BY"].into_iter().find(|n| named(n).is_some()) {
        return Err(ProcessError::msg(format!(
            "the EXR stores luminance and chroma (`Y`, `{chroma}`), which is not read: \
             save it as RGB (or RGBA) in the editor"
        )));
    }
    let has_rgb = ["R", "G", "B"].into_iter().any(|n| named(n).is_some());
    let size = layer.size;
    let mut planes: [Option<Vec<f32>>; 4] = Default::default();
    for channel in channels {
        let Some(place) = Place::of(&channel.name) else {
            continue;
        };
        if channel.sampling != Vec2(1, 1) {
            return Err(ProcessError::msg(format!(
                "the EXR's channel `{}` is subsampled ({}x{}), which is not read: save it \
                 without subsampling",
                channel.name, channel.sampling.0, channel.sampling.1
            )));
        }
        let values: Vec<f32> = channel.sample_data.values_as_f32().collect();
        if values.len() != size.area() {
            return Err(ProcessError::msg(format!(
                "the EXR's channel `{}` holds {} samples for a {}x{} layer",
                channel.name,
                values.len(),
                size.width(),
                size.height()
            )));
        }
        match place {
            Place::Channel(i) => planes[i] = Some(values),
            Place::Grey if !has_rgb => {
                planes[1] = Some(values.clone());
                planes[2] = Some(values.clone());
                planes[0] = Some(values);
            }
            Place::Grey => {}
        }
    }

    // Where the data window's first pixel lands in the display window.
    let display = image.attributes.display_window;
    let offset = layer.attributes.layer_position - display.position;
    let mut pixels = Rgba32FImage::new(width, height);
    for y in 0..size.height() {
        let Ok(dy) = u32::try_from(y as i64 + i64::from(offset.y())) else {
            continue;
        };
        if dy >= height {
            continue;
        }
        for x in 0..size.width() {
            let Ok(dx) = u32::try_from(x as i64 + i64::from(offset.x())) else {
                continue;
            };
            if dx >= width {
                continue;
            }
            let at = y * size.width() + x;
            let pixel = pixels.get_pixel_mut(dx, dy);
            for (value, (plane, missing)) in pixel.0.iter_mut().zip(planes.iter().zip(MISSING)) {
                *value = plane.as_ref().map_or(missing, |p| p[at]);
            }
        }
    }
    Ok(pixels)
}

/// Where a channel goes, by its name.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Place {
    /// R, G, B or A: its index in RGBA.
    Channel(usize),
    /// Luminance, grey when the layer has no colour channel.
    Grey,
}

impl Place {
    fn of(name: &Text) -> Option<Place> {
        ["R", "G", "B", "A"]
            .iter()
            .position(|n| name.eq(n))
            .map(Place::Channel)
            .or_else(|| name.eq("Y").then_some(Place::Grey))
    }
}

fn check_size(size: Vec2<usize>, max_dimension: u32, what: &str) -> Result<(), ProcessError> {
    let (w, h) = (size.width(), size.height());
    if w > max_dimension as usize || h > max_dimension as usize {
        return Err(ProcessError::msg(format!(
            "the EXR's {what} is {w}x{h}, too large to decode; the limit is \
             {max_dimension}x{max_dimension} (`max-dimension`)"
        )));
    }
    if (w as u64) * (h as u64) * 16 > MAX_DECODED {
        return Err(ProcessError::msg(format!(
            "the EXR's {what} is {w}x{h}, more than 1 GiB of decoded floats"
        )));
    }
    Ok(())
}

/// The first of `parts` (the headers, or the layers read) that may be
/// used and has a colour channel; `channels` says whether a part may be
/// used and names its channels. None: an error listing every part's.
fn first_with_colour<'a, T>(
    parts: &'a [T],
    channels: impl Fn(&'a T) -> (bool, Vec<&'a Text>),
) -> Result<&'a T, ProcessError> {
    let found = parts.iter().find(|&part| {
        let (usable, names) = channels(part);
        usable && names.iter().any(|n| Place::of(n).is_some())
    });
    found.ok_or_else(|| no_colour(parts.iter().flat_map(|p| channels(p).1).map(Text::to_string)))
}

fn no_colour(names: impl Iterator<Item = String>) -> ProcessError {
    let names: Vec<String> = names.map(|n| format!("`{n}`")).collect();
    ProcessError::msg(format!(
        "the EXR has no colour channel (it has {}): a layer needs `R`, `G`, `B`, `A` or `Y`",
        if names.is_empty() { "none".to_string() } else { names.join(", ") }
    ))
}

fn exr_error(e: exr::error::Error) -> ProcessError {
    ProcessError::msg(format!("could not decode EXR image: {e}"))
}

#[cfg(test)]
mod tests;
