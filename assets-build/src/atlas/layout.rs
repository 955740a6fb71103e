//! From sprite sizes and atlas settings to pages and frames.
//!
//! Padding and extrusion are the layout's business, not the packer's: each
//! sprite is offered to the packer grown by `2 × extrude + padding`, on a page
//! grown by `padding`, so that sprites end up `padding` pixels apart (their
//! extruded borders included) and the last column and row need no trailing
//! gap. Pages are then cropped to what they use, and rounded up to powers of
//! two when asked.
//!
//! A packer fills pages of the largest size allowed; a set that needs less
//! than a page would then lie in a wide strip (175 real sprites on a
//! 2048² limit used 48% of their cropped page). So the sprites of the last
//! page (the only one, for small sets) are packed again into the smallest
//! page that holds them, unless that page is already 85% full or holds more
//! than 400 sprites (the search would cost more than an edit's re-pack; big
//! sets fill their pages anyway): a few aspect
//! ratios, each grown from the area bound in 3% steps, or every power-of-two
//! size in order of area when `power-of-two` is set. The smallest cropped result wins; ties go to the
//! squarer page, then the narrower, so the layout stays deterministic.
//!
//! An atlas of many pages is laid out in groups ([`group_count`],
//! [`lay_out_grouped`]): each member goes to a group by a hash of its name,
//! and each group is packed on pages of its own, groups one after the
//! other. A sprite redrawn at another size then moves the sprites of its
//! group only: the other groups' pages keep their sprites where they were
//! (drawn, compressed and reloaded again for nothing), and the packer runs
//! on a group, not on every sprite (137,000 sprites took seconds at 1M
//! files). The number of groups is a power of two from the atlas's area, so
//! it changes only when the atlas doubles or halves; the layout is still a
//! function of the sprites and settings alone. Each group's last page is
//! cropped as any last page is, which costs a little occupancy.

use std::sync::Arc;

use super::maxrects::{Heuristic, MaxRects, Order};
use super::pack::{PackOptions, Packer, Packing, Placement, Size, TooLarge};
use crate::manifest::AtlasSpec;

/// Where one sprite's pixels go, without its extruded border.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// Page index.
    pub page: u32,
    /// Left edge of the pixels in the page.
    pub x: u32,
    /// Top edge.
    pub y: u32,
    /// Width in the page (the sprite's height when rotated).
    pub w: u32,
    /// Height in the page.
    pub h: u32,
    /// Turned 90° clockwise.
    pub rotated: bool,
}

impl Frame {
    /// An empty sprite's: nothing, on page 0.
    pub const EMPTY: Frame = Frame {
        page: 0,
        x: 0,
        y: 0,
        w: 0,
        h: 0,
        rotated: false,
    };
}

/// Every page's size and every sprite's frame, in input order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AtlasLayout {
    /// Page sizes; at least one page, even for an atlas of empty sprites.
    pub pages: Vec<Size>,
    /// One frame per sprite; empty sprites have `w = h = 0` on page 0.
    pub frames: Vec<Frame>,
}

