//! MaxRects packing (Jukka Jylänki, "A Thousand Ways to Pack the Bin", 2010).
//!
//! A page keeps the list of *maximal* free rectangles: every largest empty
//! rectangle, overlapping each other. A new rectangle goes into the free one
//! that scores best by a heuristic; every free rectangle it overlaps is split
//! into up to four maximal pieces around it, and pieces contained in another
//! free rectangle are dropped. Unlike skyline packing, no space is ever given
//! up for good, which is why MaxRects reaches 95–99% occupancy on mixed sprite
//! sets where skyline stays near 90%.
//!
//! Pages are filled one at a time: every remaining rectangle, in sort order,
//! is offered to the current page, and those that do not fit wait for the next.
//! A page tracks the widest and tallest free rectangle, so a rectangle that
//! cannot fit is rejected without scanning.
//! A new free rectangle with a side shorter than the shortest side of every
//! rectangle still to be offered to the page is not kept: nothing can use
//! it. Splitting leaves many such slivers, and every insertion scanned them;
//! dropping them leaves the same places to choose from and packed 1.7–2.4×
//! faster (BENCHMARKS.md, "Atlas packing").
//!
//! [`MaxRects::default`] tries several sort orders and heuristics and keeps the
//! packing with the fewest pages (then the smallest last page), stopping early
//! when it reaches the area lower bound, which no packing can beat. Each try is
//! deterministic, and so is the choice: ties keep the earlier try.

use super::pack::{PackOptions, Packer, Packing, Placement, Size, TooLarge, check_sizes};

/// How a free rectangle is scored for a new one; lower is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heuristic {
    /// Best short side fit: the least leftover on the shorter side.
    BestShortSideFit,
    /// Best long side fit: the least leftover on the longer side.
    BestLongSideFit,
    /// Best area fit: the smallest free rectangle that holds it.
    BestAreaFit,
    /// Bottom-left: the lowest top edge, then the leftmost.
    BottomLeft,
}

/// The order rectangles are offered in; all descending, ties by input order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Largest area first.
    Area,
    /// Longest side first, then the shorter side.
    MaxSide,
    /// Tallest first, then widest.
    Height,
    /// Widest first, then tallest.
    Width,
    /// Largest perimeter first.
    Perimeter,
}

/// MaxRects with a list of (order, heuristic) tries; the densest result wins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaxRects {
    /// Tried in this order until one reaches the area lower bound.
    pub tries: Vec<(Order, Heuristic)>,
}

impl Default for MaxRects {
    fn default() -> MaxRects {
        use Heuristic::*;
        use Order::*;
        MaxRects {
            tries: vec![
                (Area, BestShortSideFit),
                (MaxSide, BestShortSideFit),
                (Area, BestAreaFit),
                (Height, BottomLeft),
                (Perimeter, BestLongSideFit),
                (Width, BestShortSideFit),
                (MaxSide, BestAreaFit),
                (Height, BestShortSideFit),
            ],
        }
    }
}

impl MaxRects {
    /// One order and heuristic, no retries: the fast option.
    pub fn single(order: Order, heuristic: Heuristic) -> MaxRects {
        MaxRects {
            tries: vec![(order, heuristic)],
        }
    }
}

impl Packer for MaxRects {
    fn name(&self) -> &'static str {
        if self.tries.len() == 1 {
            "maxrects-single"
        } else {
            "maxrects"
        }
    }

    fn pack(&self, sizes: &[Size], options: &PackOptions) -> Result<Packing, TooLarge> {
        check_sizes(sizes, options)?;
        let bound = options.area_lower_bound(sizes).max(1);
        let mut best: Option<(Packing, u64)> = None;
        for &(order, heuristic) in &self.tries {
            let packing = pack_once(sizes, options, order, heuristic, true);
            let last_area = packing.page_extents(sizes).last().map_or(0, |s| s.area());
            let better = best
                .as_ref()
                .is_none_or(|(b, area)| (packing.pages, last_area) < (b.pages, *area));
            if better {
                best = Some((packing, last_area));
            }
            if best
                .as_ref()
                .is_some_and(|(b, _)| u64::from(b.pages) <= bound)
            {
                break;
            }
        }
        Ok(best.map(|(p, _)| p).unwrap_or(Packing {
            placements: Vec::new(),
            pages: 0,
        }))
    }
}

