//! The `animation` resource: a sequence of frames, each a sprite in an
//! atlas page with a duration and maybe a name, and named tags (`walk`,
//! `attack`) that say which frames play, in which direction, how many
//! times.
//!
//! The `aseprite` processor makes one from an `.aseprite` file: each frame
//! flattened as Aseprite flattens its visible layers, packed into the atlas
//! with the sprites (so pages, trimming and compression are the atlas's),
//! and the file's tags. The `sheet` processor makes one from a sprite
//! sheet exported as JSON (Aseprite's, TexturePacker's), whose frames are
//! named. The resource is named by the source file's asset path:
//!
//! ```text
//! offset     size  field
//!      0        4  magic "AANM"
//!      4        2  layout version, 1
//!      6        2  flags: zero
//!      8        4  F: frames (at least 1)
//!     12        4  T: tags
//!     16        4  N: bytes of names
//!     20        8  canvas width, height: every frame's size as authored
//!     28        4  zero
//!     32    F × 8  frames: duration in milliseconds, where its name ends
//!                  in the names (u32 each; `""` for an unnamed frame)
//!      …   T × 16  tags, as authored: first frame, last frame (u32, first
//!                  <= last < F), direction (u8: 0 forward, 1 reverse,
//!                  2 ping-pong, 3 ping-pong reverse), a zero byte, repeat
//!                  (u16, 0 = forever), where its name ends in the names
//!      …        N  the names, UTF-8, one after another: the frames', then
//!                  the tags'; each starts where the one before ends
//!      …   F × 72  each frame's sprite frame ([`crate::sprite`] layout)
//! ```
//!
//! **Drawing a frame.** A frame is trimmed like any sprite: draw it at its
//! trim offset inside a `width × height` box ([`AnimationFrame::sprite`]),
//! and the frames of one animation line up as they did in the editor.
//!
//! **Playing.** [`Animation::frame_at`] says which frame a tag shows after
//! some time, as Aseprite plays it: a pass runs the tag's frames once in
//! its direction; ping-pong passes alternate direction and show the frame
//! they turn on once; `repeat` passes play, then the last frame shown
//! stays. [`Animation::whole`] plays every frame forward, forever.
//!
//! A parcel is rejected at open if an animation's tables are inconsistent
//! or a frame's page is missing or does not contain it, so
//! [`crate::Parcel::animation`] never fails for an animation id, and
//! nothing here panics on any bytes.

use std::time::Duration;

use crate::format::{tables_len, u16_at, u32_at};
use crate::sprite::{SPRITE_LEN, SpriteFrame};

/// Magic bytes of an animation resource.
pub const ANIMATION_MAGIC: [u8; 4] = *b"AANM";
const HEADER_LEN: usize = 32;
const FRAME_LEN: usize = 8;
const TAG_LEN: usize = 16;

/// Which way a tag's frames play.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// First to last.
    Forward,
    /// Last to first.
    Reverse,
    /// First to last, then back; each way is one pass.
    PingPong,
    /// Last to first, then back; each way is one pass.
    PingPongReverse,
}

impl Direction {
    /// The byte the layout stores it as.
    pub fn code(self) -> u8 {
        match self {
            Direction::Forward => 0,
            Direction::Reverse => 1,
            Direction::PingPong => 2,
            Direction::PingPongReverse => 3,
        }
    }

    fn from_code(code: u8) -> Option<Direction> {
        Some(match code {
            0 => Direction::Forward,
            1 => Direction::Reverse,
            2 => Direction::PingPong,
            3 => Direction::PingPongReverse,
            _ => return None,
        })
    }
}

/// A named run of frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tag<'a> {
    /// Its name as authored (`""` for [`Animation::whole`]).
    pub name: &'a str,
    /// Its first frame.
    pub from: u32,
    /// Its last frame (`>= from`).
    pub to: u32,
    /// Which way it plays.
    pub direction: Direction,
    /// How many passes play before it stops on its last frame shown; 0
    /// plays forever.
    pub repeat: u16,
}

