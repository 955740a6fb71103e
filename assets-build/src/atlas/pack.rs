//! Packing: where each rectangle goes, on which page.
//!
//! A [`Packer`] places rectangles on pages of at most a given size; it knows
//! nothing of pixels, padding or extrusion (the caller grows each rectangle by
//! those first, see [`super::layout`]). Packers are behind a trait so they can
//! be compared side by side (the packing benchmark does) and swapped.
//!
//! Every packer here is deterministic: the same sizes in the same order give
//! the same placements, whatever the machine or thread count.

/// A width and height in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Size {
    /// Width.
    pub w: u32,
    /// Height.
    pub h: u32,
}

impl Size {
    /// Area in pixels, without overflow.
    pub fn area(self) -> u64 {
        u64::from(self.w) * u64::from(self.h)
    }
}

/// Where one rectangle went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Placement {
    /// Page index, from 0.
    pub page: u32,
    /// Left edge.
    pub x: u32,
    /// Top edge.
    pub y: u32,
    /// Placed turned by 90°: it occupies `h × w`.
    pub rotated: bool,
}

/// The page size limit and what a packer may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackOptions {
    /// Largest page width.
    pub page_width: u32,
    /// Largest page height.
    pub page_height: u32,
    /// Whether rectangles may be turned by 90° to fit better.
    pub allow_rotation: bool,
}

impl PackOptions {
    /// Whether `size` fits an empty page at all (turned, if allowed).
    pub fn fits_a_page(&self, size: Size) -> bool {
        (size.w <= self.page_width && size.h <= self.page_height)
            || (self.allow_rotation && size.h <= self.page_width && size.w <= self.page_height)
    }

    /// The fewest pages that could hold `sizes`: their total area over a
    /// page's, rounded up.
    pub fn area_lower_bound(&self, sizes: &[Size]) -> u64 {
        let total: u64 = sizes.iter().map(|s| s.area()).sum();
        let page = u64::from(self.page_width) * u64::from(self.page_height);
        total.div_ceil(page.max(1))
    }
}

/// The result of packing: one placement per input rectangle, in input order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packing {
    /// Where each rectangle went. Empty rectangles are at `(0, 0)` of page 0.
    pub placements: Vec<Placement>,
    /// How many pages were used.
    pub pages: u32,
}

impl Packing {
    /// The extent each page uses: the right and bottom edge of its contents.
    pub fn page_extents(&self, sizes: &[Size]) -> Vec<Size> {
        let mut extents = vec![Size { w: 0, h: 0 }; self.pages as usize];
        for (p, s) in self.placements.iter().zip(sizes) {
            if s.w == 0 || s.h == 0 {
                continue;
            }
            let (w, h) = if p.rotated { (s.h, s.w) } else { (s.w, s.h) };
            let e = &mut extents[p.page as usize];
            e.w = e.w.max(p.x + w);
            e.h = e.h.max(p.y + h);
        }
        extents
    }
}

/// A rectangle larger than a page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a {}x{} rectangle does not fit a {}x{} page", size.w, size.h, page.w, page.h)]
pub struct TooLarge {
    /// Index of the rectangle in the input.
    pub index: usize,
    /// Its size.
    pub size: Size,
    /// The page size.
    pub page: Size,
}

/// Places rectangles on pages. See the [module docs](self).
pub trait Packer {
    /// A short name for reports: `maxrects`.
    fn name(&self) -> &'static str;

    /// Places every rectangle of `sizes`; fails if one cannot fit a page.
    fn pack(&self, sizes: &[Size], options: &PackOptions) -> Result<Packing, TooLarge>;
}

/// The first rectangle that fits no page, if any.
pub fn check_sizes(sizes: &[Size], options: &PackOptions) -> Result<(), TooLarge> {
    match sizes.iter().position(|&s| !options.fits_a_page(s)) {
        Some(index) => Err(TooLarge {
            index,
            size: sizes[index],
            page: Size {
                w: options.page_width,
                h: options.page_height,
            },
        }),
        None => Ok(()),
    }
}
