//! A parcel seen through a patch: what `cargo assets watch` gives a running
//! game after an edit.
//!
//! Rewriting a whole parcel for each saved sprite costs its full size (a
//! 1 GiB parcel, a second or more per save), and a parcel cannot be changed
//! in place while a game may have it mapped (see `mapped.rs`). So the
//! watcher writes a *patch* beside it, `<name>.parcel.patch`: an ordinary
//! parcel holding the resources that differ from the base parcel, and one
//! empty resource of kind [`KIND_REMOVED`] under the name of each resource
//! the base holds and the build no longer does. The patch always describes the difference from the base, never from
//! an earlier patch, so a game needs at most two files; when the watcher
//! goes idle (or a patch grows past a quarter of its base) it writes the
//! base again, byte for byte what `cargo assets build` writes, and removes
//! the patch. Unreal's patch paks and Godot's `load_resource_pack` with
//! `replace_files` layer packs the same way.
//!
//! A patch holds only the pages that changed: a frame it holds may lie on
//! a page of the base, and a page it replaces may hold frames of the base.
//! So it is validated as a parcel except for its sprites' and fonts' pages
//! (header flag [`FLAG_PATCH`](crate::format::FLAG_PATCH), [`Parcel::patch_from_bytes`]), and
//! [`Patched::new`] checks what joining the two makes: a removal mark is
//! empty; each frame of the patch lies inside its page, the patch's or the
//! base's; and where the patch replaces a page with a smaller one (or with
//! something else, or removes it), each frame of the base on that page
//! still lies inside it. Before this, a patch carried every page of each
//! atlas it touched, and an edit to a sprite on one page of a four-page
//! atlas wrote all four. Lookups try the patch first: a resource there
//! wins, a removal mark hides the base's, anything else is the base's.
//!
//! `include_parcel!` and build scripts never see patches: only the watcher
//! writes them, and only into the cache.

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::format::{KIND_REMOVED, KIND_SHADER};
use crate::id::ResourceId;
use crate::image::Image;
use crate::parcel::follow_alias;
use crate::sprite::SpriteFrame;
use crate::typed::{IdOf, kind};
use crate::{Animation, Font, Parcel, ParcelBuf, ParcelError, Resource, Sprite, Texture};

/// Where the watcher writes the patch of the parcel at `parcel`:
/// `<name>.parcel.patch` beside it.
pub fn path_of(parcel: &Path) -> PathBuf {
    parcel.with_extension("parcel.patch")
}

/// A parcel with an optional patch over it, borrowing both.
#[derive(Debug, Clone, Copy)]
pub struct Patched<'a> {
    base: Parcel<'a>,
    patch: Option<Parcel<'a>>,
}

