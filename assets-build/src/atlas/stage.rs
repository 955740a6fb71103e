//! The atlas step: packs every sprite of one atlas into pages.
//!
//! It is an ordinary step of the scheduler with a generated name,
//! `atlas:<name>`, planned after every asset, whose settings are the atlas's
//! settings plus the sorted list of its sprites. So:
//!
//! - adding or removing a sprite changes the step's key, and it reruns;
//!   renaming sprites changes it too, but when the renames keep the list's
//!   order the scheduler takes the last record over instead: the same
//!   contents in the same order pack the same (`scheduler/renames.rs`);
//! - each sprite is a dependency: a sprite whose cached pixels changed reruns
//!   the atlas, one touched but unchanged does not (early cutoff);
//! - the sprites are read back from the store, never decoded here, so a
//!   re-pack after one edit costs the packing and the page drawing only;
//! - in a watched pipeline, what is needed of a sprite to lay it out (its
//!   size and trim) and of a page to emit it (the hash of the output it
//!   made) are kept as facts, apart from the pixels and pages: when the
//!   memory cannot hold an atlas's pixels and pages (1M files: gigabytes),
//!   a re-pack still reads only the sprites on the pages it draws, and
//!   emits each other page by that hash, from the parcel holding it
//!   ([`Memo::held`], `Context::emit_held`);
//! - a sprite that failed takes its own last good pixels' place (the
//!   scheduler's stand-in) or, in a build that writes parcels anyway
//!   ([`crate::unstable::OnFailure::StandIn`]) and has none, leaves its slot empty:
//!   the other sprites are packed all the same.
//!
//! Outputs: pages labelled `0`, `1`, … (kind `image`, resources
//! `atlas:<name>#0`…), and `frames` (kind [`FRAMES_KIND`]): one 72-byte
//! [`SpriteFrame`] per member, in the order of the member list. The parcel
//! stage gives each sprite its frame as a resource named by its own path.
//!
//! A member may bring several sprites (a font its glyphs): it emits them
//! as one output labelled [`SPRITES_LABEL`] (kind [`SPRITE_SOURCES_KIND`])
//! beside its main output, which holds the tables that say what they are.
//! They are packed with the others, and the member's parcel resource is its
//! main output with each of its sprites' 72-byte frames appended, in order:
//! the atlas emits that as `member-<slot>` (of the main output's kind), and
//! its record in `frames` stays zero. That is how a font's glyphs share pages,
//! trimming and compression with the sprites (see `assets_runtime::font`).

use std::sync::Arc;

use assets_runtime::ResourceId;
use assets_runtime::format::KIND_IMAGE;
use assets_runtime::sprite::{SPRITE_LEN, SpriteFrame};
use serde::Deserialize;

use super::compose::draw_page;
use super::layout::{AtlasLayout, Frame, group_count, lay_out, lay_out_grouped};
use super::maxrects::MaxRects;
use super::pack::{Size, TooLarge};
use crate::hash::ContentHash;
use crate::manifest::{AtlasSpec, Encoding};
use crate::parallel;
use crate::processor::image::ImageResource;
use crate::processor::sprite_source::{SPRITE_SOURCES_KIND, SPRITES_LABEL, SpriteSource};
use crate::processor::context::{HeldOutput, Memo};
use crate::processor::{Context, DependencyOutputs, ProcessError, Processor};

/// Output kind of an atlas's frame table (an intermediate, never in a parcel).
pub const FRAMES_KIND: &str = "atlas-frames";
/// Label of the frame table output.
pub const FRAMES_LABEL: &str = "frames";

/// The settings of an atlas step, as the planner writes them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AtlasStepSettings {
    pub(crate) atlas: AtlasSpec,
    pub(crate) sprites: Vec<String>,
}

/// Packs the sprites of one atlas. Planned by the pipeline, never by rules.
#[derive(Debug, Clone, Copy)]
pub struct AtlasPacker;

impl Processor for AtlasPacker {
    type Settings = AtlasStepSettings;

    fn name(&self) -> &str {
        "atlas"
    }

