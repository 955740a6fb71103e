//! [`Record`]: what one build step read, used and wrote, kept between builds.
//!
//! A record is one binary frame in `records/<package>/<variant>.records`
//! under the cache directory (see `record_log.rs` and `record_codec.rs`);
//! `cargo assets why` and `cargo assets deps` print it for people. Its JSON
//! form (the serde derives below) is what the remote cache's entries hold.
//! It is written last, after every output is in the store, so a record on
//! disk always points at complete blobs.

use std::fmt;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::asset_path::AssetPath;
use crate::hash::ContentHash;

/// Why a step had to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum DirtyReason {
    /// No usable record: never built, an older record format, or a line torn by a kill.
    NoRecord,
    /// A rule now names another processor.
    ProcessorChanged {
        /// The processor of the previous run.
        previous: String,
    },
    /// The processor's version changed.
    ProcessorVersionChanged {
        /// Version of the previous run.
        previous: u32,
        /// Version now.
        current: u32,
    },
    /// The settings changed.
    SettingsChanged {
        /// Previous settings, canonical JSON.
        previous: String,
        /// Current settings.
        current: String,
    },
    /// A file read by the step has different contents.
    InputChanged {
        /// The file, relative to the package.
        path: String,
    },
    /// A file the step looked for and did not find now exists.
    InputAppeared {
        /// The file, relative to the package.
        path: String,
    },
    /// A file the step read is gone.
    InputRemoved {
        /// The file, relative to the package.
        path: String,
    },
    /// An asset the step used has different outputs.
    DependencyChanged {
        /// The dependency.
        asset: AssetPath,
    },
    /// An output is missing from the store (deleted, or found corrupt).
    OutputMissing {
        /// Its label (empty for the main output).
        label: String,
    },
    /// The processor's code changed (same name and version, another code
    /// fingerprint: see `processor/code.rs`).
    ProcessorCodeChanged,
}

impl fmt::Display for DirtyReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DirtyReason::NoRecord => f.write_str("never built before"),
            DirtyReason::ProcessorChanged { previous } => {
                write!(f, "processor changed (was `{previous}`)")
            }
            DirtyReason::ProcessorVersionChanged { previous, current } => {
                write!(f, "processor version changed ({previous} -> {current})")
            }
            DirtyReason::SettingsChanged { previous, current } => {
                write!(f, "settings changed ({previous} -> {current})")
            }
            DirtyReason::InputChanged { path } => write!(f, "`{path}` changed"),
            DirtyReason::InputAppeared { path } => write!(f, "`{path}` appeared"),
            DirtyReason::InputRemoved { path } => write!(f, "`{path}` was removed"),
            DirtyReason::DependencyChanged { asset } => write!(f, "dependency `{asset}` changed"),
            DirtyReason::OutputMissing { label } if label.is_empty() => {
                f.write_str("output missing from the cache")
            }
            DirtyReason::OutputMissing { label } => {
                write!(f, "output `{label}` missing from the cache")
            }
            DirtyReason::ProcessorCodeChanged => {
                f.write_str("the processor's code changed since the last build")
            }
        }
    }
}

/// Bumped when the record layout or the key scheme changes; older records
/// are then treated as absent.
pub const RECORD_FORMAT: u32 = 5;

/// Something a processor said about an asset that built: a warning (counted,
/// and an error under `--deny-warnings`) or a note (information only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Warning or note.
    pub severity: Severity,
    /// What it says, verbatim (possibly several lines, as a tool's stderr).
    pub message: String,
    /// Where in the input it is, when the processor knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
}

impl Diagnostic {
    /// Whether it is a warning.
    pub fn is_warning(&self) -> bool {
        self.severity == Severity::Warning
    }

    /// Where it is, for people: `path:line:column` (the column left out
    /// when unknown; the file `asset`'s unless its location names another),
    /// which editors and terminals turn into a link, or `asset` alone.
    pub fn place(&self, asset: &AssetPath) -> String {
        let Some(at) = &self.location else {
            return asset.to_string();
        };
        let file = at.file.as_ref().unwrap_or(asset);
        match at.column {
            Some(column) => format!("{file}:{}:{column}", at.line),
            None => format!("{file}:{}", at.line),
        }
    }
}