impl Tag<'_> {
    /// How many frames it spans.
    pub fn len(&self) -> u32 {
        self.to - self.from + 1
    }

    /// Never: a tag spans at least one frame.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The frame it shows `elapsed` after it started, with `duration`
    /// giving each frame's milliseconds: [`Animation::frame_at`], for a
    /// game that keeps the durations itself (an engine's own asset).
    pub fn frame_at(&self, elapsed: Duration, duration: impl Fn(u32) -> u32) -> u32 {
        let duration = |f: u32| u64::from(duration(f));
        if self.from > self.to {
            return self.from;
        }
        let (period_len, shown) = self.lengths();
        let period_ms: u64 = self.period().map(duration).sum();
        let start = self.period().next().unwrap_or(self.from);
        if period_ms == 0 {
            return start;
        }
        let mut t = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
        if let Some(shown) = shown {
            // Past the last pass: the last frame shown stays.
            let (whole, rest) = (shown / period_len, shown % period_len);
            let rest_ms: u64 = self.period().take(rest as usize).map(duration).sum();
            let total = whole.saturating_mul(period_ms).saturating_add(rest_ms);
            if t >= total {
                let last = (shown - 1) % period_len;
                return self.period().nth(last as usize).unwrap_or(start);
            }
        }
        t %= period_ms;
        for f in self.period() {
            let d = duration(f);
            if t < d {
                return f;
            }
            t -= d;
        }
        start
    }

    /// The frames it shows, one period of their cycle: a pass, or for
    /// ping-pong a pass each way without repeating the frames it turns on.
    fn period(&self) -> impl Iterator<Item = u32> + '_ {
        let (from, to) = (self.from, self.to);
        let up = from..=to;
        let down = (from..=to).rev();
        // Back again, without either end.
        let back_down = (from + 1..to).rev();
        let back_up = from + 1..to;
        let (first, second): (Box<dyn Iterator<Item = u32>>, Box<dyn Iterator<Item = u32>>) =
            match self.direction {
                Direction::Forward => (Box::new(up), Box::new(std::iter::empty())),
                Direction::Reverse => (Box::new(down), Box::new(std::iter::empty())),
                Direction::PingPong => (Box::new(up), Box::new(back_down)),
                Direction::PingPongReverse => (Box::new(down), Box::new(back_up)),
            };
        first.chain(second)
    }

    /// How many frames one period holds, and how many frames `repeat`
    /// passes show (`None` for forever).
    fn lengths(&self) -> (u64, Option<u64>) {
        let n = u64::from(self.len());
        let ping_pong = matches!(
            self.direction,
            Direction::PingPong | Direction::PingPongReverse
        );
        let period = if ping_pong {
            (2 * n).saturating_sub(2).max(1)
        } else {
            n
        };
        let passes = u64::from(self.repeat);
        let shown = match (self.repeat, ping_pong) {
            (0, _) => None,
            (_, false) => Some(passes * n),
            // The first pass shows every frame, each later one all but the
            // frame it turns on.
            (_, true) => Some(1 + passes * (n - 1)),
        };
        (period, shown)
    }
}

/// One frame: where its pixels lie, how long it shows, what it is called.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnimationFrame<'a> {
    /// Its name in a sheet (`"hero_walk_01.png"`); `""` for an Aseprite
    /// file's frames.
    pub name: &'a str,
    /// How long it shows, in milliseconds.
    pub duration_ms: u32,
    /// Where its pixels lie; its source size is the animation's canvas.
    pub sprite: SpriteFrame,
}

/// A validated animation resource. See the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Animation<'a> {
    bytes: &'a [u8],
    frames: usize,
    tags: usize,
    names: usize,
}

impl<'a> Animation<'a> {
    /// Parses and checks an animation resource's bytes: lengths, tags in
    /// range with UTF-8 names, well-formed frames. Whether each frame's page
    /// exists is the parcel's check (see [`Animation::sprite_frames`]).
    pub fn parse(bytes: &'a [u8]) -> Option<Animation<'a>> {
        if bytes.len() < HEADER_LEN || bytes[..4] != ANIMATION_MAGIC || u16_at(bytes, 4) != 1 {
            return None;
        }
        if u16_at(bytes, 6) != 0 || u32_at(bytes, 28) != 0 {
            return None;
        }
        let (frames, tags, names) = (
            u32_at(bytes, 8) as usize,
            u32_at(bytes, 12) as usize,
            u32_at(bytes, 16) as usize,
        );
        let len = tables_len(
            HEADER_LEN,
            &[
                (frames, FRAME_LEN + SPRITE_LEN),
                (tags, TAG_LEN),
                (names, 1),
            ],
        )?;
        if frames == 0 || len != bytes.len() {
            return None;
        }
        let animation = Animation {
            bytes,
            frames,
            tags,
            names,
        };
        // Names end in order, the last where the names do.
        let mut last = 0;
        for i in 0..frames + tags {
            let end = animation.name_end(i);
            if end < last || end > names {
                return None;
            }
            last = end;
        }
        if last != names {
            return None;
        }
        let tags_ok = (0..tags).all(|t| animation.tag_at(t).is_some());
        let frames_ok = (0..frames).all(|f| animation.frame(f).is_some());
        (tags_ok && frames_ok).then_some(animation)
    }

    /// Every frame's size as authored, `(width, height)`.
    pub fn canvas(&self) -> (u32, u32) {
        (u32_at(self.bytes, 20), u32_at(self.bytes, 24))
    }

    /// How many frames.
    pub fn frame_count(&self) -> usize {
        self.frames
    }

    /// Frame `index`, if there is one.
    pub fn frame(&self, index: usize) -> Option<AnimationFrame<'a>> {
        if index >= self.frames {
            return None;
        }
        let at = self.sprites_at() + index * SPRITE_LEN;
        Some(AnimationFrame {
            name: self.name(index)?,
            duration_ms: self.duration(index),
            sprite: SpriteFrame::parse(self.bytes.get(at..at + SPRITE_LEN)?)?,
        })
    }