    fn version(&self) -> u32 {
        // 2: pages compressed by default (lz4 in dev, zstd in release);
        // 3: LZ4 finds matches in pages under 64 KiB;
        // 4: the packer drops free rectangles too small for what is still
        //    to come, so of two equally good places another may be first;
        // 5: an atlas of more than a few pages is laid out in groups;
        // 6: pages compressed in pieces on every core, joined (`lz4_pieces`)
        6
    }

    fn process(
        &self,
        ctx: &mut Context<'_>,
        settings: AtlasStepSettings,
    ) -> Result<(), ProcessError> {
        let spec = &settings.atlas;
        // A sprite that failed leaves its slot empty (see
        // `Context::dependency_if_built`): the others are still packed.
        let dependencies = settings
            .sprites
            .iter()
            .map(|s| ctx.dependency_if_built(s))
            .collect::<Result<Vec<_>, _>>()?;
        let memo = ctx.memo();
        let members = read_members(&dependencies, memo)?;
        // Every sprite of every member, in member order; `owner[i]` is the
        // member sprite `i` came from.
        let geometry: Vec<&Geometry> = members.iter().flat_map(|m| m.geometry.iter()).collect();
        let owner: Vec<usize> = (members.iter().enumerate())
            .flat_map(|(i, m)| std::iter::repeat_n(i, m.geometry.len()))
            .collect();
        let sizes: Vec<Size> = geometry
            .iter()
            .map(|g| Size {
                w: g.width,
                h: g.height,
            })
            .collect();
        let name = ctx.asset().to_string();
        // The layout is a function of the sizes and the settings alone: a
        // watched re-pack after an edit that kept every size (a sprite
        // redrawn in place) takes it from memory, so every sprite keeps its
        // place without packing again.
        // A large atlas is laid out in groups (see `layout.rs`), each
        // remembered on its own: a sprite that changed size re-packs its
        // group only.
        let groups = group_count(&sizes, spec);
        let group_of: Vec<u32> = owner
            .iter()
            .map(|&m| group_of(&settings.sprites[m], groups))
            .collect();
        let layout = lay_out_grouped(&group_of, groups, |indices| {
            let group: Vec<Size> = indices.iter().map(|&i| sizes[i]).collect();
            memo.fact_or(
                &layout_key(&group, spec),
                || {
                    lay_out(&group, spec, &MaxRects::default()).map_err(|e| {
                        let e = TooLarge {
                            index: indices[e.index],
                            ..e
                        };
                        too_large(&settings, &owner, &sizes, &name, e)
                    })
                },
                |l| l.frames.len() * std::mem::size_of::<super::layout::Frame>(),
            )
        })?;
        let encoding = spec
            .encoding
            .unwrap_or_else(|| Encoding::default_for(ctx.variant()));
        // Each page is drawn, compressed and hashed once for what it holds:
        // a watched re-pack after an edit takes every page whose sprites
        // kept their places from memory, as the last build made it, and
        // emits it as it is kept (not copied, not hashed again); or, when
        // the memory no longer has its bytes, by the hash of the output it
        // made, which the store still holds.
        let identities: Vec<(ContentHash, usize)> = (members.iter())
            .flat_map(|m| (0..m.geometry.len()).map(|k| (m.hash, k)))
            .collect();
        let indices: Vec<u32> = (0..layout.pages.len() as u32).collect();
        // Each page's sprites, in order: a page's key hashes only its own
        // (each key used to walk every frame: 180 pages × 137,000 at 1M).
        let mut on_page: Vec<Vec<usize>> = vec![Vec::new(); layout.pages.len()];
        for (i, f) in layout.frames.iter().enumerate() {
            if f.w > 0 && f.h > 0 {
                on_page[f.page as usize].push(i);
            }
        }
        let keys = parallel::map(&indices, |&i| {
            page_key(&layout, i, &on_page[i as usize], &identities, spec, encoding)
        });
        // Every kept page is looked up before any is drawn: drawing one
        // may make room in the memory by dropping what this build has not
        // used yet, which would be the kept pages still to be looked up
        // (at 1M files half of a 190-page atlas was drawn again that way
        // on every edit, where a re-packed group is three pages).
        let kept: Vec<_> = keys.iter().map(|key| memo.kept(key)).collect();
        let held: Vec<Option<HeldOutput>> = (keys.iter().zip(&kept))
            .map(|(key, kept)| match kept {
                Some(_) => None,
                None => memo.held(key),
            })
            .collect();
        // The pixels of the sprites on the pages to draw, and only those.
        let mut needed = vec![false; members.len()];
        for (i, pages) in on_page.iter().enumerate() {
            if kept[i].is_none() && held[i].is_none() {
                for &s in pages {
                    needed[owner[s]] = true;
                }
            }
        }
        let pixels = read_pixels(&members, &needed)?;
        let sources: Vec<Option<&SpriteSource>> = (members.iter().zip(&pixels))
            .flat_map(|(m, p)| {
                (0..m.geometry.len()).map(move |k| p.as_ref().and_then(|p| p.get(k)))
            })
            .collect();
        let pages = parallel::map(&indices, |&i| {
            let key = &keys[i as usize];
            if let Some(held) = held[i as usize] {
                return Ok::<_, ProcessError>(Page::Held(held));
            }
            let made = match &kept[i as usize] {
                Some(page) => Arc::clone(page),
                None => memo.remembered(
                    key,
                    || {
                        let size = layout.pages[i as usize];
                        let buffers = memo.buffers();
                        let mut page = ImageResource::new_in(size.w, size.h, buffers);
                        let sprites = on_page[i as usize].iter().map(|&s| {
                            let source = sources[s].expect("a page drawn has its sprites read");
                            (&layout.frames[s], source)
                        });
                        draw_page(size, sprites, spec.extrude, page.pixels_mut());
                        let bytes = page.finish_in(spec.premultiply, encoding, Some(buffers))?;
                        let hash = ContentHash::of(&bytes);
                        Ok((Arc::new(bytes), hash))
                    },
                    |(bytes, _)| bytes.len(),
                )?,
            };
            let (bytes, hash) = &*made;
            let size = bytes.len() as u64;
            memo.keep_held(*key, HeldOutput { hash: *hash, size });
            Ok(Page::Made(made))
        });
        for (i, page) in pages.into_iter().enumerate() {
            let label = i.to_string();
            match page? {
                Page::Made(made) => {
                    let (bytes, hash) = &*made;
                    ctx.emit_shared(&label, KIND_IMAGE, Arc::clone(bytes), *hash)?;
                }
                Page::Held(held) => ctx.emit_held(&label, KIND_IMAGE, held)?,
            }
        }
        let mut frames = layout.frames.iter().zip(&geometry).map(|(frame, g)| {
            sprite_frame(&name, layout.pages[frame.page as usize], frame, g).encode()
        });
        let mut table = Vec::with_capacity(members.len() * SPRITE_LEN);
        for (slot, member) in members.iter().enumerate() {
            match &member.brings {
                Brings::Nothing => table.extend([0; SPRITE_LEN]),
                Brings::One => table.extend(frames.next().expect("one frame per sprite")),
                Brings::Several(kind, tables) => {
                    table.extend([0; SPRITE_LEN]);
                    let mut resource = tables.clone();
                    for frame in frames.by_ref().take(member.geometry.len()) {
                        resource.extend(frame);
                    }
                    ctx.emit_labeled(&member_label(slot), kind, resource)?;
                }
            }
        }
        ctx.emit_labeled(FRAMES_LABEL, FRAMES_KIND, table)
    }
}