/// How much a [`Diagnostic`] matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Something the user would want to fix or know; counted.
    Warning,
    /// Information; never fails a build.
    Note,
}

impl Severity {
    /// `warning` or `note`, as cargo prints them.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// A place in an input: a line, and the column when known (both from 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// The file, relative to the asset's root, when it is not the asset's
    /// own source (a tileset a map includes, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<AssetPath>,
    /// Line, from 1.
    pub line: u32,
    /// Column (in characters), from 1, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
}

impl Location {
    /// Line `line`, column `column` (both from 1) of the asset's source.
    pub fn at(line: u32, column: u32) -> Location {
        Location {
            file: None,
            line,
            column: Some(column),
        }
    }

    /// Line `line` of the asset's source, column unknown.
    pub fn line(line: u32) -> Location {
        Location {
            file: None,
            line,
            column: None,
        }
    }

    /// The same place in `file` (another input of the step).
    pub fn in_file(self, file: AssetPath) -> Location {
        Location {
            file: Some(file),
            ..self
        }
    }
}

/// The persisted facts about one build step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// [`RECORD_FORMAT`] at write time.
    pub format: u32,
    /// The asset this step built.
    pub asset: AssetPath,
    /// The build variant (`dev`, `release`, ...).
    pub variant: String,
    /// Processor name.
    pub processor: String,
    /// Processor version.
    pub processor_version: u32,
    /// The fingerprint of the processor's code, when it was known (see
    /// `processor/code.rs`): part of the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processor_code: Option<u64>,
    /// The settings, in canonical JSON, for people and for "settings changed".
    pub settings: String,
    /// Hash of processor, version, code, settings, asset path and variant.
    pub key: ContentHash,
    /// Wall-clock time (ns since the Unix epoch) at which the step began reading
    /// inputs. Inputs modified within `RACY_WINDOW_NS` (2 s, in `freshness.rs`) of it are
    /// re-hashed rather than trusted by size and mtime.
    pub started_ns: u64,
    /// Every file the step read or looked for, in the order it first did.
    pub inputs: Vec<Input>,
    /// Every other asset whose outputs the step used, in order of first use.
    pub dependencies: Vec<DependencyUse>,
    /// Every asset whose resources the step's outputs name, as a model
    /// names its textures ([`crate::processor::Context::reference`]), in
    /// order of first reference: a parcel holding the step's outputs holds
    /// theirs too. Not inputs: their contents do not change the step's
    /// outputs; an asset that is gone reruns the step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<AssetPath>,
    /// What the processor warned of or noted ([`crate::Context::warn`],
    /// [`crate::Context::note`]; a tool's stderr), in order: kept with the
    /// step so that a build that reuses it says it again, as Cargo replays
    /// a cached warning.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<Diagnostic>,
    /// What the step produced.
    pub outputs: Vec<OutputRecord>,
    /// Why the step last ran (`cargo assets why`); absent in records written
    /// before this field existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<DirtyReason>,
    /// The remote cache the step's outputs were fetched from instead of
    /// being built here (see [`crate::unstable::remote`]), shown without credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetched_from: Option<String>,
    /// [`Record::outputs_hash`], worked out on first use.
    #[serde(skip)]
    pub(crate) outputs_hash: OutputsHash,
}

impl Record {
    /// The combined hash of every output: what dependents compare to decide
    /// whether this step's change reaches them (early cutoff).
    ///
    /// Worked out once per record: a watched edit of one sprite asks it of
    /// each of the atlas's thousands of sprites twice (the atlas's check,
    /// then the parcel's reload notice). No code changes a record's
    /// outputs after it is made; a record is replaced, never edited.
    pub fn outputs_hash(&self) -> ContentHash {
        *self
            .outputs_hash
            .0
            .get_or_init(|| outputs_hash(&self.outputs))
    }