    /// The index of the first frame named `name`, if there is one.
    pub fn frame_named(&self, name: &str) -> Option<usize> {
        (0..self.frames).find(|&f| self.name(f) == Some(name))
    }

    /// Every frame, in order.
    pub fn frames(&self) -> impl Iterator<Item = AnimationFrame<'a>> + '_ {
        (0..self.frames).filter_map(|f| self.frame(f))
    }

    /// Every frame's sprite frame: what a parcel checks against its pages.
    pub fn sprite_frames(&self) -> impl Iterator<Item = SpriteFrame> + '_ {
        self.frames().map(|f| f.sprite)
    }

    /// The tags, in the order they were authored.
    pub fn tags(&self) -> impl Iterator<Item = Tag<'a>> + '_ {
        (0..self.tags).filter_map(|t| self.tag_at(t))
    }

    /// The first tag named `name`, if there is one.
    pub fn tag(&self, name: &str) -> Option<Tag<'a>> {
        self.tags().find(|t| t.name == name)
    }

    /// Every frame, forward, forever: the animation without its tags.
    pub fn whole(&self) -> Tag<'static> {
        Tag {
            name: "",
            from: 0,
            to: self.frames as u32 - 1,
            direction: Direction::Forward,
            repeat: 0,
        }
    }

    /// The frame `tag` (one of this animation's, or [`Animation::whole`])
    /// shows `elapsed` after it started (see the [module docs](self)).
    /// A tag whose frames all last zero shows its first frame.
    pub fn frame_at(&self, tag: &Tag<'_>, elapsed: Duration) -> u32 {
        if tag.to as usize >= self.frames {
            return 0;
        }
        tag.frame_at(elapsed, |f| self.duration(f as usize))
    }

    fn tag_at(&self, t: usize) -> Option<Tag<'a>> {
        let at = self.tags_at() + t * TAG_LEN;
        let b = self.bytes;
        let (from, to) = (u32_at(b, at), u32_at(b, at + 4));
        if from > to || to as usize >= self.frames || b[at + 9] != 0 {
            return None;
        }
        let direction = Direction::from_code(b[at + 8])?;
        Some(Tag {
            name: self.name(self.frames + t)?,
            from,
            to,
            direction,
            repeat: u16_at(b, at + 10),
        })
    }

    fn duration(&self, f: usize) -> u32 {
        u32_at(self.bytes, HEADER_LEN + f * FRAME_LEN)
    }

    /// Where name `i` ends: frames' names first, then tags'.
    fn name_end(&self, i: usize) -> usize {
        let at = match i.checked_sub(self.frames) {
            None => HEADER_LEN + i * FRAME_LEN + 4,
            Some(t) => self.tags_at() + t * TAG_LEN + 12,
        };
        u32_at(self.bytes, at) as usize
    }

    /// Name `i` (frames' first, then tags'), if it is UTF-8 (checked at
    /// parse for every name that matters).
    fn name(&self, i: usize) -> Option<&'a str> {
        let start = i.checked_sub(1).map_or(0, |p| self.name_end(p));
        let end = self.name_end(i);
        let names_at = self.tags_at() + self.tags * TAG_LEN;
        let bytes: &'a [u8] = self.bytes;
        std::str::from_utf8(bytes.get(names_at + start..names_at.checked_add(end)?)?).ok()
    }

    fn tags_at(&self) -> usize {
        HEADER_LEN + self.frames * FRAME_LEN
    }

    fn sprites_at(&self) -> usize {
        self.tags_at() + self.tags * TAG_LEN + self.names
    }
}

/// The writer's half: the `aseprite` processor writes the tables, the atlas
/// adds the frames (behind the `write` feature).
#[cfg(feature = "write")]
pub mod write {
    use super::{ANIMATION_MAGIC, Direction};