/// The label of the atlas output holding the resource of the member at
/// `slot` that brought several sprites: its main output with their frames.
pub(crate) fn member_label(slot: usize) -> String {
    format!("member-{slot}")
}

/// Where one sprite lies, as the parcel stores it.
fn sprite_frame(atlas: &str, page: Size, frame: &Frame, sprite: &Geometry) -> SpriteFrame {
    let (pw, ph) = (page.w as f32, page.h as f32);
    SpriteFrame {
        page: ResourceId::of_runtime(&format!("{atlas}#{}", frame.page)),
        page_index: frame.page,
        x: frame.x,
        y: frame.y,
        w: frame.w,
        h: frame.h,
        rotated: frame.rotated,
        trim_x: sprite.trim_x,
        trim_y: sprite.trim_y,
        source_width: sprite.source_width,
        source_height: sprite.source_height,
        uv: [
            frame.x as f32 / pw,
            frame.y as f32 / ph,
            (frame.x + frame.w) as f32 / pw,
            (frame.y + frame.h) as f32 / ph,
        ],
    }
}

/// A sprite without its pixels: what its place and frame depend on. A
/// watched pipeline keeps each member's as a fact ([`Memo::fact`]), so a
/// re-pack reads the pixels of the sprites on the pages it draws only.
#[derive(Debug, Clone, Copy)]
struct Geometry {
    /// The kept pixels' size.
    width: u32,
    height: u32,
    /// Where they were cut from the image as authored, and its size.
    trim_x: u32,
    trim_y: u32,
    source_width: u32,
    source_height: u32,
}