    /// The output labelled `label` (`""` for the main output).
    pub fn output(&self, label: &str) -> Option<&OutputRecord> {
        self.outputs.iter().find(|o| o.label == label)
    }
}

/// The memo of [`Record::outputs_hash`]: derived from the record's
/// outputs, so it takes no part in comparing, printing or storing one.
#[derive(Clone, Default)]
pub(crate) struct OutputsHash(OnceLock<ContentHash>);

impl PartialEq for OutputsHash {
    fn eq(&self, _: &OutputsHash) -> bool {
        true
    }
}

impl Eq for OutputsHash {}

impl fmt::Debug for OutputsHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("_")
    }
}

/// The combined hash of a list of outputs.
pub fn outputs_hash(outputs: &[OutputRecord]) -> ContentHash {
    let mut h = blake3::Hasher::new();
    for o in outputs {
        for field in [o.label.as_bytes(), o.kind.as_bytes(), o.hash.as_bytes()] {
            h.update(&(field.len() as u64).to_le_bytes());
            h.update(field);
        }
    }
    h.finalize().into()
}

/// The identity of a step: equal keys mean "same computation on same inputs".
pub fn step_key(
    processor: &str,
    version: u32,
    code: Option<u64>,
    settings_json: &str,
    asset: &AssetPath,
    variant: &str,
) -> ContentHash {
    let mut h = blake3::Hasher::new();
    h.update(&RECORD_FORMAT.to_le_bytes());
    for field in [
        processor.as_bytes(),
        settings_json.as_bytes(),
        asset.as_str().as_bytes(),
        variant.as_bytes(),
    ] {
        h.update(&(field.len() as u64).to_le_bytes());
        h.update(field);
    }
    h.update(&version.to_le_bytes());
    if let Some(code) = code {
        h.update(&code.to_le_bytes());
    }
    h.finalize().into()
}

/// A file a step read, or looked for and did not find.
///
/// In JSON its state's fields sit beside the path (`{"path":…,"size":…,
/// "hash":…}`, `{"path":…,"absent":true}`). Serializing flattens the state;
/// reading is written out by hand: serde's derived reader for a flattened
/// untagged enum buffers every input into a generic tree and tries each
/// variant on it (a tenth of a no-op build's reading of records, when the
/// record log was JSON; now the remote cache's entries are).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Input {
    /// Relative to the package directory, `/`-separated: `assets/sprites/hero.png`.
    pub path: String,
    /// What the step saw.
    #[serde(flatten)]
    pub state: InputState,
}

/// What a step saw at an input path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum InputState {
    /// The file existed with these contents.
    Present {
        /// Size and modification time when read.
        #[serde(flatten)]
        stamp: FileStamp,
        /// Hash of the bytes read.
        hash: ContentHash,
    },
    /// The file did not exist; creating it makes the step stale.
    Absent {
        /// Always `true`; present so the JSON says what it means.
        absent: bool,
    },
    /// An external tool read the file, and it changed while the tool ran
    /// (its stamp is newer than the tool's start), so what the tool read is
    /// unknown. The step is stale at the next check, whatever the file holds.
    Unsettled {
        /// Always `true`; present so the JSON says what it means.
        unsettled: bool,
    },
}

impl<'de> Deserialize<'de> for Input {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Input, D::Error> {
        deserializer.deserialize_map(InputVisitor)
    }
}

/// The keys of an [`Input`]'s map.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum InputField {
    Path,
    Size,
    MtimeNs,
    CtimeNs,
    Ino,
    Dev,
    Hash,
    Absent,
    Unsettled,
    #[serde(other)]
    Other,
}

/// Reads an [`Input`]'s one map: the path, and the fields of whichever
/// state they make up, as the derived untagged reader would decide (a
/// present file's `size`, `mtime_ns` and `hash`, with the rest of its stamp
/// 0 when missing, else `absent`, else `unsettled`). Other keys are ignored.
struct InputVisitor;