/// Lays out sprites of the given (trimmed) sizes.
pub fn lay_out(
    sizes: &[Size],
    spec: &AtlasSpec,
    packer: &dyn Packer,
) -> Result<AtlasLayout, TooLarge> {
    let border = 2 * spec.extrude + spec.padding;
    let grown: Vec<Size> = sizes
        .iter()
        .map(|s| {
            if s.area() == 0 {
                Size { w: 0, h: 0 }
            } else {
                Size {
                    w: s.w + border,
                    h: s.h + border,
                }
            }
        })
        .collect();
    let options = PackOptions {
        page_width: spec.max_size + spec.padding,
        page_height: spec.max_size + spec.padding,
        allow_rotation: spec.rotate,
    };
    let mut packing = packer.pack(&grown, &options).map_err(|e| TooLarge {
        size: sizes[e.index],
        page: Size {
            w: spec.max_size,
            h: spec.max_size,
        },
        ..e
    })?;
    tighten_last_page(&mut packing, &grown, &options, spec, packer);
    let frames: Vec<Frame> = packing
        .placements
        .iter()
        .zip(sizes)
        .map(|(p, s)| {
            if s.area() == 0 {
                return Frame::EMPTY;
            }
            let (w, h) = if p.rotated { (s.h, s.w) } else { (s.w, s.h) };
            Frame {
                page: p.page,
                x: p.x + spec.extrude,
                y: p.y + spec.extrude,
                w,
                h,
                rotated: p.rotated,
            }
        })
        .collect();
    let mut pages = vec![Size { w: 1, h: 1 }; (packing.pages as usize).max(1)];
    for f in frames.iter().filter(|f| f.w > 0) {
        let page = &mut pages[f.page as usize];
        page.w = page.w.max(f.x + f.w + spec.extrude);
        page.h = page.h.max(f.y + f.h + spec.extrude);
    }
    if spec.power_of_two {
        for p in &mut pages {
            p.w = p.w.next_power_of_two();
            p.h = p.h.next_power_of_two();
        }
    }
    Ok(AtlasLayout { pages, frames })
}

/// Pages a group of a grouped atlas fills, about.
pub const GROUP_PAGES: u64 = 4;

/// How many groups an atlas of sprites of these sizes is laid out in: one
/// while it needs no more than [`GROUP_PAGES`] pages, then a power of two
/// giving each group about that many.
pub fn group_count(sizes: &[Size], spec: &AtlasSpec) -> u32 {
    let border = u64::from(2 * spec.extrude + spec.padding);
    let area: u64 = sizes
        .iter()
        .filter(|s| s.area() > 0)
        .map(|s| (u64::from(s.w) + border) * (u64::from(s.h) + border))
        .sum();
    let side = u64::from(spec.max_size + spec.padding);
    // A page is about 85% full once packed.
    let pages = (area * 100).div_ceil(side * side * 85);
    if pages <= GROUP_PAGES {
        return 1;
    }
    let groups = (pages / GROUP_PAGES).next_power_of_two();
    u32::try_from(groups).unwrap_or(1 << 16).min(1 << 16)
}

/// Lays out sprites in groups: `group_of[i]` is sprite `i`'s group (below
/// `groups`), and `lay_group` lays out one group's sprites given their
/// indices. Pages are the groups' in group order; frames are in input
/// order, each on its group's page; empty sprites stay on page 0.
pub fn lay_out_grouped<E>(
    group_of: &[u32],
    groups: u32,
    mut lay_group: impl FnMut(&[usize]) -> Result<Arc<AtlasLayout>, E>,
) -> Result<AtlasLayout, E> {
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); groups as usize];
    for (i, &g) in group_of.iter().enumerate() {
        members[g as usize].push(i);
    }
    let mut pages = Vec::new();
    let mut frames = vec![Frame::EMPTY; group_of.len()];
    for indices in members.iter().filter(|m| !m.is_empty()) {
        let layout = lay_group(indices)?;
        let offset = pages.len() as u32;
        for (&i, f) in indices.iter().zip(&layout.frames) {
            if f.w > 0 && f.h > 0 {
                frames[i] = Frame {
                    page: f.page + offset,
                    ..*f
                };
            }
        }
        pages.extend_from_slice(&layout.pages);
    }
    if pages.is_empty() {
        pages.push(Size { w: 1, h: 1 });
    }
    Ok(AtlasLayout { pages, frames })
}