/// One packing with one order and heuristic. Every size must fit a page.
/// `prune`: free rectangles too small for every rectangle still to come are
/// dropped (always, but in the test that compares with keeping them).
fn pack_once(
    sizes: &[Size],
    options: &PackOptions,
    order: Order,
    heuristic: Heuristic,
    prune: bool,
) -> Packing {
    let mut placements = vec![
        Placement {
            page: 0,
            x: 0,
            y: 0,
            rotated: false,
        };
        sizes.len()
    ];
    let mut remaining: Vec<usize> = (0..sizes.len())
        .filter(|&i| sizes[i].w > 0 && sizes[i].h > 0)
        .collect();
    sort(&mut remaining, sizes, order);
    let mut pages = 0;
    let mut waiting = Vec::new();
    let mut floor = Vec::new();
    while !remaining.is_empty() {
        let mut page = Page::new(options.page_width, options.page_height);
        // The shortest side among the rectangles still to be offered to
        // this page, from each on: a free rectangle narrower or lower than
        // that can hold none of them.
        floor.clear();
        floor.extend(remaining.iter().rev().scan(u32::MAX, |least, &i| {
            *least = (*least).min(sizes[i].w.min(sizes[i].h));
            Some(*least)
        }));
        floor.reverse();
        for (at, (&i, &least)) in remaining.iter().zip(&floor).enumerate() {
            // Every rectangle from here on has both sides at least `least`
            // long, so none fits once the widest or the tallest free
            // rectangle is shorter: the rest wait for the next page without
            // each being offered to this one (pages × rectangles offers
            // before; 10% of packing 10,000 rectangles, the same pages).
            if least > page.max_w.min(page.max_h) {
                waiting.extend_from_slice(&remaining[at..]);
                break;
            }
            page.floor = if prune { least } else { 0 };
            match page.insert(sizes[i], options.allow_rotation, heuristic) {
                Some((x, y, rotated)) => {
                    placements[i] = Placement {
                        page: pages,
                        x,
                        y,
                        rotated,
                    };
                }
                None => waiting.push(i),
            }
        }
        debug_assert!(
            waiting.len() < remaining.len(),
            "an empty page takes the first rectangle"
        );
        pages += 1;
        std::mem::swap(&mut remaining, &mut waiting);
        waiting.clear();
    }
    Packing { placements, pages }
}

