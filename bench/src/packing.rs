//! Atlas packing quality and time: our MaxRects (several tries, and a single
//! try) beside `texture_packer`'s skyline packer, on the same rectangles in
//! the same run.
//!
//! Rectangles (fixed seed 0x5eed, xorshift64): each side drawn independently,
//! uniformly, from 8–128 px for 70% of them, 64–256 px for 25%, and 256–512 px
//! for 5%: many small sprites, some medium, a few large, as in a 2D game.
//! Pages are 2048×2048 (and 1024×1024 for a tighter 1k set), no padding (the layout adds padding by growing
//! rectangles, the same for every packer).
//!
//! Reported per set and packer: pages used, the area lower bound
//! (ceil(total area / page area)), occupancy (total area / (pages × page
//! area)), cropped occupancy (total area / the pages' used extents, as
//! written after cropping), and the median time with min–max over the runs.
//!
use std::fmt::Write as _;

use crate::measure::{Sample, time};

use assets_build::unstable::atlas::layout::lay_out;
use assets_build::unstable::atlas::maxrects::{Heuristic, Order};
use assets_build::unstable::atlas::{MaxRects, PackOptions, Packer, Size};
use assets_build::unstable::manifest::AtlasSpec;
use texture_packer::texture::{Pixel, Texture};
use texture_packer::{MultiTexturePacker, TexturePackerConfig};

fn rectangles(n: usize) -> Vec<Size> {
    let mut state: u64 = 0x5eed;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let side = |lo: u64, hi: u64, r: u64| (lo + r % (hi - lo + 1)) as u32;
    (0..n)
        .map(|_| {
            let class = next() % 100;
            let (lo, hi) = match class {
                0..70 => (8, 128),
                70..95 => (64, 256),
                _ => (256, 512),
            };
            Size {
                w: side(lo, hi, next()),
                h: side(lo, hi, next()),
            }
        })
        .collect()
}

/// `texture_packer` behind our trait, for the comparison.
struct Skyline;

#[derive(Clone)]
struct Blank(u32, u32);

struct NoPixel;

impl Pixel for NoPixel {
    fn is_transparent(&self) -> bool {
        false
    }
    fn transparency() -> Option<NoPixel> {
        None
    }
    fn outline() -> NoPixel {
        NoPixel
    }
}

impl Texture for Blank {
    type Pixel = NoPixel;
    fn width(&self) -> u32 {
        self.0
    }
    fn height(&self) -> u32 {
        self.1
    }
    fn get(&self, _: u32, _: u32) -> Option<NoPixel> {
        None
    }
    fn set(&mut self, _: u32, _: u32, _: NoPixel) {}
}

impl Packer for Skyline {
    fn name(&self) -> &'static str {
        "texture_packer 0.30 (skyline)"
    }

    fn pack(
        &self,
        sizes: &[Size],
        options: &PackOptions,
    ) -> Result<assets_build::unstable::atlas::Packing, assets_build::unstable::atlas::pack::TooLarge>
    {
        let config = TexturePackerConfig {
            max_width: options.page_width,
            max_height: options.page_height,
            allow_rotation: options.allow_rotation,
            force_max_dimensions: false,
            border_padding: 0,
            texture_padding: 0,
            texture_extrusion: 0,
            trim: false,
            texture_outlines: false,
        };
        let mut packer = MultiTexturePacker::new_skyline(config);
        for (i, s) in sizes.iter().enumerate() {
            packer
                .pack_own(i, Blank(s.w, s.h))
                .expect("every rectangle fits a page");
        }
        let mut placements = vec![
            assets_build::unstable::atlas::Placement {
                page: 0,
                x: 0,
                y: 0,
                rotated: false
            };
            sizes.len()
        ];
        for (page, p) in packer.get_pages().iter().enumerate() {
            for (i, f) in p.get_frames() {
                placements[*i] = assets_build::unstable::atlas::Placement {
                    page: page as u32,
                    x: f.frame.x,
                    y: f.frame.y,
                    rotated: f.rotated,
                };
            }
        }
        Ok(assets_build::unstable::atlas::Packing {
            placements,
            pages: packer.get_pages().len() as u32,
        })
    }
}