impl<'a> Patched<'a> {
    /// `base` seen through `patch`. Fails if a removal mark of the patch
    /// holds bytes, or if a frame of either, seen through the patch, does
    /// not lie inside its page (see the module's docs).
    pub fn new(base: Parcel<'a>, patch: Option<Parcel<'a>>) -> Result<Patched<'a>, ParcelError> {
        let patched = Patched { base, patch };
        let Some(patch) = patch else {
            return Ok(patched);
        };
        if let Some(mark) = patch
            .iter()
            .find(|r| r.kind == KIND_REMOVED && !r.is_empty())
        {
            return Err(ParcelError::BadPatch {
                name: mark.name.to_owned(),
                what: "a removal mark holds bytes",
            });
        }
        patched.check_pages(base, patch)?;
        Ok(patched)
    }

    /// The checks of [`Patched::new`] on frames and pages. Validation
    /// checked the patch's frames on its own pages and the base's on
    /// the base's; what is left is the patch's frames on the base's
    /// pages, and the base's frames on pages the patch makes smaller (or
    /// takes away).
    fn check_pages(&self, base: Parcel<'a>, patch: Parcel<'a>) -> Result<(), ParcelError> {
        let fits = |r: &Resource<'_>, frame: &SpriteFrame| {
            let page = self
                .image(frame.page)
                .ok_or_else(|| ParcelError::BadPatch {
                    name: r.name.to_owned(),
                    what: "its page is an image resource of neither the patch nor its base",
                })?;
            if frame.fits_in(page.header.width, page.header.height) {
                Ok(())
            } else {
                Err(ParcelError::BadPatch {
                    name: r.name.to_owned(),
                    what: "its rectangle lies outside its page as the patch has it",
                })
            }
        };
        if patch.is_patch() {
            for r in patch.iter() {
                for frame in frames(&r).filter(|f| patch.find(f.page).is_none()) {
                    fits(&r, &frame)?;
                }
            }
        }
        let shrunk: HashSet<ResourceId> = patch
            .iter()
            .filter(|r| {
                base.find(r.id)
                    .and_then(|old| old.image())
                    .is_some_and(|old| {
                        r.image().is_none_or(|new| {
                            new.header.width < old.header.width
                                || new.header.height < old.header.height
                        })
                    })
            })
            .map(|r| r.id)
            .collect();
        if shrunk.is_empty() {
            return Ok(());
        }
        for r in base.iter().filter(|r| patch.find(r.id).is_none()) {
            for frame in frames(&r).filter(|f| shrunk.contains(&f.page)) {
                fits(&r, &frame)?;
            }
        }
        Ok(())
    }

    /// The base parcel.
    pub fn base(&self) -> Parcel<'a> {
        self.base
    }

    /// The patch, if there is one.
    pub fn patch(&self) -> Option<Parcel<'a>> {
        self.patch
    }

    /// The resource with `id`: the patch's, or none if the patch marks it
    /// removed, or the base's.
    pub fn get(&self, id: impl Into<ResourceId>) -> Option<Resource<'a>> {
        follow_alias(self.find(id.into())?, |id| self.find(id))
    }

    /// The entry with `id` through the patch, an alias not followed (an
    /// alias in the patch may stand for a resource of the base).
    fn find(&self, id: ResourceId) -> Option<Resource<'a>> {
        match self.patch.and_then(|p| p.find(id)) {
            Some(r) if r.kind == KIND_REMOVED => None,
            Some(r) => Some(r),
            None => self.base.find(id),
        }
    }

    // The typed lookups below repeat `Parcel`'s on purpose. Generated by one
    // macro for both, a game's wrong-kind id (`text(SPRITE)`) was reported
    // inside that macro instead of at its own call (the trybuild snapshot
    // of `tests/macro_errors.rs` showed it), and a trait would have to be
    // imported before any lookup compiles.

    /// The resource named `name`.
    pub fn by_name(&self, name: &str) -> Option<Resource<'a>> {
        let found = self.find(ResourceId::of_runtime(name))?;
        follow_alias((found.name == name).then_some(found)?, |id| self.find(id))
    }

    /// The resource that `uri`, written in the resource named `base`,
    /// refers to (see [`Parcel::by_uri`]).
    pub fn by_uri(&self, base: &str, uri: &str) -> Option<Resource<'a>> {
        self.by_name(&crate::uri::resolve(base, uri).ok()?)
    }

    fn require(&self, id: ResourceId) -> Result<Resource<'a>, ParcelError> {
        self.get(id).ok_or(ParcelError::Missing { id })
    }

    /// The bytes of resource `id` (see [`Parcel::bytes`]).
    pub fn bytes(&self, id: impl Into<ResourceId>) -> Result<Cow<'a, [u8]>, ParcelError> {
        self.require(id.into())?.bytes()
    }

    /// The text of resource `id` (see [`Parcel::text`]).
    pub fn text(&self, id: impl IdOf<kind::Text>) -> Result<Cow<'a, str>, ParcelError> {
        self.require(id.resource_id())?.text()
    }

    /// The source of shader `id` (see [`Parcel::shader`]).
    pub fn shader(&self, id: impl IdOf<kind::Shader>) -> Result<Cow<'a, str>, ParcelError> {
        let r = self.require(id.resource_id())?;
        if r.kind != KIND_SHADER {
            return Err(r.wrong_kind(KIND_SHADER));
        }
        r.text()
    }

    /// The image of resource `id` (see [`Parcel::image`]).
    pub fn image(&self, id: impl IdOf<kind::Image>) -> Option<Image<'a>> {
        self.get(id.resource_id())?.image()
    }

    /// The sprite `id` with its page, both looked up through the patch.
    pub fn sprite(&self, id: impl IdOf<kind::Sprite>) -> Option<Sprite<'a>> {
        let frame = self.get(id.resource_id())?.sprite_frame()?;
        let page = self.image(frame.page)?;
        Some(Sprite { frame, page })
    }

    /// The font `id` (see [`Parcel::font`]); read its glyphs' pages with
    /// [`Patched::image`].
    pub fn font(&self, id: impl IdOf<kind::Font>) -> Option<Font<'a>> {
        self.get(id.resource_id())?.font()
    }

    /// The animation `id` (see [`Parcel::animation`]); read its frames'
    /// pages with [`Patched::image`].
    pub fn animation(&self, id: impl IdOf<kind::Animation>) -> Option<Animation<'a>> {
        self.get(id.resource_id())?.animation()
    }

    /// The texture `id` (see [`Parcel::texture`]).
    pub fn texture(&self, id: impl IdOf<kind::Texture>) -> Option<Texture<'a>> {
        self.get(id.resource_id())?.texture()
    }

    /// Every resource, in id order: the patch's (removal marks aside) and
    /// the base's that the patch neither replaces nor removes.
    pub fn iter(&self) -> impl Iterator<Item = Resource<'a>> + use<'a> {
        let mut top = self.patch.into_iter().flat_map(|p| p.iter()).peekable();
        let mut under = self.base.iter().peekable();
        std::iter::from_fn(move || {
            loop {
                let next = match (top.peek(), under.peek()) {
                    (None, None) => return None,
                    (Some(_), None) => top.next(),
                    (None, Some(_)) => under.next(),
                    (Some(t), Some(u)) => {
                        if u.id < t.id {
                            under.next()
                        } else {
                            if u.id == t.id {
                                under.next();
                            }
                            top.next()
                        }
                    }
                };
                match next {
                    Some(r) if r.kind == KIND_REMOVED => continue,
                    other => return other,
                }
            }
        })
    }

    /// How many resources [`Patched::iter`] gives.
    pub fn len(&self) -> usize {
        match self.patch {
            None => self.base.len(),
            Some(_) => self.iter().count(),
        }
    }

    /// Whether it holds no resources.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The frames a resource places on pages: a sprite's, a font's glyphs' or
