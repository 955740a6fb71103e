//! Aseprite's slices, as the `aseprite` processor reads them from a file
//! and the `sheet` processor from an exported sheet's `meta.slices`: one
//! check for both, so a key is refused the same way whichever way it
//! came, by its slice's name (the animation resource's reader refuses the
//! same keys in an untrusted parcel; see `assets_runtime::animation`).

use assets_runtime::animation::write::SliceKeySpec;

use super::ProcessError;

/// Appends one slice's `keys` to `out` in frame order, as the animation
/// resource holds them, or says why one cannot be a key of an animation
/// of `frames` frames: it starts past the last frame, or its 9-slice
/// centre lies outside its bounds.
pub(super) fn push(
    mut keys: Vec<SliceKeySpec>,
    frames: usize,
    out: &mut Vec<SliceKeySpec>,
) -> Result<(), ProcessError> {
    keys.sort_by_key(|k| k.from);
    for key in &keys {
        let refused = |what: &str| {
            ProcessError::msg(format!(
                "slice `{}` has a key at frame {} {what}",
                key.name, key.from
            ))
        };
        if key.from as usize >= frames {
            let last = frames.saturating_sub(1);
            return Err(refused(&format!("past its last frame ({last})")));
        }
        let (_, _, width, height) = key.bounds;
        if key.center.is_some_and(|c| !c.fits(width, height)) {
            return Err(refused("whose 9-slice centre lies outside its bounds"));
        }
    }
    out.append(&mut keys);
    Ok(())
}