/// Every packer on every set; a Markdown table.
pub fn run(quick: bool) -> String {
    // (rectangles, page side, runs)
    let sets: &[(usize, u32, usize)] = if quick {
        &[(200, 1024, 1)]
    } else {
        &[(1_000, 2048, 21), (1_000, 1024, 21), (10_000, 2048, 7)]
    };
    let packers: Vec<Box<dyn Packer>> = vec![
        Box::new(MaxRects::default()),
        Box::new(MaxRects::single(Order::Area, Heuristic::BestShortSideFit)),
        Box::new(Skyline),
    ];
    let mut out = String::from(
        "| rects | page | rotation | packer | pages | lower bound | occupancy | cropped occupancy | time, median (min–max) ms |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for &(n, page, runs) in sets {
        let sizes = rectangles(n);
        let total: u64 = sizes.iter().map(|s| s.area()).sum();
        for rotate in [false, true] {
            let options = PackOptions {
                page_width: page,
                page_height: page,
                allow_rotation: rotate,
            };
            let bound = options.area_lower_bound(&sizes);
            for packer in &packers {
                let mut packing = None;
                let sample = Sample::of(runs, || {
                    time(|| {
                        packing = Some(packer.pack(&sizes, &options).expect("every rectangle fits"))
                    })
                });
                let packing = packing.expect("at least one run");
                let pages = packing.pages;
                let occupancy = total as f64 / (f64::from(pages) * f64::from(page).powi(2));
                let cropped: u64 = packing.page_extents(&sizes).iter().map(|e| e.area()).sum();
                writeln!(
                    out,
                    "| {n} | {page}² | {} | {} | {pages} | {bound} | {:.1}% | {:.1}% | {} |",
                    if rotate { "on" } else { "off" },
                    packer.name(),
                    occupancy * 100.0,
                    total as f64 / cropped as f64 * 100.0,
                    sample.ms(),
                )
                .expect("write to String");
            }
        }
    }
    out
}

/// A small set shaped like a real game's sprite sheet (an RPG's characters
/// and items): `n` sprites, mostly 16–48 px, every 25th a wide banner
/// (96–159 × 16–31) and every 25th a 64² portrait. Fixed seed.
fn small_real_looking_set(n: usize) -> Vec<Size> {
    let mut seed = 7u32;
    let mut next = |m: u32| {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
        (seed >> 16) % m
    };
    (0..n)
        .map(|i| match i % 25 {
            0 => Size {
                w: 96 + next(64),
                h: 16 + next(16),
            },
            1 => Size { w: 64, h: 64 },
            _ => Size {
                w: 16 + next(33),
                h: 16 + next(33),
            },
        })
        .collect()
}

/// Small sets on one page: the page cropped from a `max-size` page (what
/// the layout did before it sized pages to their sprites) beside the page
/// sized to them (`lay_out` now), and skyline's cropped page, same run.
/// Occupancy counts only sprite pixels, so padding is a cost.
pub fn small_sets(quick: bool) -> String {
    let sets: &[usize] = if quick { &[100] } else { &[100, 175, 200] };
    let runs = if quick { 1 } else { 21 };
    let mut out = String::from(
        "| sprites | max-size | padding | rotation | cropped max-size page (maxrects) | cropped max-size page (skyline) | page sized to the set (`lay_out`) | its size | layout time, median (min–max) ms |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for &n in sets {
        let sizes = small_real_looking_set(n);
        let total: u64 = sizes.iter().map(|s| s.area()).sum();
        for (max, padding, rotate) in [(2048, 0, false), (2048, 2, false), (512, 2, true)] {
            let grown: Vec<Size> = sizes
                .iter()
                .map(|s| Size {
                    w: s.w + padding,
                    h: s.h + padding,
                })
                .collect();
            let options = PackOptions {
                page_width: max + padding,
                page_height: max + padding,
                allow_rotation: rotate,
            };
            let cropped = |packer: &dyn Packer| {
                let packing = packer.pack(&grown, &options).expect("every sprite fits");
                let area: u64 = packing
                    .page_extents(&grown)
                    .iter()
                    .map(|e| {
                        u64::from(e.w.saturating_sub(padding))
                            * u64::from(e.h.saturating_sub(padding))
                    })
                    .sum();
                total as f64 / area as f64 * 100.0
            };
            let spec = AtlasSpec {
                max_size: max,
                padding,
                rotate,
                ..AtlasSpec::default()
            };
            let mut layout = None;
            let sample = Sample::of(runs, || {
                time(|| layout = Some(lay_out(&sizes, &spec, &MaxRects::default()).expect("fits")))
            });
            let layout = layout.expect("one run");
            let pages: u64 = layout.pages.iter().map(|p| p.area()).sum();
            let page = layout.pages[0];
            writeln!(
                out,
                "| {n} | {max} | {padding} | {} | {:.1}% | {:.1}% | {:.1}% | {}×{} ({} page) | {} |",
                if rotate { "on" } else { "off" },
                cropped(&MaxRects::default()),
                cropped(&Skyline),
                total as f64 / pages as f64 * 100.0,
                page.w,
                page.h,
                layout.pages.len(),
                sample.ms(),
            )
            .expect("write to String");
        }
    }
    out
}