fn sort(indexes: &mut [usize], sizes: &[Size], order: Order) {
    let key = |i: usize| -> (u64, u64) {
        let s = sizes[i];
        let (long, short) = (s.w.max(s.h), s.w.min(s.h));
        match order {
            Order::Area => (s.area(), u64::from(long)),
            Order::MaxSide => (u64::from(long), u64::from(short)),
            Order::Height => (u64::from(s.h), u64::from(s.w)),
            Order::Width => (u64::from(s.w), u64::from(s.h)),
            Order::Perimeter => (u64::from(s.w) + u64::from(s.h), u64::from(long)),
        }
    };
    // Stable, descending: equal keys keep input order.
    indexes.sort_by_key(|&i| std::cmp::Reverse(key(i)));
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rect {
    x: u32,
    y: u32,
    w: u32,
    h: u32,
}

impl Rect {
    fn right(self) -> u32 {
        self.x + self.w
    }

    fn bottom(self) -> u32 {
        self.y + self.h
    }

    fn intersects(self, o: Rect) -> bool {
        self.x < o.right() && o.x < self.right() && self.y < o.bottom() && o.y < self.bottom()
    }

    fn contains(self, o: Rect) -> bool {
        o.x >= self.x && o.y >= self.y && o.right() <= self.right() && o.bottom() <= self.bottom()
    }
}

/// One page being filled: its maximal free rectangles.
struct Page {
    free: Vec<Rect>,
    /// `free`'s edges, in its order, for the containment check.
    edges: Edges,
    /// Widest and tallest free rectangle: a quick "cannot fit" test.
    max_w: u32,
    max_h: u32,
    pieces: Vec<Rect>,
    /// New free rectangles with a side shorter than this are not kept:
    /// no rectangle still to come fits in them.
    floor: u32,
}

impl Page {
    fn new(w: u32, h: u32) -> Page {
        let whole = Rect { x: 0, y: 0, w, h };
        let mut edges = Edges::default();
        edges.push(whole);
        Page {
            free: vec![whole],
            edges,
            max_w: w,
            max_h: h,
            pieces: Vec::new(),
            floor: 0,
        }
    }

    /// Places `size` where `heuristic` likes best; `None` if it does not fit.
    fn insert(
        &mut self,
        size: Size,
        rotate: bool,
        heuristic: Heuristic,
    ) -> Option<(u32, u32, bool)> {
        let upright = size.w <= self.max_w && size.h <= self.max_h;
        let turned = rotate && size.h <= self.max_w && size.w <= self.max_h;
        if !upright && !turned {
            return None;
        }
        let mut best: Option<((i64, i64), Rect, bool)> = None;
        for f in &self.free {
            for (w, h, rotated) in [(size.w, size.h, false), (size.h, size.w, true)] {
                if rotated && (!rotate || size.w == size.h) {
                    continue;
                }
                if w > f.w || h > f.h {
                    continue;
                }
                let s = score(*f, w, h, heuristic);
                if best.is_none_or(|(b, _, _)| s < b) {
                    best = Some((
                        s,
                        Rect {
                            x: f.x,
                            y: f.y,
                            w,
                            h,
                        },
                        rotated,
                    ));
                }
            }
        }
        let (_, placed, rotated) = best?;
        self.place(placed);
        Some((placed.x, placed.y, rotated))
    }

    fn place(&mut self, used: Rect) {
        let mut pieces = std::mem::take(&mut self.pieces);
        pieces.clear();
        let mut i = 0;
        while i < self.free.len() {
            let f = self.free[i];
            if !f.intersects(used) {
                i += 1;
                continue;
            }
            self.free.swap_remove(i);
            self.edges.swap_remove(i);
            if used.x > f.x {
                pieces.push(Rect {
                    w: used.x - f.x,
                    ..f
                });
            }
            if used.right() < f.right() {
                pieces.push(Rect {
                    x: used.right(),
                    w: f.right() - used.right(),
                    ..f
                });
            }
            if used.y > f.y {
                pieces.push(Rect {
                    h: used.y - f.y,
                    ..f
                });
            }
            if used.bottom() < f.bottom() {
                pieces.push(Rect {
                    y: used.bottom(),
                    h: f.bottom() - used.bottom(),
                    ..f
                });
            }
        }
        // Keep only maximal rectangles. Survivors never contain each other,
        // so only pieces need checking: against survivors and other pieces.
        let survivors = self.free.len();
        for p in 0..pieces.len() {
            let piece = pieces[p];
            let redundant = piece.w.min(piece.h) < self.floor
                || self.edges.any_contains(survivors, piece)
                || pieces.iter().enumerate().any(|(q, &other)| {
                    q != p && other.contains(piece) && (other != piece || q < p)
                });
            if !redundant {
                self.free.push(piece);
                self.edges.push(piece);
            }
        }
        self.pieces = pieces;
        self.max_w = self.free.iter().map(|f| f.w).max().unwrap_or(0);
        self.max_h = self.free.iter().map(|f| f.h).max().unwrap_or(0);
    }
}

/// The free rectangles' edges, one array each: the check of every new
/// piece against every surviving free rectangle held ~60% of a page's
/// packing samples in a profile of watched edits. Over rectangles of four
/// fields it vectorized poorly; over four arrays of the compared edges it
/// compares a block of lanes per instruction (BENCHMARKS.md, "Pages drawn
/// once"), with the same answer.
#[derive(Default)]
struct Edges {
    left: Vec<u32>,
    top: Vec<u32>,
    right: Vec<u32>,
    bottom: Vec<u32>,
}

impl Edges {
    fn push(&mut self, r: Rect) {
        self.left.push(r.x);
        self.top.push(r.y);
        self.right.push(r.right());
        self.bottom.push(r.bottom());
    }

    fn swap_remove(&mut self, i: usize) {
        self.left.swap_remove(i);
        self.top.swap_remove(i);
        self.right.swap_remove(i);
        self.bottom.swap_remove(i);
    }

    /// Whether any of the first `n` rectangles contains `r`: a block of 32
    /// at a time, without a branch per rectangle.
    fn any_contains(&self, n: usize, r: Rect) -> bool {
        const BLOCK: usize = 32;
        let (x, y, right, bottom) = (r.x, r.y, r.right(), r.bottom());
        let blocks = (self.left[..n].chunks(BLOCK))
            .zip(self.top[..n].chunks(BLOCK))
            .zip(self.right[..n].chunks(BLOCK))
            .zip(self.bottom[..n].chunks(BLOCK));
        for (((l, t), rt), b) in blocks {
            let any = (l.iter().zip(t).zip(rt).zip(b)).fold(false, |any, (((&l, &t), &rt), &b)| {
                any | ((l <= x) & (t <= y) & (rt >= right) & (b >= bottom))
            });
            if any {
                return true;
            }
        }
        false
    }
}

fn score(free: Rect, w: u32, h: u32, heuristic: Heuristic) -> (i64, i64) {
    let dw = i64::from(free.w - w);
    let dh = i64::from(free.h - h);
    match heuristic {
        Heuristic::BestShortSideFit => (dw.min(dh), dw.max(dh)),
        Heuristic::BestLongSideFit => (dw.max(dh), dw.min(dh)),
        Heuristic::BestAreaFit => (
            i64::from(free.w) * i64::from(free.h) - i64::from(w) * i64::from(h),
            dw.min(dh),
        ),
        Heuristic::BottomLeft => (i64::from(free.y + h), i64::from(free.x)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed-seed generator, so failures reproduce.
    fn sizes(seed: u64, n: usize, max: u32) -> Vec<Size> {
        let mut state = seed;
        let mut next = move |m: u32| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            1 + (state % u64::from(m)) as u32
        };
        (0..n)
            .map(|_| Size {
                w: next(max),
                h: next(max),
            })
            .collect()
    }

    fn assert_valid(sizes: &[Size], packing: &Packing, options: &PackOptions) {
        let rects: Vec<(u32, Rect)> = packing
            .placements
            .iter()
            .zip(sizes)
            .filter(|(_, s)| s.area() > 0)
            .map(|(p, s)| {
                let (w, h) = if p.rotated { (s.h, s.w) } else { (s.w, s.h) };
                (
                    p.page,
                    Rect {
                        x: p.x,
                        y: p.y,
                        w,
                        h,
                    },
                )
            })
            .collect();
        for (i, &(page, r)) in rects.iter().enumerate() {
            assert!(page < packing.pages);
            assert!(
                r.right() <= options.page_width && r.bottom() <= options.page_height,
                "{r:?} leaves the page"
            );
            for &(other_page, o) in &rects[i + 1..] {
                assert!(
                    page != other_page || !r.intersects(o),
                    "{r:?} overlaps {o:?}"
                );
            }
        }
    }

    #[test]
    fn random_sets_pack_without_overlap_within_pages() {
        for (seed, rotate) in [(1, false), (2, true), (3, true), (4, false)] {
            let sizes = sizes(seed, 600, 90);
            let options = PackOptions {
                page_width: 512,
                page_height: 384,
                allow_rotation: rotate,
            };
            for packer in [
                MaxRects::default(),
                MaxRects::single(Order::Height, Heuristic::BottomLeft),
            ] {
                let packing = packer.pack(&sizes, &options).unwrap();
                assert_valid(&sizes, &packing, &options);
                assert!(packing.pages >= 2, "the set needs several pages");
            }
        }
    }

    #[test]
    fn equal_squares_fill_pages_exactly() {
        let sizes = vec![Size { w: 32, h: 32 }; 64 * 2 + 1];
        let options = PackOptions {
            page_width: 256,
            page_height: 256,
            allow_rotation: false,
        };
        let packing = MaxRects::default().pack(&sizes, &options).unwrap();
        assert_eq!(packing.pages, 3);
        assert_eq!(packing.page_extents(&sizes)[2], Size { w: 32, h: 32 });
    }

    #[test]
    fn rotation_is_used_when_it_is_the_only_way_to_fit() {
        let sizes = [Size { w: 10, h: 100 }];
        let mut options = PackOptions {
            page_width: 100,
            page_height: 10,
            allow_rotation: false,
        };
        let err = MaxRects::default().pack(&sizes, &options).unwrap_err();
        assert_eq!(err.index, 0);
        options.allow_rotation = true;
        let packing = MaxRects::default().pack(&sizes, &options).unwrap();
        assert!(packing.placements[0].rotated);
    }

    #[test]
    fn empty_rectangles_take_no_space() {
        let sizes = [
            Size { w: 0, h: 0 },
            Size { w: 8, h: 8 },
            Size { w: 5, h: 0 },
        ];
        let options = PackOptions {
            page_width: 8,
            page_height: 8,
            allow_rotation: false,
        };
        let packing = MaxRects::default().pack(&sizes, &options).unwrap();
        assert_eq!(packing.pages, 1);
        assert_valid(&sizes, &packing, &options);
    }

    /// Dropping the free rectangles nothing still to come fits in leaves
    /// the same places to choose from; only the order of the list differs,
    /// and with it which of two equally good places is taken. So a packing
    /// may differ in its details, never in its quality: on these sets, as
    /// many pages, cropped to within 1% of the same area, for every try.
    #[test]
    fn dropping_free_rectangles_too_small_costs_no_space() {
        for (seed, rotate) in [(5, false), (6, true), (7, true), (8, false)] {
            let sizes = sizes(seed, 500, 90);
            let options = PackOptions {
                page_width: 512,
                page_height: 384,
                allow_rotation: rotate,
            };
            for &(order, heuristic) in &MaxRects::default().tries {
                let kept = pack_once(&sizes, &options, order, heuristic, false);
                let pruned = pack_once(&sizes, &options, order, heuristic, true);
                assert_valid(&sizes, &pruned, &options);
                assert_eq!(pruned.pages, kept.pages, "{order:?} {heuristic:?}");
                let area =
                    |p: &Packing| -> u64 { p.page_extents(&sizes).iter().map(|s| s.area()).sum() };
                assert!(
                    area(&pruned) * 100 <= area(&kept) * 101,
                    "{order:?} {heuristic:?}: {} against {}",
                    area(&pruned),
                    area(&kept)
                );
            }
        }
    }

    #[test]
    fn packing_is_deterministic() {
        let sizes = sizes(9, 2000, 120);
        let options = PackOptions {
            page_width: 1024,
            page_height: 1024,
            allow_rotation: true,
        };
        let a = MaxRects::default().pack(&sizes, &options).unwrap();
        let b = MaxRects::default().pack(&sizes, &options).unwrap();
        assert_eq!(a, b);
    }
}