/// an animation's frames.
fn frames(r: &Resource<'_>) -> impl Iterator<Item = SpriteFrame> + use<> {
    let glyphs: Vec<SpriteFrame> = r.font().map(|f| f.frames().collect()).unwrap_or_default();
    let animated: Vec<SpriteFrame> = (r.animation())
        .map(|a| a.sprite_frames().collect())
        .unwrap_or_default();
    r.sprite_frame().into_iter().chain(glyphs).chain(animated)
}

/// A parcel and its patch, owned: what [`crate::reload::Notice::open`]
/// gives.
#[derive(Debug, Clone)]
pub struct PatchedBuf {
    base: ParcelBuf,
    patch: Option<ParcelBuf>,
}

impl PatchedBuf {
    /// Opens the parcel at `base` and, if given, the patch at `patch`, as
    /// [`ParcelBuf::open`] and [`ParcelBuf::open_patch`] do, and checks
    /// them together as [`Patched::new`] does.
    pub fn open(base: &Path, patch: Option<&Path>) -> Result<PatchedBuf, ParcelError> {
        PatchedBuf::new(
            ParcelBuf::open(base)?,
            patch.map(ParcelBuf::open_patch).transpose()?,
        )
    }

    /// `base` with `patch` over it, checked as [`Patched::new`] does.
    pub fn new(base: ParcelBuf, patch: Option<ParcelBuf>) -> Result<PatchedBuf, ParcelError> {
        Patched::new(base.parcel(), patch.as_ref().map(ParcelBuf::parcel))?;
        Ok(PatchedBuf { base, patch })
    }