impl Geometry {
    fn of(s: &SpriteSource) -> Geometry {
        Geometry {
            width: s.width,
            height: s.height,
            trim_x: s.trim_x,
            trim_y: s.trim_y,
            source_width: s.source_width,
            source_height: s.source_height,
        }
    }
}

/// One member of the atlas, as its step reads it.
struct Member<'d> {
    /// Its sprites' sizes and trims: from a watched pipeline's facts when
    /// they are there, else from the pixels, read for them.
    geometry: Arc<Vec<Geometry>>,
    /// Its sprites' pixels, if they were read for the geometry. Shared
    /// with a watched pipeline's memory, which keeps them for the next
    /// re-pack (see `Store::decoded`).
    pixels: Option<Arc<Vec<SpriteSource>>>,
    /// Where the pixels are read from: the member's outputs and the label
    /// of its sprites (`None` for a member that failed).
    from: Option<(&'d DependencyOutputs<'d>, &'static str)>,
    /// The hash of the output the sprites are read from: it names their
    /// pixels (see [`page_key`]), and their geometry.
    hash: ContentHash,
    brings: Brings,
}

/// A page the step emits: made (drawn now, or kept in memory), or held by
/// the store from the build that drew it.
enum Page {
    Made(Arc<(Arc<Vec<u8>>, ContentHash)>),
    Held(HeldOutput),
}

/// What a member's slot in the frame table and resources holds.
enum Brings {
    /// One sprite: the slot holds its frame.
    One,
    /// Several sprites and the tables their frames complete (the member's
    /// main output, of this kind): the slot stays zero, and the atlas
    /// emits the completed resource.
    Several(String, Vec<u8>),
    /// Nothing: the member failed (the slot stays zero, and the parcel
    /// goes without it).
    Nothing,
}

/// The error for sprites that fit no page: every one of them, so that one
/// build shows all there is to fix. `first` is the one the packer hit.
fn too_large(
    settings: &AtlasStepSettings,
    owner: &[usize],
    sizes: &[Size],
    name: &str,
    first: TooLarge,
) -> ProcessError {
    let spec = &settings.atlas;
    // Each sprite on its own tells whether it fits (only on this error path).
    let mut oversized: Vec<usize> = (0..sizes.len())
        .filter(|&i| lay_out(&sizes[i..=i], spec, &MaxRects::default()).is_err())
        .collect();
    if oversized.is_empty() {
        oversized.push(first.index);
    }
    let describe = |i: usize| {
        format!(
            "sprite `{}` is {}x{} pixels (after trimming)",
            settings.sprites[owner[i]], sizes[i].w, sizes[i].h
        )
    };
    let mut list: Vec<String> = oversized.iter().take(10).map(|&i| describe(i)).collect();
    if oversized.len() > 10 {
        list.push(format!("{} more", oversized.len() - 10));
    }
    let list = match list.as_slice() {
        [one] => format!("{one} and does not fit"),
        [rest @ .., last] => format!("{}, and {last}; none of them fits", rest.join(", ")),
        [] => unreachable!("at least one sprite is listed"),
    };
    let turned = if spec.rotate {
        ""
    } else {
        ", or set `rotate = true` if they fit turned"
    };
    ProcessError::msg(format!(
        "{list} a {}x{} page of `{name}`; \
         raise `max-size` in [package.metadata.assets.atlases.{}] (at most 16384){turned}, or make the sprite smaller",
        first.page.w,
        first.page.h,
        name.trim_start_matches("atlas:"),
    ))
}

