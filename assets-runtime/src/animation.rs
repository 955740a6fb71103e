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
//!      4        2  layout version: 1, 2 when it has slices, 3 when a tag
//!                  or slice has user data
//!      6        2  flags: zero
//!      8        4  F: frames (at least 1)
//!     12        4  T: tags
//!     16        4  N: bytes of names
//!     20        8  canvas width, height: every frame's size as authored
//!     28        4  K: slice keys (zero in layout 1)
//!     32    F × 8  frames: duration in milliseconds, where its name ends
//!                  in the names (u32 each; `""` for an unnamed frame)
//!      …   T × 16  tags, as authored: first frame, last frame (u32, first
//!                  <= last < F), direction (u8: 0 forward, 1 reverse,
//!                  2 ping-pong, 3 ping-pong reverse), a zero byte, repeat
//!                  (u16, 0 = forever), where its name ends in the names
//!      …   K × 56  slice keys, each slice's together in frame order: the
//!                  frame it starts at (u32, < F), where its slice's name
//!                  ends in the names (u32); its bounds on the canvas: x, y
//!                  (i32), width, height (u32); its 9-slice centre,
//!                  relative to the bounds and inside them: x, y (i32),
//!                  width, height (u32); its pivot, relative to the bounds:
//!                  x, y (i32); flags (u32: 1 has a centre, 2 has a pivot;
//!                  what it lacks is zero); four zero bytes
//!      … (T+K) × 12  layout 3 only: the user data of each tag, then of each
//!                  slice key (its slice's): where its text ends in the
//!                  names (u32), its colour (R, G, B, A bytes), flags (u32:
//!                  1 has a text, 2 has a colour; what it lacks is empty
//!                  or zero)
//!      …        N  the names, UTF-8, one after another: the frames', the
//!                  tags', each slice key's slice, then (layout 3) the user
//!                  data texts; each starts where the one before ends
//!      …   F × 72  each frame's sprite frame ([`crate::sprite`] layout)
//! ```
//!
//! **Slices** are Aseprite's named regions of the canvas (a hitbox, an
//! attachment point, a button's 9-slice borders), each keyed by frame: a
//! key holds from its frame until the slice's next key.
//! [`Animation::slice`] gives the key a slice shows at a frame. Their
//! coordinates are the canvas's, as authored, where a frame's trim offset
//! puts its pixels too.
//!
//! **User data** is what Aseprite lets one attach to a tag or a slice: a
//! text and a colour (a tag's colour in the editor is its user data's
//! colour). Games put gameplay in it: a hitbox's kind, an event on a tag.
//! [`Tag::user_data`] and [`SliceKey::user_data`] give it; layouts 1 and 2
//! have none, so an animation without any keeps its bytes.
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
const SLICE_LEN: usize = 56;
const USER_LEN: usize = 12;
/// A user data entry's flags: it has a text, a colour.
const HAS_TEXT: u32 = 1;
const HAS_COLOR: u32 = 2;
/// A slice key's flags: it has a 9-slice centre, a pivot.
const HAS_CENTER: u32 = 1;
const HAS_PIVOT: u32 = 2;

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
    /// Its user data (see the [module docs](self)).
    pub user_data: UserData<'a>,
}

/// The text and colour Aseprite attaches to a tag or a slice, as authored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UserData<'a> {
    /// Its text, if it has one.
    pub text: Option<&'a str>,
    /// Its colour, RGBA, if it has one.
    pub color: Option<[u8; 4]>,
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

/// Where a slice is from one frame on (see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SliceKey<'a> {
    /// Its slice's name (not necessarily unique).
    pub name: &'a str,
    /// The first frame it holds for; it holds until its slice's next key.
    pub from: u32,
    /// Its bounds' left edge on the canvas.
    pub x: i32,
    /// Its bounds' top edge on the canvas.
    pub y: i32,
    /// Its bounds' width.
    pub width: u32,
    /// Its bounds' height.
    pub height: u32,
    /// The centre of a 9-slice, relative to the bounds, if it is one.
    pub center: Option<SliceCenter>,
    /// Its pivot, relative to the bounds, if it has one.
    pub pivot: Option<(i32, i32)>,
    /// Its slice's user data (see the [module docs](self)).
    pub user_data: UserData<'a>,
}