    /// The parcel seen through the patch, without validating again.
    pub fn parcel(&self) -> Patched<'_> {
        Patched {
            base: self.base.parcel(),
            patch: self.patch.as_ref().map(ParcelBuf::parcel),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{KIND_IMAGE, KIND_SPRITE, KIND_TEXT};
    use crate::image::{Encoding, ImageHeader, PixelFormat};
    use crate::write::ParcelWriter;

    fn parcel(resources: &[(&str, &str, Vec<u8>)]) -> ParcelBuf {
        let mut w = ParcelWriter::new();
        for (name, kind, bytes) in resources {
            w.add(name, kind, bytes.clone());
        }
        ParcelBuf::from_vec(w.finish().unwrap()).unwrap()
    }

    /// A patch with the patch flag: its frames may lie on the base's pages.
    fn flagged(resources: &[(&str, &str, Vec<u8>)]) -> ParcelBuf {
        let mut w = ParcelWriter::new().patch();
        for (name, kind, bytes) in resources {
            w.add(name, kind, bytes.clone());
        }
        let bytes = w.finish().unwrap();
        assert_eq!(
            ParcelBuf::from_vec(bytes.clone()).unwrap_err(),
            ParcelError::IsPatch
        );
        let patch = Parcel::patch_from_bytes(&bytes).unwrap();
        assert!(patch.is_patch());
        ParcelBuf::patch_from_vec(bytes).unwrap()
    }

    fn text(s: &str) -> Vec<u8> {
        s.as_bytes().to_vec()
    }

    fn page(w: u32, fill: u8) -> Vec<u8> {
        let header = ImageHeader {
            width: w,
            height: 4,
            format: PixelFormat::Rgba8,
            encoding: Encoding::Raw,
        };
        let mut out = header.encode().to_vec();
        out.resize(out.len() + (w * 4 * 4) as usize, fill);
        out
    }

    fn frame(page: &str, page_w: u32) -> Vec<u8> {
        frame_of(page, page_w, 2)
    }

    /// A frame `w` pixels wide and two high at the corner of `page`.
    fn frame_of(page: &str, page_w: u32, w: u32) -> Vec<u8> {
        crate::SpriteFrame {
            page: ResourceId::of_runtime(page),
            page_index: 0,
            x: 0,
            y: 0,
            w,
            h: 2,
            rotated: false,
            trim_x: 0,
            trim_y: 0,
            source_width: 2,
            source_height: 2,
            uv: [0.0, 0.0, w as f32 / page_w as f32, 0.5],
        }
        .encode()
        .to_vec()
    }

    fn base() -> ParcelBuf {
        parcel(&[
            ("a.txt", KIND_TEXT, text("old a")),
            ("b.txt", KIND_TEXT, text("b")),
            ("gone.txt", KIND_TEXT, text("to be removed")),
            ("atlas:ui#0", KIND_IMAGE, page(4, 1)),
            ("hero.png", KIND_SPRITE, frame("atlas:ui#0", 4)),
        ])
    }

    fn names(p: Patched<'_>) -> Vec<String> {
        p.iter().map(|r| r.name.to_owned()).collect()
    }

    #[test]
    fn the_patch_replaces_adds_and_removes_and_the_base_shows_through() {
        let base = base();
        let patch = parcel(&[
            ("a.txt", KIND_TEXT, text("new a")),
            ("c.txt", KIND_TEXT, text("added")),
            ("gone.txt", KIND_REMOVED, Vec::new()),
        ]);
        let p = Patched::new(base.parcel(), Some(patch.parcel())).unwrap();
        assert_eq!(p.text(ResourceId::of("a.txt")).unwrap(), "new a");
        assert_eq!(p.text(ResourceId::of("b.txt")).unwrap(), "b");
        assert_eq!(p.text(ResourceId::of("c.txt")).unwrap(), "added");
        assert!(p.get(ResourceId::of("gone.txt")).is_none());
        assert!(matches!(
            p.bytes(ResourceId::of("gone.txt")),
            Err(ParcelError::Missing { .. })
        ));
        assert!(p.by_name("gone.txt").is_none());
        // A relative reference, as a model in the same folder writes it.
        assert_eq!(p.by_uri("model.gltf", "./c.txt").unwrap().name, "c.txt");
        assert!(p.by_uri("model.gltf", "gone.txt").is_none());
        // In id order, as a parcel iterates: every name once, marks hidden.
        let mut expected = vec!["a.txt", "atlas:ui#0", "b.txt", "c.txt", "hero.png"];
        expected.sort_by_key(|n| ResourceId::of_runtime(n));
        assert_eq!(names(p), expected);
        assert_eq!(p.len(), 5);
        assert_eq!(
            p.iter()
                .find(|r| r.name == "a.txt")
                .unwrap()
                .bytes()
                .unwrap(),
            &b"new a"[..]
        );
    }

    #[test]
    fn a_sprite_finds_its_page_through_the_patch() {
        let base = base();
        // A new page and a frame on it; then the page alone, as after an
        // edit that kept every sprite in place.
        let moved = parcel(&[
            ("atlas:ui#0", KIND_IMAGE, page(8, 2)),
            ("hero.png", KIND_SPRITE, frame("atlas:ui#0", 8)),
        ]);
        let p = Patched::new(base.parcel(), Some(moved.parcel())).unwrap();
        let hero = p.sprite(ResourceId::of("hero.png")).unwrap();
        assert_eq!(hero.page.header.width, 8);
        let repainted = parcel(&[("atlas:ui#0", KIND_IMAGE, page(4, 9))]);
        let p = Patched::new(base.parcel(), Some(repainted.parcel())).unwrap();
        let hero = p.sprite(ResourceId::of("hero.png")).unwrap();
        assert_eq!(hero.page.pixels().unwrap()[0], 9);
    }

    #[test]
    fn a_frame_of_the_patch_lies_on_a_page_of_the_base() {
        let base = base();
        // The sprite moved on a page that kept its size: only the frame.
        let patch = flagged(&[("hero.png", KIND_SPRITE, frame("atlas:ui#0", 4))]);
        assert!(
            patch.parcel().sprite(ResourceId::of("hero.png")).is_none(),
            "alone, it has no page"
        );
        let p = Patched::new(base.parcel(), Some(patch.parcel())).unwrap();
        let hero = p.sprite(ResourceId::of("hero.png")).unwrap();
        assert_eq!(hero.page.pixels().unwrap()[0], 1, "the base's page");

        let lost = flagged(&[("hero.png", KIND_SPRITE, frame("atlas:ui#9", 4))]);
        let error = Patched::new(base.parcel(), Some(lost.parcel())).unwrap_err();
        assert!(
            matches!(&error, ParcelError::BadPatch { name, .. } if name == "hero.png"),
            "{error}"
        );
    }

    #[test]
    fn a_page_the_patch_shrinks_or_removes_must_still_hold_the_bases_frames() {
        let base = base();
        // Wider: the base's frame still lies inside it.
        let wider = flagged(&[("atlas:ui#0", KIND_IMAGE, page(8, 3))]);
        let p = Patched::new(base.parcel(), Some(wider.parcel())).unwrap();
        assert_eq!(
            p.sprite(ResourceId::of("hero.png"))
                .unwrap()
                .page
                .header
                .width,
            8
        );
        // Narrower than the frame, removed, or no longer an image.
        for (name, patch) in [
            (
                "narrower",
                flagged(&[("atlas:ui#0", KIND_IMAGE, page(1, 3))]),
            ),
            (
                "removed",
                flagged(&[("atlas:ui#0", KIND_REMOVED, Vec::new())]),
            ),
            (
                "text",
                flagged(&[("atlas:ui#0", KIND_TEXT, text("no page"))]),
            ),
        ] {
            let error = Patched::new(base.parcel(), Some(patch.parcel())).unwrap_err();
            assert!(
                matches!(&error, ParcelError::BadPatch { name, .. } if name == "hero.png"),
                "{name}: {error}"
            );
        }
        // Narrower, with the frame made to fit what is left of it.
        let both = flagged(&[
            ("atlas:ui#0", KIND_IMAGE, page(1, 3)),
            ("hero.png", KIND_SPRITE, frame_of("atlas:ui#0", 1, 1)),
        ]);
        Patched::new(base.parcel(), Some(both.parcel())).unwrap();
    }

    #[test]
    fn a_flag_this_reader_does_not_know_is_refused() {
        let mut bytes = base().parcel().as_bytes().to_vec();
        bytes[12] = 2;
        for result in [Parcel::from_bytes(&bytes), Parcel::patch_from_bytes(&bytes)] {
            assert!(matches!(result, Err(ParcelError::BadHeader { .. })));
        }
    }

    #[test]
    fn without_a_patch_it_is_the_base() {
        let base = base();
        let p = Patched::new(base.parcel(), None).unwrap();
        assert_eq!(p.len(), base.parcel().len());
        assert_eq!(
            names(p),
            base.parcel().iter().map(|r| r.name).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_removal_mark_with_bytes_is_refused() {
        let base = base();
        let patch = parcel(&[("gone.txt", KIND_REMOVED, text("x"))]);
        let error = Patched::new(base.parcel(), Some(patch.parcel())).unwrap_err();
        assert!(matches!(error, ParcelError::BadPatch { ref name, .. } if name == "gone.txt"));
        assert!(error.to_string().contains("gone.txt"), "{error}");
    }

    #[test]
    fn files_open_as_the_notice_names_them() {
        let dir = tempfile::tempdir().unwrap();
        let (b, p) = (
            dir.path().join("m.parcel"),
            dir.path().join("m.parcel.patch"),
        );
        std::fs::write(&b, base().parcel().as_bytes()).unwrap();
        let patch = parcel(&[("b.txt", KIND_TEXT, text("new b"))]);
        std::fs::write(&p, patch.parcel().as_bytes()).unwrap();
        let opened = PatchedBuf::open(&b, Some(&p)).unwrap();
        assert_eq!(
            opened.parcel().text(ResourceId::of("b.txt")).unwrap(),
            "new b"
        );
        let alone = PatchedBuf::open(&b, None).unwrap();
        assert_eq!(alone.parcel().text(ResourceId::of("b.txt")).unwrap(), "b");
        assert!(matches!(
            PatchedBuf::open(&b, Some(&dir.path().join("missing"))),
            Err(ParcelError::Io { .. })
        ));
    }
}