/// Reads what each member is, on every core: the atlas step often runs
/// alone at the end of a build, and thousands of small reads are most of
/// its time after an edit. A member's geometry comes from a watched
/// pipeline's facts when they have it; else its pixels are read (and kept
/// by that pipeline, which then decodes only the edited sprite in a
/// re-pack).
fn read_members<'d>(
    dependencies: &'d [Option<DependencyOutputs<'d>>],
    memo: Memo<'_>,
) -> Result<Vec<Member<'d>>, ProcessError> {
    let indices: Vec<usize> = (0..dependencies.len()).collect();
    let mut members = parallel::map(&indices, |&i| member(dependencies[i].as_ref()))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    // Looked up together: one lock, where one a member on every core cost
    // more than the lookups (137,000 members at 1M files).
    let hashes: Vec<ContentHash> = members.iter().map(|m| m.hash).collect();
    let known = memo.facts::<Vec<Geometry>>(&hashes);
    let read = parallel::map(&indices, |&i| match (&known[i], members[i].from) {
        (Some(geometry), _) => Ok::<_, ProcessError>((Arc::clone(geometry), None)),
        (None, Some((d, label))) => {
            let pixels = decode(d, label)?;
            let geometry: Arc<Vec<Geometry>> = Arc::new(pixels.iter().map(Geometry::of).collect());
            let size = 64 + geometry.len() * std::mem::size_of::<Geometry>();
            memo.keep_fact(hashes[i], Arc::clone(&geometry), size);
            Ok((geometry, Some(pixels)))
        }
        (None, None) => Ok((Arc::default(), None)),
    });
    for (m, read) in members.iter_mut().zip(read) {
        (m.geometry, m.pixels) = read?;
    }
    Ok(members)
}

/// What member `d` is, from its record (`None`: it failed), its geometry
/// and pixels not read yet.
fn member<'d>(d: Option<&'d DependencyOutputs<'d>>) -> Result<Member<'d>, ProcessError> {
    let Some(d) = d else {
        return Ok(Member {
            geometry: Arc::default(),
            pixels: None,
            from: None,
            hash: ContentHash::from_bytes([0; 32]),
            brings: Brings::Nothing,
        });
    };
    let several = d
        .outputs()
        .iter()
        .any(|o| o.label == SPRITES_LABEL && o.kind == SPRITE_SOURCES_KIND);
    let label = if several { SPRITES_LABEL } else { "" };
    let hash = (d.outputs().iter())
        .find(|o| o.label == label)
        .map(|o| o.hash)
        .ok_or_else(|| ProcessError::msg("an atlas member has no main output"))?;
    let brings = if several {
        let kind = (d.outputs().iter())
            .find(|o| o.label.is_empty())
            .map(|o| o.kind.clone())
            .ok_or_else(|| {
                ProcessError::msg("an atlas member with several sprites has no main output")
            })?;
        Brings::Several(kind, d.bytes("")?)
    } else {
        Brings::One
    };
    Ok(Member {
        geometry: Arc::default(),
        pixels: None,
        from: Some((d, label)),
        hash,
        brings,
    })
}