/// The centre of a 9-slice, relative to its key's bounds and inside them:
/// the borders around it keep their size when the slice is stretched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SliceCenter {
    /// Left edge.
    pub x: i32,
    /// Top edge.
    pub y: i32,
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

impl SliceCenter {
    /// Whether it lies inside bounds of `width × height` (as a key's
    /// centre must: the reader refuses one that does not, and the
    /// processors a file that has one).
    pub fn fits(&self, width: u32, height: u32) -> bool {
        let inside = |start: i32, len: u32, within: u32| {
            u32::try_from(start).is_ok_and(|s| u64::from(s) + u64::from(len) <= u64::from(within))
        };
        inside(self.x, self.width, width) && inside(self.y, self.height, height)
    }
}

/// A validated animation resource. See the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Animation<'a> {
    bytes: &'a [u8],
    frames: usize,
    tags: usize,
    slices: usize,
    /// User data entries: `tags + slices` in layout 3, else none.
    user: usize,
    names: usize,
}

impl<'a> Animation<'a> {
    /// Parses and checks an animation resource's bytes: lengths, tags in
    /// range with UTF-8 names, well-formed frames. Whether each frame's page
    /// exists is the parcel's check (see [`Animation::sprite_frames`]).
    pub fn parse(bytes: &'a [u8]) -> Option<Animation<'a>> {
        if bytes.len() < HEADER_LEN || bytes[..4] != ANIMATION_MAGIC {
            return None;
        }
        let (frames, tags, slices, names) = (
            u32_at(bytes, 8) as usize,
            u32_at(bytes, 12) as usize,
            u32_at(bytes, 28) as usize,
            u32_at(bytes, 16) as usize,
        );
        // Layout 1 has no slices; layout 2 is layout 1 with them; layout 3
        // is layout 2 with user data.
        let (version_ok, user) = match u16_at(bytes, 4) {
            1 => (slices == 0, 0),
            2 => (true, 0),
            3 => (true, tags.checked_add(slices)?),
            _ => (false, 0),
        };
        if !version_ok || u16_at(bytes, 6) != 0 {
            return None;
        }
        let len = tables_len(
            HEADER_LEN,
            &[
                (frames, FRAME_LEN + SPRITE_LEN),
                (tags, TAG_LEN),
                (slices, SLICE_LEN),
                (user, USER_LEN),
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
            slices,
            user,
            names,
        };
        // Names end in order, the last where the names do.
        let mut last = 0;
        for i in 0..frames + tags + slices + user {
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
        let slices_ok = (0..slices).all(|k| animation.slice_key_at(k).is_some());
        let frames_ok = (0..frames).all(|f| animation.frame(f).is_some());
        (tags_ok && slices_ok && frames_ok).then_some(animation)
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
            user_data: UserData::default(),
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

    /// Every slice key, slice by slice, each slice's in frame order.
    pub fn slice_keys(&self) -> impl Iterator<Item = SliceKey<'a>> + '_ {
        (0..self.slices).filter_map(|k| self.slice_key_at(k))
    }

    /// The key the slice named `name` holds at `frame`: of its keys, the
    /// last that starts at or before `frame`. `None` if no slice has that
    /// name, or its first key starts later.
    pub fn slice(&self, name: &str, frame: u32) -> Option<SliceKey<'a>> {
        self.slice_keys()
            .filter(|k| k.name == name && k.from <= frame)
            .max_by_key(|k| k.from)
    }

    fn slice_key_at(&self, k: usize) -> Option<SliceKey<'a>> {
        let at = self.slices_at() + k * SLICE_LEN;
        let b = self.bytes;
        let i32_at = |at: usize| u32_at(b, at) as i32;
        let (from, flags) = (u32_at(b, at), u32_at(b, at + 48));
        if from as usize >= self.frames || flags & !(HAS_CENTER | HAS_PIVOT) != 0 {
            return None;
        }
        let (width, height) = (u32_at(b, at + 16), u32_at(b, at + 20));
        let center = SliceCenter {
            x: i32_at(at + 24),
            y: i32_at(at + 28),
            width: u32_at(b, at + 32),
            height: u32_at(b, at + 36),
        };
        let pivot = (i32_at(at + 40), i32_at(at + 44));
        // What a key lacks is zero; a centre lies inside the bounds.
        let center = match flags & HAS_CENTER != 0 {
            true if center.fits(width, height) => Some(center),
            false if center == SliceCenter::default() => None,
            _ => return None,
        };
        let pivot = match (flags & HAS_PIVOT != 0, pivot) {
            (true, p) => Some(p),
            (false, (0, 0)) => None,
            (false, _) => return None,
        };
        if u32_at(b, at + 52) != 0 {
            return None;
        }
        Some(SliceKey {
            name: self.name(self.frames + self.tags + k)?,
            from,
            x: i32_at(at + 8),
            y: i32_at(at + 12),
            width,
            height,
            center,
            pivot,
            user_data: self.user_data(self.tags + k)?,
        })
    }

    /// User data entry `j` (tags' first, then slice keys'): empty in
    /// layouts 1 and 2; `None` if its flags or what it lacks are not as
    /// the layout says.
    fn user_data(&self, j: usize) -> Option<UserData<'a>> {
        if self.user == 0 {
            return Some(UserData::default());
        }
        let at = self.user_at() + j * USER_LEN;
        let b = self.bytes;
        let (color, flags) = (b.get(at + 4..at + 8)?, u32_at(b, at + 8));
        if flags & !(HAS_TEXT | HAS_COLOR) != 0 {
            return None;
        }
        let text = self.name(self.frames + self.tags + self.slices + j)?;
        let text = match (flags & HAS_TEXT != 0, text) {
            (true, t) => Some(t),
            (false, "") => None,
            (false, _) => return None,
        };
        let color = match (flags & HAS_COLOR != 0, color) {
            (true, c) => Some([c[0], c[1], c[2], c[3]]),
            (false, [0, 0, 0, 0]) => None,
            (false, _) => return None,
        };
        Some(UserData { text, color })
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
            user_data: self.user_data(t)?,
        })
    }

    fn duration(&self, f: usize) -> u32 {
        u32_at(self.bytes, HEADER_LEN + f * FRAME_LEN)
    }

    /// Where name `i` ends: frames' names first, then tags', then slice
    /// keys', then user data texts.
    fn name_end(&self, i: usize) -> usize {
        let (frames, tags, slices) = (self.frames, self.tags, self.slices);
        let at = if i < frames {
            HEADER_LEN + i * FRAME_LEN + 4
        } else if i < frames + tags {
            self.tags_at() + (i - frames) * TAG_LEN + 12
        } else if i < frames + tags + slices {
            self.slices_at() + (i - frames - tags) * SLICE_LEN + 4
        } else {
            self.user_at() + (i - frames - tags - slices) * USER_LEN
        };
        u32_at(self.bytes, at) as usize
    }

    /// Name `i` (frames' first, then tags', slice keys', user data
    /// texts), if it is UTF-8 (checked at parse for every name that
    /// matters).
    fn name(&self, i: usize) -> Option<&'a str> {
        let start = i.checked_sub(1).map_or(0, |p| self.name_end(p));
        let end = self.name_end(i);
        let names_at = self.user_at() + self.user * USER_LEN;
        let bytes: &'a [u8] = self.bytes;
        std::str::from_utf8(bytes.get(names_at + start..names_at.checked_add(end)?)?).ok()
    }

    fn tags_at(&self) -> usize {
        HEADER_LEN + self.frames * FRAME_LEN
    }

    fn slices_at(&self) -> usize {
        self.tags_at() + self.tags * TAG_LEN
    }

    fn user_at(&self) -> usize {
        self.slices_at() + self.slices * SLICE_LEN
    }

    fn sprites_at(&self) -> usize {
        self.user_at() + self.user * USER_LEN + self.names
    }
}