impl<'de> Visitor<'de> for InputVisitor {
    type Value = Input;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an input: its path and what the step saw there")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Input, A::Error> {
        let mut path = None;
        let (mut size, mut mtime_ns, mut hash) = (None, None, None);
        let (mut ctime_ns, mut ino, mut dev) = (0, 0, 0);
        let (mut absent, mut unsettled) = (None, None);
        while let Some(key) = map.next_key::<InputField>()? {
            match key {
                InputField::Path => path = Some(map.next_value::<String>()?),
                InputField::Size => size = Some(map.next_value()?),
                InputField::MtimeNs => mtime_ns = Some(map.next_value()?),
                InputField::CtimeNs => ctime_ns = map.next_value()?,
                InputField::Ino => ino = map.next_value()?,
                InputField::Dev => dev = map.next_value()?,
                InputField::Hash => hash = Some(map.next_value::<ContentHash>()?),
                InputField::Absent => absent = Some(map.next_value()?),
                InputField::Unsettled => unsettled = Some(map.next_value()?),
                InputField::Other => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        let path = path.ok_or_else(|| de::Error::missing_field("path"))?;
        let state = match (size, mtime_ns, hash, absent, unsettled) {
            (Some(size), Some(mtime_ns), Some(hash), _, _) => InputState::Present {
                stamp: FileStamp {
                    size,
                    mtime_ns,
                    ctime_ns,
                    ino,
                    dev,
                },
                hash,
            },
            (_, _, _, Some(absent), _) => InputState::Absent { absent },
            (_, _, _, None, Some(unsettled)) => InputState::Unsettled { unsettled },
            _ => {
                return Err(de::Error::custom(format!(
                    "input `{path}` is neither present (size, mtime_ns, hash), absent nor unsettled"
                )));
            }
        };
        Ok(Input { path, state })
    }
}

/// What a `stat` says of a file: the cheap check that it is unchanged.
///
/// Size and mtime alone can be fooled: archive extraction, `rsync -t`,
/// `cp -p` and some editors set the mtime back, and a file of the same size
/// then looks unchanged. So, as git's index does, the stamp also holds the
/// status-change time, which every write, rename or `chmod` moves and which
/// user space cannot set back, and the inode and device, which differ for a
/// file renamed over another. All come from the same `stat` call.
///
/// | platform | `ctime_ns` | `ino`, `dev` |
/// |---|---|---|
/// | Unix (Linux, macOS, BSD) | `st_ctime` | `st_ino`, `st_dev` |
/// | other (Windows) | 0 | 0 (size and mtime only, plus the racy-time rule) |
///
/// Records written before these fields existed read them as 0: the first
/// check then re-hashes each input once and stores the full stamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStamp {
    /// Length in bytes.
    pub size: u64,
    /// Modification time, ns since the Unix epoch (0 if earlier or unknown).
    pub mtime_ns: u64,
    /// Status-change time, ns since the Unix epoch (0 where unknown).
    #[serde(default)]
    pub ctime_ns: u64,
    /// Inode number (0 where unknown).
    #[serde(default)]
    pub ino: u64,
    /// Device number (0 where unknown).
    #[serde(default)]
    pub dev: u64,
}

impl FileStamp {
    /// The stamp of a file's metadata.
    pub fn of(meta: &std::fs::Metadata) -> FileStamp {
        #[cfg(unix)]
        let (ctime_ns, ino, dev) = {
            use std::os::unix::fs::MetadataExt;
            let ctime = u64::try_from(meta.ctime()).unwrap_or(0);
            let nsec = u64::try_from(meta.ctime_nsec()).unwrap_or(0);
            (
                ctime.saturating_mul(1_000_000_000).saturating_add(nsec),
                meta.ino(),
                meta.dev(),
            )
        };
        #[cfg(not(unix))]
        let (ctime_ns, ino, dev) = (0, 0, 0);
        FileStamp {
            size: meta.len(),
            mtime_ns: meta.modified().map_or(0, system_time_ns),
            ctime_ns,
            ino,
            dev,
        }
    }
}