/// Each member's pixels where `needed` says so (on every core), read if
/// [`read_members`] did not read them already; `None` for the others.
fn read_pixels(
    members: &[Member<'_>],
    needed: &[bool],
) -> Result<Vec<Option<Arc<Vec<SpriteSource>>>>, ProcessError> {
    let indices: Vec<usize> = (0..members.len()).collect();
    parallel::map(&indices, |&i| {
        let m = &members[i];
        match (&m.pixels, m.from) {
            (Some(pixels), _) => Ok(Some(Arc::clone(pixels))),
            (None, Some((d, label))) if needed[i] => {
                let pixels = decode(d, label)?;
                // The geometry kept is the pixels': both come from the
                // bytes one hash names.
                if pixels.len() != m.geometry.len() {
                    return Err(ProcessError::msg("cached sprite list is malformed"));
                }
                Ok(Some(pixels))
            }
            (None, _) => Ok(None),
        }
    })
    .into_iter()
    .collect()
}

/// The sprites of a member's output labelled `label` (its one sprite, or
/// its list), decoded; kept by a watched pipeline's memory.
fn decode(d: &DependencyOutputs<'_>, label: &str) -> Result<Arc<Vec<SpriteSource>>, ProcessError> {
    if label == SPRITES_LABEL {
        d.decoded(label, SpriteSource::decode_list, |s| pixel_bytes(s))
    } else {
        d.decoded(label, |b| Ok(vec![SpriteSource::decode(b)?]), |s| pixel_bytes(s))
    }
}

/// A name for page `page`'s bytes as this step makes them: a hash of
/// everything they are made from, so that a page whose sprites kept their
/// places (and pixels) is not drawn and compressed again (see
/// `Memo::remembered`). `identities` names each sprite's pixels (the hash
/// of the output it came from, and its place in it), in frame order; the
/// step's version stands for the drawing and compressing code.
/// The group (below `groups`) of the member named `name`: a hash of the
/// name, so a member keeps its group whatever else the atlas holds.
fn group_of(name: &str, groups: u32) -> u32 {
    if groups <= 1 {
        return 0;
    }
    let h = blake3::hash(name.as_bytes());
    let n = u64::from_le_bytes(h.as_bytes()[..8].try_into().expect("8 bytes"));
    (n % u64::from(groups)) as u32
}

/// What names a layout: the packer's version, the atlas's settings, and
/// every sprite's (trimmed) size in order.
fn layout_key(sizes: &[Size], spec: &AtlasSpec) -> ContentHash {
    let mut h = blake3::Hasher::new_derive_key("cargo-assets atlas layout 1");
    h.update(&AtlasPacker.version().to_le_bytes());
    h.update(&serde_json::to_vec(spec).expect("atlas settings serialize"));
    for s in sizes {
        h.update(&s.w.to_le_bytes());
        h.update(&s.h.to_le_bytes());
    }
    h.finalize().into()
}

/// What names a page's bytes: its size, the settings that draw it, and
/// where each sprite on it (`on_page`, their indices) lies and what pixels
/// it brings.
fn page_key(
    layout: &AtlasLayout,
    page: u32,
    on_page: &[usize],
    identities: &[(ContentHash, usize)],
    spec: &AtlasSpec,
    encoding: Encoding,
) -> ContentHash {
    let mut h = blake3::Hasher::new_derive_key("cargo-assets atlas page 1");
    let size = layout.pages[page as usize];
    h.update(&AtlasPacker.version().to_le_bytes());
    for n in [size.w, size.h, spec.extrude] {
        h.update(&n.to_le_bytes());
    }
    h.update(&[u8::from(spec.premultiply)]);
    h.update(
        assets_runtime::image::Encoding::from(encoding)
            .name()
            .as_bytes(),
    );
    for &i in on_page {
        let (frame, (hash, k)) = (&layout.frames[i], &identities[i]);
        for n in [frame.x, frame.y, frame.w, frame.h] {
            h.update(&n.to_le_bytes());
        }
        h.update(&[u8::from(frame.rotated)]);
        h.update(hash.as_bytes());
        h.update(&(*k as u64).to_le_bytes());
    }
    h.finalize().into()
}

/// What decoded sprites hold, as a watched pipeline counts what it keeps.
fn pixel_bytes(sprites: &[SpriteSource]) -> usize {
    sprites.iter().map(|s| s.pixels.len() + 64).sum()
}
