//! Aseprite's slices, as the `aseprite` processor reads them from a file
//! and the `sheet` processor from an exported sheet's `meta.slices`: one
//! check for both, so a key is refused the same way whichever way it
//! came, by its slice's name (the animation resource's reader refuses the
//! same keys in an untrusted parcel; see `assets_runtime::animation`).

use assets_runtime::animation::write::SliceKeySpec;

use super::ProcessError;

/// A slice key of the slice `name`, starting at frame `from`, with its
/// bounds on the canvas and its 9-slice centre and pivot (relative to the
/// bounds) if it has them: the key, or why it cannot be one in an
/// animation of `frames` frames.
pub(super) fn key(
    name: &str,
    from: u32,
    bounds: (i32, i32, u32, u32),
    center: Option<(i32, i32, u32, u32)>,
    pivot: Option<(i32, i32)>,
    frames: usize,
) -> Result<SliceKeySpec, ProcessError> {
    let refused = |what: &str| {
        ProcessError::msg(format!(
            "slice `{name}` has a key at frame {from} {what}"
        ))
    };
    if from as usize >= frames {
        return Err(refused(&format!("past its last frame ({})", frames.saturating_sub(1))));
    }
    let inside = |start: i32, len: u32, within: u32| {
        u32::try_from(start).is_ok_and(|s| u64::from(s) + u64::from(len) <= u64::from(within))
    };
    let (_, _, w, h) = bounds;
    if let Some((cx, cy, cw, ch)) = center
        && !(inside(cx, cw, w) && inside(cy, ch, h))
    {
        return Err(refused("whose 9-slice centre lies outside its bounds"));
    }
    Ok(SliceKeySpec {
        name: name.to_owned(),
        from,
        bounds,
        center,
        pivot,
    })
}