/// The writer's half: the `aseprite` processor writes the tables, the atlas
/// adds the frames (behind the `write` feature).
#[cfg(feature = "write")]
pub mod write {
    use super::{ANIMATION_MAGIC, Direction, SliceCenter};

    /// A tag's or slice's user data, as the processor read it.
    #[derive(Debug, Clone, PartialEq, Eq, Default)]
    pub struct UserDataSpec {
        /// Its text.
        pub text: Option<String>,
        /// Its colour, RGBA.
        pub color: Option<[u8; 4]>,
    }

    impl UserDataSpec {
        fn is_empty(&self) -> bool {
            self.text.is_none() && self.color.is_none()
        }

        fn text_len(&self) -> usize {
            self.text.as_ref().map_or(0, String::len)
        }
    }

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
        /// Its user data.
        pub user_data: UserDataSpec,
    }

    /// One slice key, as the processor read it.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct SliceKeySpec {
        /// Its slice's name.
        pub name: String,
        /// The frame it starts at.
        pub from: u32,
        /// Its bounds on the canvas: x, y, width, height.
        pub bounds: (i32, i32, u32, u32),
        /// Its 9-slice centre, relative to the bounds.
        pub center: Option<SliceCenter>,
        /// Its pivot, relative to the bounds.
        pub pivot: Option<(i32, i32)>,
        /// Its slice's user data (the same for each of its keys).
        pub user_data: UserDataSpec,
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
        /// The slices' keys, each slice's together in frame order.
        pub slices: Vec<SliceKeySpec>,
    }

    impl AnimationTables {
        /// The resource's bytes up to its frames; appending one 72-byte
        /// sprite frame per frame, in order, completes it.
        pub fn encode(&self) -> Vec<u8> {
            let word = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
            let frame_names =
                (0..self.durations.len()).map(|f| self.names.get(f).map_or("", String::as_str));
            let user_data: Vec<&UserDataSpec> = (self.tags.iter().map(|t| &t.user_data))
                .chain(self.slices.iter().map(|k| &k.user_data))
                .collect();
            // Layout 1 without slices, 2 without user data: the bytes of
            // animations made before either was read are unchanged.
            let version: u16 = if user_data.iter().any(|u| !u.is_empty()) {
                3
            } else if !self.slices.is_empty() {
                2
            } else {
                1
            };
            let user_texts: usize = match version {
                3 => user_data.iter().map(|u| u.text_len()).sum(),
                _ => 0,
            };
            let names: usize = frame_names.clone().map(str::len).sum::<usize>()
                + self.tags.iter().map(|t| t.name.len()).sum::<usize>()
                + self.slices.iter().map(|k| k.name.len()).sum::<usize>()
                + user_texts;
            let mut out = Vec::new();
            out.extend_from_slice(&ANIMATION_MAGIC);
            out.extend_from_slice(&version.to_le_bytes());
            out.extend_from_slice(&0u16.to_le_bytes());
            word(&mut out, self.durations.len() as u32);
            word(&mut out, self.tags.len() as u32);
            word(&mut out, names as u32);
            word(&mut out, self.canvas.0);
            word(&mut out, self.canvas.1);
            word(&mut out, self.slices.len() as u32);
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
            let signed = |out: &mut Vec<u8>, v: i32| out.extend_from_slice(&v.to_le_bytes());
            for k in &self.slices {
                end += k.name.len();
                word(&mut out, k.from);
                word(&mut out, end as u32);
                let (x, y, w, h) = k.bounds;
                let c = k.center.unwrap_or_default();
                let (px, py) = k.pivot.unwrap_or_default();
                let center = ((c.x, c.y), (c.width, c.height));
                for (signed_part, unsigned_part) in [((x, y), (w, h)), center] {
                    signed(&mut out, signed_part.0);
                    signed(&mut out, signed_part.1);
                    word(&mut out, unsigned_part.0);
                    word(&mut out, unsigned_part.1);
                }
                signed(&mut out, px);
                signed(&mut out, py);
                let mut flags = 0;
                if k.center.is_some() {
                    flags |= super::HAS_CENTER;
                }
                if k.pivot.is_some() {
                    flags |= super::HAS_PIVOT;
                }
                word(&mut out, flags);
                word(&mut out, 0);
            }
            if version == 3 {
                for u in &user_data {
                    end += u.text_len();
                    word(&mut out, end as u32);
                    out.extend_from_slice(&u.color.unwrap_or_default());
                    let mut flags = 0;
                    if u.text.is_some() {
                        flags |= super::HAS_TEXT;
                    }
                    if u.color.is_some() {
                        flags |= super::HAS_COLOR;
                    }
                    word(&mut out, flags);
                }
            }
            for name in frame_names {
                out.extend_from_slice(name.as_bytes());
            }
            for t in &self.tags {
                out.extend_from_slice(t.name.as_bytes());
            }
            for k in &self.slices {
                out.extend_from_slice(k.name.as_bytes());
            }
            if version == 3 {
                for u in &user_data {
                    out.extend_from_slice(u.text.as_deref().unwrap_or("").as_bytes());
                }
            }
            out
        }
    }
}