    /// One tag, as the processor read it.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct TagSpec {
        /// Its name.
        pub name: String,
        /// Its first frame.
        pub from: u32,
        /// Its last frame.
        pub to: u32,
        /// Which way it plays.
        pub direction: Direction,
        /// Passes to play; 0 for forever.
        pub repeat: u16,
    }

    /// Everything of an animation resource but its frames.
    #[derive(Debug, Clone, PartialEq, Eq, Default)]
    pub struct AnimationTables {
        /// Every frame's size as authored.
        pub canvas: (u32, u32),
        /// Each frame's duration in milliseconds, in order.
        pub durations: Vec<u32>,
        /// Each frame's name, in order; empty for unnamed frames.
        pub names: Vec<String>,
        /// The tags, as authored.
        pub tags: Vec<TagSpec>,
    }

    impl AnimationTables {
        /// The resource's bytes up to its frames; appending one 72-byte
        /// sprite frame per frame, in order, completes it.
        pub fn encode(&self) -> Vec<u8> {
            let word = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
            let frame_names =
                (0..self.durations.len()).map(|f| self.names.get(f).map_or("", String::as_str));
            let names: usize = frame_names.clone().map(str::len).sum::<usize>()
                + self.tags.iter().map(|t| t.name.len()).sum::<usize>();
            let mut out = Vec::new();
            out.extend_from_slice(&ANIMATION_MAGIC);
            out.extend_from_slice(&1u16.to_le_bytes());
            out.extend_from_slice(&0u16.to_le_bytes());
            word(&mut out, self.durations.len() as u32);
            word(&mut out, self.tags.len() as u32);
            word(&mut out, names as u32);
            word(&mut out, self.canvas.0);
            word(&mut out, self.canvas.1);
            word(&mut out, 0);
            let mut end = 0;
            for (&d, name) in self.durations.iter().zip(frame_names.clone()) {
                end += name.len();
                word(&mut out, d);
                word(&mut out, end as u32);
            }
            for t in &self.tags {
                end += t.name.len();
                word(&mut out, t.from);
                word(&mut out, t.to);
                out.extend_from_slice(&[t.direction.code(), 0]);
                out.extend_from_slice(&t.repeat.to_le_bytes());
                word(&mut out, end as u32);
            }
            for name in frame_names {
                out.extend_from_slice(name.as_bytes());
            }
            for t in &self.tags {
                out.extend_from_slice(t.name.as_bytes());
            }
            out
        }
    }
}

#[cfg(all(test, feature = "write"))]
mod tests {
    use super::write::{AnimationTables, TagSpec};
    use super::*;

    fn frame(x: u32) -> SpriteFrame {
        crate::sprite::test_frame(x, (16, 16))
    }

    fn tag(name: &str, from: u32, to: u32, direction: Direction, repeat: u16) -> TagSpec {
        TagSpec {
            name: name.to_owned(),
            from,
            to,
            direction,
            repeat,
        }
    }

    /// Five frames of 100, 200, 100, 100, 50 ms.
    fn sample(tags: Vec<TagSpec>) -> Vec<u8> {
        let tables = AnimationTables {
            canvas: (16, 16),
            durations: vec![100, 200, 100, 100, 50],
            names: ["idle", "", "run 1", "run 2", "ö"].map(String::from).into(),
            tags,
        };
        let mut bytes = tables.encode();
        for f in 0..tables.durations.len() {
            bytes.extend_from_slice(&frame(f as u32 * 10).encode());
        }
        bytes
    }

    fn at(a: &Animation<'_>, tag: &Tag<'_>, ms: u64) -> u32 {
        a.frame_at(tag, Duration::from_millis(ms))
    }

    #[test]
    fn tables_round_trip() {
        let bytes = sample(vec![
            tag("walk", 0, 2, Direction::Forward, 0),
            tag("hit é", 3, 4, Direction::PingPongReverse, 2),
        ]);
        let a = Animation::parse(&bytes).expect("valid");
        assert_eq!((a.canvas(), a.frame_count()), ((16, 16), 5));
        let f = a.frame(1).expect("frame 1");
        assert_eq!((f.duration_ms, f.sprite.x, f.name), (200, 10, ""));
        assert_eq!(a.frame(4).unwrap().name, "ö");
        assert_eq!(a.frame_named("run 2"), Some(3));
        assert_eq!(a.frame_named("run"), None);
        assert!(a.frame(5).is_none());
        let names: Vec<_> = a.tags().map(|t| t.name).collect();
        assert_eq!(names, ["walk", "hit é"]);
        let hit = a.tag("hit é").expect("tag");
        assert_eq!((hit.from, hit.to, hit.repeat), (3, 4, 2));
        assert_eq!(hit.direction, Direction::PingPongReverse);
        assert!(a.tag("run").is_none());
        assert_eq!(a.sprite_frames().count(), 5);
    }