/// Packs the sprites of the last page again into the smallest page that
/// holds them (see the module docs), if that crops smaller.
fn tighten_last_page(
    packing: &mut Packing,
    grown: &[Size],
    options: &PackOptions,
    spec: &AtlasSpec,
    packer: &dyn Packer,
) {
    let Some(last) = packing.pages.checked_sub(1) else {
        return;
    };
    let on_last: Vec<usize> = (0..grown.len())
        .filter(|&i| grown[i].area() > 0 && packing.placements[i].page == last)
        .collect();
    let subset: Vec<Size> = on_last.iter().map(|&i| grown[i]).collect();
    let now = packing.page_extents(grown)[last as usize];
    let area: u64 = subset.iter().map(|s| s.area()).sum();
    // The search re-packs the page's sprites a few dozen times: cheap for
    // a small set (a few ms for 200), but for the last page of a big atlas
    // (hundreds of sprites) it cost more than an edit's whole re-pack under
    // `watch` (2,000-sprite benchmark: edit 150 -> 300 ms). A page already
    // 85% full gains little anyway.
    if subset.len() > MAX_SEARCHED_SPRITES || area * 100 >= now.area() * DENSE_ENOUGH_PERCENT {
        return;
    }
    // Sizes are probed with one fast try of MaxRects (the search packs a
    // few dozen times; an atlas re-packs on every edit under `watch`), and
    // the chosen size is packed once more with `packer` itself.
    let probe = MaxRects::single(Order::Area, Heuristic::BestShortSideFit);
    let pack_into = |packer: &dyn Packer, w: u32, h: u32| -> Option<(Size, Packing)> {
        let o = PackOptions {
            page_width: w,
            page_height: h,
            allow_rotation: options.allow_rotation,
        };
        let p = packer.pack(&subset, &o).ok().filter(|p| p.pages == 1)?;
        Some((p.page_extents(&subset)[0], p))
    };
    let try_page = |w: u32, h: u32| pack_into(&probe, w, h).map(|(e, _)| (e, Size { w, h }));
    let rank = |e: Size| (rounded(e, spec).area(), e.w.abs_diff(e.h), e.w);
    // (cropped extent, page size it was packed into)
    let mut best: Option<(Size, Size)> = None;
    let mut offer = |found: Option<(Size, Size)>| {
        if let Some((extent, page)) = found
            && best.as_ref().is_none_or(|(b, _)| rank(extent) < rank(*b))
        {
            best = Some((extent, page));
        }
    };
    let side = |s: &Size| {
        if options.allow_rotation {
            s.w.min(s.h)
        } else {
            s.w
        }
    };
    let tall = |s: &Size| {
        if options.allow_rotation {
            s.w.min(s.h)
        } else {
            s.h
        }
    };
    let min_w = subset.iter().map(side).max().unwrap_or(1);
    let min_h = subset.iter().map(tall).max().unwrap_or(1);
    let (max_w, max_h) = (options.page_width, options.page_height);
    if spec.power_of_two {
        // Pages `2^a + padding` wide: the trailing padding is cropped, and
        // the rest rounds up to `2^a`.
        let mut sizes: Vec<(u32, u32)> = Vec::new();
        let pows = || {
            (0..=14)
                .map(|k| 1u32 << k)
                .filter(|&p| p + spec.padding <= max_w.max(max_h))
        };
        for w in pows() {
            for h in pows() {
                let (w, h) = (w + spec.padding, h + spec.padding);
                if w <= max_w
                    && h <= max_h
                    && w >= min_w
                    && h >= min_h
                    && u64::from(w) * u64::from(h) >= area
                {
                    sizes.push((w, h));
                }
            }
        }
        sizes.sort_by_key(|&(w, h)| (u64::from(w) * u64::from(h), w.abs_diff(h), w));
        for (w, h) in sizes {
            let found = try_page(w, h);
            if found.is_some() {
                offer(found);
                break;
            }
        }
    } else {
        for aspect in [1.0f64, 2.0, 0.5, 4.0, 0.25] {
            let mut w = ((area as f64 * aspect).sqrt().ceil() as u32).clamp(min_w, max_w);
            let mut h = (area.div_ceil(u64::from(w.max(1))) as u32).clamp(min_h, max_h);
            loop {
                let found = try_page(w, h);
                if found.is_some() {
                    offer(found);
                    break;
                }
                if w == max_w && h == max_h {
                    break;
                }
                w = (w + w.div_ceil(33)).min(max_w);
                h = (h + h.div_ceil(33)).min(max_h);
            }
        }
    }
    let Some((_, page)) = best else {
        return;
    };
    if let Some((extent, tight)) = pack_into(packer, page.w, page.h)
        && rank(extent) < rank(now)
    {
        for (k, &i) in on_last.iter().enumerate() {
            packing.placements[i] = Placement {
                page: last,
                ..tight.placements[k]
            };
        }
    }
}