/// `t` as ns since the Unix epoch, 0 if earlier.
pub fn system_time_ns(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Another asset's outputs, as a step used them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DependencyUse {
    /// The asset depended on.
    pub asset: AssetPath,
    /// Its [`Record::outputs_hash`] when used.
    pub outputs_hash: ContentHash,
}

/// One output of a step, stored as a blob.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputRecord {
    /// Empty for the main output; otherwise the sub-resource label (`asset#label`).
    pub label: String,
    /// What the bytes are: `bytes`, `text`, `image`, or a user processor's kind.
    pub kind: String,
    /// Length of the blob.
    pub size: u64,
    /// blake3 of the blob: its name in the store.
    pub hash: ContentHash,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_serialize_readably() {
        let present = Input {
            path: "assets/a.png".into(),
            state: InputState::Present {
                stamp: FileStamp {
                    size: 3,
                    mtime_ns: 7,
                    ctime_ns: 8,
                    ino: 9,
                    dev: 10,
                },
                hash: ContentHash::of(b"abc"),
            },
        };
        let absent = Input {
            path: "assets/b.json".into(),
            state: InputState::Absent { absent: true },
        };
        let json = serde_json::to_string(&[&present, &absent]).unwrap();
        assert!(
            json.contains(
                r#"{"path":"assets/a.png","size":3,"mtime_ns":7,"ctime_ns":8,"ino":9,"dev":10,"hash":""#
            ),
            "{json}"
        );
        assert!(
            json.contains(r#"{"path":"assets/b.json","absent":true}"#),
            "{json}"
        );
        let back: Vec<Input> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, vec![present, absent]);
    }

    #[test]
    fn inputs_read_back_as_the_derived_reader_read_them() {
        let hash = ContentHash::of(b"abc");
        let read = |json: &str| serde_json::from_str::<Input>(json);
        // A stamp from before ctime, inode and device were recorded, and a
        // key this version does not know: both as before.
        let old = read(&format!(
            r#"{{"path":"a.png","size":3,"mtime_ns":7,"later":[1,{{"x":2}}],"hash":"{hash}"}}"#
        ))
        .unwrap();
        let stamp = FileStamp {
            size: 3,
            mtime_ns: 7,
            ctime_ns: 0,
            ino: 0,
            dev: 0,
        };
        assert_eq!(old.state, InputState::Present { stamp, hash });
        let unsettled = read(r#"{"unsettled":true,"path":"b.png"}"#).unwrap();
        assert_eq!(unsettled.state, InputState::Unsettled { unsettled: true });
        let round = serde_json::to_string(&unsettled).unwrap();
        assert_eq!(read(&round).unwrap(), unsettled);
        // A present file with part of its stamp is neither state.
        let error = read(r#"{"path":"c.png","size":3}"#).unwrap_err();
        assert!(error.to_string().contains("`c.png` is neither"), "{error}");
        assert!(read(r#"{"absent":true}"#).is_err(), "no path");
        assert!(
            read(&format!(
                r#"{{"path":"d","size":1,"mtime_ns":1,"hash":"{}"}}"#,
                "g".repeat(64)
            ))
            .is_err()
        );
    }

    #[test]
    fn step_keys_separate_every_field() {
        let a = AssetPath::new("a.png").unwrap();
        let base = step_key("image", 1, None, "{}", &a, "dev");
        assert_ne!(base, step_key("image", 2, None, "{}", &a, "dev"));
        assert_ne!(base, step_key("image", 1, Some(7), "{}", &a, "dev"));
        assert_ne!(base, step_key("copy", 1, None, "{}", &a, "dev"));
        assert_ne!(base, step_key("image", 1, None, r#"{"x":1}"#, &a, "dev"));
        assert_ne!(
            base,
            step_key(
                "image",
                1,
                None,
                "{}",
                &AssetPath::new("b.png").unwrap(),
                "dev"
            )
        );
        assert_ne!(base, step_key("image", 1, None, "{}", &a, "release"));
        assert_eq!(base, step_key("image", 1, None, "{}", &a, "dev"));
    }
}