    #[test]
    fn forward_loops_and_a_repeat_count_holds_the_last_frame() {
        let bytes = sample(vec![
            tag("loop", 0, 2, Direction::Forward, 0),
            tag("twice", 0, 2, Direction::Forward, 2),
        ]);
        let a = Animation::parse(&bytes).expect("valid");
        let l = a.tag("loop").unwrap();
        // 0: 0..100, 1: 100..300, 2: 300..400, then again.
        let seen: Vec<u32> = [0, 99, 100, 299, 300, 399, 400, 850]
            .map(|t| at(&a, &l, t))
            .into();
        assert_eq!(seen, [0, 0, 1, 1, 2, 2, 0, 0]);
        let twice = a.tag("twice").unwrap();
        assert_eq!(at(&a, &twice, 450), 0);
        assert_eq!(at(&a, &twice, 799), 2);
        assert_eq!(at(&a, &twice, 800), 2, "stays on the last frame");
        assert_eq!(at(&a, &twice, u64::MAX / 2), 2);
    }

    #[test]
    fn ping_pong_shows_the_turning_frame_once() {
        let bytes = sample(vec![
            tag("pp", 0, 2, Direction::PingPong, 0),
            tag("ppr", 0, 2, Direction::PingPongReverse, 3),
            tag("reverse", 0, 2, Direction::Reverse, 1),
        ]);
        let a = Animation::parse(&bytes).expect("valid");
        let sequence = |tag: &Tag<'_>, until: u64| -> Vec<u32> {
            let mut seen = Vec::new();
            for t in (0..until).step_by(50) {
                let f = at(&a, tag, t);
                if seen.last() != Some(&f) {
                    seen.push(f);
                }
            }
            seen
        };
        let pp = a.tag("pp").unwrap();
        // 0 1 2 1 | 0 1 2 1 | ..., 600 ms a cycle.
        assert_eq!(sequence(&pp, 1200), [0, 1, 2, 1, 0, 1, 2, 1]);
        // Three passes: down 2 1 0, up 1 2, down 1 0; then 0 stays.
        let ppr = a.tag("ppr").unwrap();
        assert_eq!(sequence(&ppr, 5000), [2, 1, 0, 1, 2, 1, 0]);
        let reverse = a.tag("reverse").unwrap();
        assert_eq!(sequence(&reverse, 5000), [2, 1, 0]);
        let whole = a.whole();
        assert_eq!(sequence(&whole, 600), [0, 1, 2, 3, 4, 0]);
    }

    #[test]
    fn every_truncation_and_many_byte_flips_are_refused_or_read_safely() {
        let bytes = sample(vec![
            tag("a", 0, 4, Direction::PingPong, 3),
            tag("bc", 2, 3, Direction::Reverse, 0),
        ]);
        for len in 0..bytes.len() {
            assert!(
                Animation::parse(&bytes[..len]).is_none(),
                "truncated to {len}"
            );
        }
        for at in 0..bytes.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[at] ^= flip;
                if let Some(a) = Animation::parse(&b) {
                    // Whatever survives still reads without panicking.
                    for t in a.tags().chain([a.whole()]) {
                        for ms in [0, 1, 333, 10_000, u64::MAX] {
                            let f = a.frame_at(&t, Duration::from_millis(ms));
                            assert!((f as usize) < a.frame_count());
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn tags_out_of_range_or_with_split_names_are_refused() {
        let good = sample(vec![tag("é", 0, 1, Direction::Forward, 0)]);
        assert!(Animation::parse(&good).is_some());
        let tags_at = 32 + 5 * 8;
        let mut past = good.clone();
        past[tags_at + 4..tags_at + 8].copy_from_slice(&5u32.to_le_bytes());
        assert!(Animation::parse(&past).is_none(), "last frame past the end");
        // The last frame's name, "ö", cut after its first byte.
        let mut split = good.clone();
        let end = 32 + 4 * 8 + 4;
        assert_eq!(split[end], 16);
        split[end] = 15;
        assert!(
            Animation::parse(&split).is_none(),
            "name cut inside a character"
        );
        let mut backwards = good.clone();
        backwards[tags_at + 12..tags_at + 16].copy_from_slice(&1u32.to_le_bytes());
        assert!(Animation::parse(&backwards).is_none(), "names out of order");
    }
}