/// How full (sprite cells over the cropped page) a last page must be for
/// its size not to be searched.
const DENSE_ENOUGH_PERCENT: u64 = 85;

/// A last page with more sprites than this keeps the packer's page (see
/// `tighten_last_page`).
const MAX_SEARCHED_SPRITES: usize = 400;

/// The page a cropped extent (with its trailing padding) becomes.
fn rounded(extent: Size, spec: &AtlasSpec) -> Size {
    let w = extent.w.saturating_sub(spec.padding).max(1);
    let h = extent.h.saturating_sub(spec.padding).max(1);
    if spec.power_of_two {
        Size {
            w: w.next_power_of_two(),
            h: h.next_power_of_two(),
        }
    } else {
        Size { w, h }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_atlas_of_many_pages_is_laid_out_in_groups_that_keep_to_themselves() {
        let spec = spec(64, 2, 0);
        let small: Vec<Size> = (0..8).map(|_| Size { w: 20, h: 20 }).collect();
        assert_eq!(group_count(&small, &spec), 1);
        // 400 sprites of 22x22 with padding on 66x66: about 100 pages.
        let sizes: Vec<Size> = (0..400u32)
            .map(|i| Size {
                w: 10 + i % 11,
                h: 10 + i % 7,
            })
            .collect();
        let groups = group_count(&sizes, &spec);
        assert!(groups.is_power_of_two() && groups >= 4, "{groups}");
        let group_of: Vec<u32> = (0..400u32).map(|i| (i * 7919) % groups).collect();
        let lay = |sizes: &[Size]| {
            lay_out_grouped(&group_of, groups, |indices| {
                let group: Vec<Size> = indices.iter().map(|&i| sizes[i]).collect();
                lay_out(&group, &spec, &MaxRects::default()).map(Arc::new)
            })
            .unwrap()
        };
        let before = lay(&sizes);
        // Every sprite is inside its page, and no two overlap on one.
        for (i, f) in before.frames.iter().enumerate() {
            let page = before.pages[f.page as usize];
            assert!(f.x + f.w <= page.w && f.y + f.h <= page.h, "{i}: {f:?} on {page:?}");
            for g in &before.frames[..i] {
                let apart = g.page != f.page
                    || f.x >= g.x + g.w
                    || g.x >= f.x + f.w
                    || f.y >= g.y + g.h
                    || g.y >= f.y + f.h;
                assert!(apart, "{f:?} overlaps {g:?}");
            }
        }
        // One sprite grows: only its group's sprites may move, and the
        // pages before its group's keep their numbers.
        let mut grown = sizes.clone();
        grown[5].w += 9;
        let after = lay(&grown);
        let moved_group = group_of[5];
        let frames = before.frames.iter().zip(&after.frames);
        for (i, (&group, (b, a))) in group_of.iter().zip(frames).enumerate() {
            if group < moved_group {
                assert_eq!(b, a, "sprite {i} moved");
            } else if group > moved_group {
                assert_eq!((b.x, b.y, b.w, b.h), (a.x, a.y, a.w, a.h), "sprite {i} moved");
            }
        }
    }

    fn spec(max_size: u32, padding: u32, extrude: u32) -> AtlasSpec {
        AtlasSpec {
            max_size,
            padding,
            extrude,
            ..AtlasSpec::default()
        }
    }

    #[test]
    fn pages_are_cropped_to_their_contents_or_rounded_to_powers_of_two() {
        let sizes = [Size { w: 10, h: 5 }, Size { w: 3, h: 3 }];
        let layout = lay_out(&sizes, &spec(64, 2, 1), &MaxRects::default()).unwrap();
        assert_eq!(layout.pages.len(), 1);
        let page = layout.pages[0];
        // Each frame sits inside its extruded border; the page ends at the last border.
        let right = layout.frames.iter().map(|f| f.x + f.w + 1).max().unwrap();
        let bottom = layout.frames.iter().map(|f| f.y + f.h + 1).max().unwrap();
        assert_eq!((page.w, page.h), (right, bottom));
        assert!(layout.frames.iter().all(|f| f.x >= 1 && f.y >= 1));
        let pot = lay_out(
            &sizes,
            &AtlasSpec {
                power_of_two: true,
                ..spec(64, 2, 1)
            },
            &MaxRects::default(),
        )
        .unwrap();
        let p = pot.pages[0];
        assert!(p.w.is_power_of_two() && p.h.is_power_of_two());
        assert!(
            pot.frames
                .iter()
                .all(|f| f.x + f.w < p.w && f.y + f.h < p.h)
        );
    }

    /// 175 sprites of 16–48 px by a fixed formula, every 25th a wide banner
    /// or a 64² portrait (the benchmark's `small_real_looking_set` is the
    /// random version of this).
    fn small_set() -> Vec<Size> {
        (0..175u32)
            .map(|i| match i % 25 {
                0 => Size {
                    w: 96 + (i * 7) % 64,
                    h: 16 + i % 16,
                },
                1 => Size { w: 64, h: 64 },
                _ => Size {
                    w: 16 + (i * 13) % 33,
                    h: 16 + (i * 29) % 33,
                },
            })
            .collect()
    }

    fn occupancy(sizes: &[Size], layout: &AtlasLayout) -> f64 {
        let used: u64 = sizes.iter().map(|s| s.area()).sum();
        let pages: u64 = layout.pages.iter().map(|p| p.area()).sum();
        used as f64 / pages as f64
    }

    #[test]
    fn a_small_set_gets_a_page_sized_to_it() {
        let sizes = small_set();
        for (max, padding, rotate) in [
            (2048, 0, false),
            (2048, 2, false),
            (512, 0, true),
            (1024, 2, true),
        ] {
            let spec = AtlasSpec {
                rotate,
                ..spec(max, padding, 0)
            };
            let layout = lay_out(&sizes, &spec, &MaxRects::default()).unwrap();
            assert_eq!(layout.pages.len(), 1);
            let o = occupancy(&sizes, &layout);
            // Padding costs area of its own; without it, 85% at least.
            let floor = if padding == 0 { 0.85 } else { 0.75 };
            assert!(
                o >= floor,
                "max {max} padding {padding} rotate {rotate}: {o:.3} of {:?}",
                layout.pages[0]
            );
        }
    }

    #[test]
    fn a_sprite_that_fits_only_without_its_padding_still_fits() {
        // 64 wide with extrusion 0 on a 64 page: the trailing padding may
        // hang off the edge, so it fits; 65 does not.
        let layout = lay_out(
            &[Size { w: 64, h: 64 }],
            &spec(64, 4, 0),
            &MaxRects::default(),
        )
        .unwrap();
        assert_eq!(layout.pages, vec![Size { w: 64, h: 64 }]);
        let err = lay_out(
            &[Size { w: 65, h: 1 }],
            &spec(64, 4, 0),
            &MaxRects::default(),
        )
        .unwrap_err();
        assert_eq!(
            (err.size, err.page),
            (Size { w: 65, h: 1 }, Size { w: 64, h: 64 })
        );
    }

    #[test]
    fn an_atlas_of_empty_sprites_has_one_blank_page() {
        let layout = lay_out(
            &[Size { w: 0, h: 0 }],
            &spec(64, 2, 0),
            &MaxRects::default(),
        )
        .unwrap();
        assert_eq!(layout.pages, vec![Size { w: 1, h: 1 }]);
        assert_eq!((layout.frames[0].w, layout.frames[0].h), (0, 0));
    }
}