#[cfg(all(test, feature = "write"))]
mod tests {
    use super::write::{AnimationTables, SliceKeySpec, TagSpec};
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
            user_data: Default::default(),
        }
    }

    /// Five frames of 100, 200, 100, 100, 50 ms.
    fn sample(tags: Vec<TagSpec>) -> Vec<u8> {
        sample_with(tags, Vec::new())
    }

    /// [`sample`] with slice keys.
    fn sample_with(tags: Vec<TagSpec>, slices: Vec<SliceKeySpec>) -> Vec<u8> {
        let tables = AnimationTables {
            canvas: (16, 16),
            durations: vec![100, 200, 100, 100, 50],
            names: ["idle", "", "run 1", "run 2", "ö"].map(String::from).into(),
            tags,
            slices,
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

    fn key(name: &str, from: u32, bounds: (i32, i32, u32, u32)) -> SliceKeySpec {
        SliceKeySpec {
            name: name.to_owned(),
            from,
            bounds,
            center: None,
            pivot: None,
            user_data: Default::default(),
        }
    }

    /// [`slices`] and two tags with user data as Aseprite writes it: a
    /// text and a colour, a colour alone, a text alone.
    fn with_user_data() -> Vec<u8> {
        let data = |text: Option<&str>, color: Option<[u8; 4]>| super::write::UserDataSpec {
            text: text.map(str::to_owned),
            color,
        };
        let tags = vec![
            TagSpec {
                user_data: data(Some("event: step"), Some([0, 255, 0, 255])),
                ..tag("walk", 0, 2, Direction::Forward, 0)
            },
            TagSpec {
                user_data: data(None, Some([0, 0, 0, 255])),
                ..tag("idle", 3, 4, Direction::PingPong, 0)
            },
        ];
        let mut keys = slices();
        for k in &mut keys[..2] {
            k.user_data = data(Some("kind=hurt ü"), None);
        }
        sample_with(tags, keys)
    }

    #[test]
    fn user_data_round_trips_and_its_absence_keeps_layout_two() {
        let bytes = with_user_data();
        assert_eq!(u16_at(&bytes, 4), 3);
        let a = Animation::parse(&bytes).expect("valid");
        let walk = a.tag("walk").unwrap();
        assert_eq!(walk.user_data.text, Some("event: step"));
        assert_eq!(walk.user_data.color, Some([0, 255, 0, 255]));
        let idle = a.tag("idle").unwrap();
        assert_eq!(
            idle.user_data,
            UserData {
                text: None,
                color: Some([0, 0, 0, 255])
            }
        );
        assert_eq!(a.tag("walk").unwrap().name, "walk", "names still line up");
        let hit = a.slice("hit box", 3).unwrap();
        assert_eq!(hit.user_data.text, Some("kind=hurt ü"));
        assert_eq!(hit.user_data.color, None);
        assert_eq!(
            a.slice("panel é", 1).unwrap().user_data,
            UserData::default()
        );
        assert_eq!(a.whole().user_data, UserData::default());
        // Without user data, layout 2 as before, byte for byte.
        let plain = sample_with(vec![tag("walk", 0, 2, Direction::Forward, 0)], slices());
        assert_eq!(u16_at(&plain, 4), 2);
        // A stray flag, a colour its flags deny, a text its flags deny:
        // refused.
        let user_at = 32 + 5 * 8 + 2 * 16 + 3 * 56;
        for (offset, value) in [(8, 4u32), (12 + 8, 0), (8, 1)] {
            let mut b = bytes.clone();
            b[user_at + offset..user_at + offset + 4].copy_from_slice(&value.to_le_bytes());
            assert!(Animation::parse(&b).is_none(), "{offset}: {value}");
        }
    }

    /// A hitbox keyed at frames 0 and 2 with a pivot, and a 9-slice panel.
    fn slices() -> Vec<SliceKeySpec> {
        vec![
            SliceKeySpec {
                pivot: Some((4, -2)),
                ..key("hit box", 0, (-3, 2, 8, 10))
            },
            SliceKeySpec {
                pivot: Some((4, 10)),
                ..key("hit box", 2, (5, 2, 8, 10))
            },
            SliceKeySpec {
                center: Some(SliceCenter {
                    x: 3,
                    y: 3,
                    width: 2,
                    height: 2,
                }),
                ..key("panel é", 1, (2, 1, 8, 8))
            },
        ]
    }

    #[test]
    fn slices_round_trip_and_each_frame_shows_the_key_it_is_in() {
        let plain = sample(vec![tag("walk", 0, 2, Direction::Forward, 0)]);
        assert_eq!(u16_at(&plain, 4), 1, "layout 1 without slices");
        let bytes = sample_with(vec![tag("walk", 0, 2, Direction::Forward, 0)], slices());
        assert_eq!(u16_at(&bytes, 4), 2);
        let a = Animation::parse(&bytes).expect("valid");
        assert_eq!(a.tag("walk").unwrap().to, 2);
        assert_eq!(a.frame(4).unwrap().name, "ö");
        assert_eq!(a.slice_keys().count(), 3);
        let at = |name: &str, frame: u32| a.slice(name, frame).map(|k| (k.from, k.x, k.pivot));
        assert_eq!(at("hit box", 0), Some((0, -3, Some((4, -2)))));
        assert_eq!(at("hit box", 1), Some((0, -3, Some((4, -2)))));
        assert_eq!(at("hit box", 4), Some((2, 5, Some((4, 10)))));
        assert_eq!(at("panel é", 0), None, "before its first key");
        let panel = a.slice("panel é", 3).unwrap();
        assert_eq!((panel.width, panel.height, panel.pivot), (8, 8, None));
        assert_eq!(
            panel.center,
            Some(SliceCenter {
                x: 3,
                y: 3,
                width: 2,
                height: 2
            })
        );
        assert_eq!(a.slice("nothing", 0), None);
    }

    #[test]
    fn a_slice_centre_outside_its_bounds_or_a_stray_flag_is_refused() {
        let at = 32 + 5 * 8;
        let third = at + 2 * SLICE_LEN;
        let good = sample_with(Vec::new(), slices());
        assert!(Animation::parse(&good).is_some());
        let mut wide = good.clone();
        wide[third + 32..third + 36].copy_from_slice(&6u32.to_le_bytes());
        assert!(Animation::parse(&wide).is_none(), "centre past the bounds");
        let mut stray = good.clone();
        stray[at + 48] |= 4;
        assert!(Animation::parse(&stray).is_none(), "unknown flag");
        let mut late = good.clone();
        late[at..at + 4].copy_from_slice(&5u32.to_le_bytes());
        assert!(Animation::parse(&late).is_none(), "key past the last frame");
        let mut old = good.clone();
        old[4] = 1;
        assert!(Animation::parse(&old).is_none(), "layout 1 with slices");
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
        let bytes = sample_with(
            vec![
                tag("a", 0, 4, Direction::PingPong, 3),
                tag("bc", 2, 3, Direction::Reverse, 0),
            ],
            slices(),
        );
        every_truncation_and_flip(&bytes);
        every_truncation_and_flip(&with_user_data());
    }

    fn every_truncation_and_flip(bytes: &[u8]) {
        for len in 0..bytes.len() {
            assert!(
                Animation::parse(&bytes[..len]).is_none(),
                "truncated to {len}"
            );
        }
        for at in 0..bytes.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut b = bytes.to_vec();
                b[at] ^= flip;
                if let Some(a) = Animation::parse(&b) {
                    // Whatever survives still reads without panicking.
                    for k in a.slice_keys() {
                        assert!((k.from as usize) < a.frame_count());
                        assert_eq!(a.slice(k.name, k.from).map(|k| k.from), Some(k.from));
                    }
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
