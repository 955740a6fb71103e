//! [`Remote`]: the remote cache's client, on OpenDAL (see the module docs
//! of [`crate::unstable::remote`] for the design).
//!
//! The pipeline's workers are threads; OpenDAL is async. The client owns a
//! small tokio runtime: lookups started at the beginning of a build and
//! uploads run on it as tasks, bounded by one semaphore
//! ([`MAX_IN_FLIGHT`] requests at once); a worker that needs a result blocks
//! on its task. Every failure other than "not found" marks the remote
//! unavailable for the rest of the build, with one warning.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use opendal::layers::TimeoutLayer;
use opendal::{ErrorKind, Operator};
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use super::bundle;
use super::entry::{self, Entry, INLINE_MAX};
use super::{RemoteConfig, RemoteStats};
use crate::hash::ContentHash;
use crate::record::Record;
use crate::store::BlobSource;

/// Requests in flight at once, lookups and uploads together.
const MAX_IN_FLIGHT: usize = 32;

/// The most bytes of entries a writing build keeps in memory to upload
/// bundles at its end; past it, the remaining bundles are not written.
const KEPT_MAX: usize = 256 << 20;

/// The outputs of a step to upload.
pub(crate) enum Outputs {
    /// Their bytes, in order: a step that just ran.
    Bytes(Vec<Vec<u8>>),
    /// Where they are in the local cache, in order: a step fresh here,
    /// read (and checked) only if the remote lacks it.
    Stored(Vec<BlobSource>),
}

/// The stored blobs' bytes if each hashes to its expected hash.
fn read_verified(stored: &[BlobSource], expected: &[ContentHash]) -> Option<Vec<Vec<u8>>> {
    stored
        .iter()
        .zip(expected)
        .map(|(at, hash)| {
            let bytes = at.read().ok()?;
            (ContentHash::of(&bytes) == *hash).then_some(bytes)
        })
        .collect()
}

/// Registers OpenDAL's services and its HTTP transport, reqwest, with
/// TLS from rustls on ring's cryptography. Each is process-wide and set
/// once: a program that installed its own transport or crypto provider
/// keeps it.
fn install_http() {
    opendal::install_default();
    let _ = rustls::crypto::ring::default_provider().install_default();
    opendal::HttpTransporter::install_default(
        opendal_http_transport_reqwest::ReqwestTransport::default(),
    );
}

/// A connection to the remote cache for one build.
pub(crate) struct Remote {
    config: RemoteConfig,
    op: Operator,
    runtime: tokio::runtime::Runtime,
    shared: Arc<Shared>,
    /// Lookups started ahead, by result key.
    prefetched: Mutex<HashMap<ContentHash, JoinHandle<Option<Vec<u8>>>>>,
    /// Folders asked for as bundles, and the bundle of each member's key.
    bundles: Mutex<Vec<Arc<Mutex<Bundle>>>>,
    member_of: Mutex<HashMap<ContentHash, Arc<Mutex<Bundle>>>>,
    uploads: Mutex<Vec<JoinHandle<()>>>,
}

/// One folder's bundle (see [`bundle`]).
struct Bundle {
    key: ContentHash,
    members: Vec<ContentHash>,
    state: BundleState,
}

enum BundleState {
    /// The read is under way.
    Asked(JoinHandle<Option<Vec<u8>>>),
    /// Read: the members' entries not yet looked up.
    Found(HashMap<ContentHash, Vec<u8>>),
    /// Not on the remote (or unreadable): its members are looked up one by one.
    Missing,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("url", &self.config.display())
            .finish_non_exhaustive()
    }
}

/// What the tasks share with the build.
struct Shared {
    url: String,
    /// How long a whole request may take.
    timeout: std::time::Duration,
    limit: Semaphore,
    down: AtomicBool,
    warnings: Mutex<Vec<String>>,
    bytes_down: AtomicU64,
    bytes_up: AtomicU64,
    uploaded: AtomicUsize,
    rejected: AtomicUsize,
    /// Large outputs uploaded (or found present) this build.
    blobs_sent: Mutex<HashSet<ContentHash>>,
    /// The result keys of every bundle's members.
    members: Mutex<HashSet<ContentHash>>,
    /// A writing build's entries of bundle members, for the bundles the
    /// remote lacks, and their total size.
    kept: Mutex<(HashMap<ContentHash, Vec<u8>>, usize)>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    /// Marks the remote unavailable; the first failure becomes a warning.
    fn fail(&self, doing: &str, error: &opendal::Error) {
        if !self.down.swap(true, Ordering::Relaxed) {
            lock(&self.warnings).push(format!(
                "remote cache `{}` failed while {doing} ({}); building without it for the rest of this build",
                self.url,
                first_line(error)
            ));
        }
    }

    fn is_down(&self) -> bool {
        self.down.load(Ordering::Relaxed)
    }

    /// Keeps a bundle member's entry for the bundle a writing build may
    /// upload at its end (up to [`KEPT_MAX`] bytes in all).
    fn keep(&self, key: ContentHash, entry: &[u8]) {
        if !lock(&self.members).contains(&key) {
            return;
        }
        let mut kept = lock(&self.kept);
        if kept.1 + entry.len() <= KEPT_MAX {
            kept.1 += entry.len();
            if let Some(old) = kept.0.insert(key, entry.to_vec()) {
                kept.1 -= old.len();
            }
        }
    }

    /// `request`, given up on after the configured timeout as a whole:
    /// OpenDAL's timeout layer bounds each call and each I/O of a request
    /// (a write is several: its chunks, then its close), so a remote that
    /// froze mid-upload held a build for several timeouts.
    async fn bounded<T>(
        &self,
        request: impl std::future::Future<Output = opendal::Result<T>>,
    ) -> opendal::Result<T> {
        match tokio::time::timeout(self.timeout, request).await {
            Ok(result) => result,
            Err(_) => Err(opendal::Error::new(
                ErrorKind::Unexpected,
                format!("no answer within {} s", self.timeout.as_secs_f64()),
            )),
        }
    }

    /// Reads `path`; `None` when absent or the remote fails.
    async fn read(&self, op: &Operator, path: &str) -> Option<Vec<u8>> {
        if self.is_down() {
            return None;
        }
        let _permit = self.limit.acquire().await.ok()?;
        if self.is_down() {
            return None;
        }
        match self.bounded(op.read(path)).await {
            Ok(buffer) => {
                let bytes = buffer.to_vec();
                self.bytes_down
                    .fetch_add(bytes.len() as u64, Ordering::Relaxed);
                Some(bytes)
            }
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => {
                self.fail("reading", &e);
                None
            }
        }
    }

    /// Writes `path`; whether it was written.
    async fn write(&self, op: &Operator, path: &str, bytes: Vec<u8>) -> bool {
        if self.is_down() {
            return false;
        }
        let Ok(_permit) = self.limit.acquire().await else {
            return false;
        };
        let len = bytes.len() as u64;
        match self.bounded(op.write(path, bytes)).await {
            Ok(_) => {
                self.bytes_up.fetch_add(len, Ordering::Relaxed);
                true
            }
            Err(e) => {
                self.fail("writing", &e);
                false
            }
        }
    }

    /// Whether `path` exists (`None` when the remote fails).
    async fn exists(&self, op: &Operator, path: &str) -> Option<bool> {
        if self.is_down() {
            return None;
        }
        let _permit = self.limit.acquire().await.ok()?;
        match self.bounded(op.stat(path)).await {
            Ok(_) => Some(true),
            Err(e) if e.kind() == ErrorKind::NotFound => Some(false),
            Err(e) => {
                self.fail("checking for a blob", &e);
                None
            }
        }
    }
}

/// An error's first line: OpenDAL's display adds context lines.
fn first_line(error: &opendal::Error) -> String {
    let text = error.to_string();
    text.lines().next().unwrap_or_default().trim().to_owned()
}

fn entry_path(key: &ContentHash) -> String {
    format!("ac/{}", key.to_hex())
}

fn bundle_path(key: &ContentHash) -> String {
    format!("bundle/{}", key.to_hex())
}

fn blob_path(hash: &ContentHash) -> String {
    format!("cas/{}", hash.to_hex())
}

impl Remote {
    /// A client for `config`; an error says why there can be none (a URI
    /// OpenDAL does not take, a service this build lacks).
    pub fn connect(config: &RemoteConfig) -> Result<Remote, String> {
        install_http();
        let op = Operator::from_uri(config.url.as_str())
            .map_err(|e| {
                format!(
                    "remote cache `{}` cannot be used: {}",
                    config.display(),
                    first_line(&e)
                )
            })?
            .layer(
                TimeoutLayer::new()
                    .with_timeout(config.timeout)
                    .with_io_timeout(config.timeout),
            );
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("assets-remote")
            .enable_all()
            .build()
            .map_err(|e| format!("could not start the remote cache's runtime: {e}"))?;
        Ok(Remote {
            config: config.clone(),
            op,
            runtime,
            shared: Arc::new(Shared {
                url: config.display().to_owned(),
                timeout: config.timeout,
                limit: Semaphore::new(MAX_IN_FLIGHT),
                down: AtomicBool::new(false),
                warnings: Mutex::default(),
                bytes_down: AtomicU64::new(0),
                bytes_up: AtomicU64::new(0),
                uploaded: AtomicUsize::new(0),
                rejected: AtomicUsize::new(0),
                blobs_sent: Mutex::default(),
                members: Mutex::default(),
                kept: Mutex::default(),
            }),
            prefetched: Mutex::default(),
            bundles: Mutex::default(),
            member_of: Mutex::default(),
            uploads: Mutex::default(),
        })
    }

    /// The remote as shown.
    pub fn display(&self) -> &str {
        self.config.display()
    }

    /// Whether results built here are uploaded.
    pub fn writes(&self) -> bool {
        self.config.write
    }

    /// Starts looking up the entry under `key` (a [`result_key`]) ahead
    /// of [`Remote::lookup`].
    ///
    /// [`result_key`]: super::result_key
    pub fn prefetch(&self, key: ContentHash) {
        let (op, shared) = (self.op.clone(), Arc::clone(&self.shared));
        let task = self
            .runtime
            .spawn(async move { shared.read(&op, &entry_path(&key)).await });
        lock(&self.prefetched).insert(key, task);
    }

    /// Starts reading the bundle `key` of a folder whose steps' result
    /// keys are `members`, ahead of their [`Remote::lookup`]s.
    pub fn prefetch_bundle(&self, key: ContentHash, members: Vec<ContentHash>) {
        let (op, shared) = (self.op.clone(), Arc::clone(&self.shared));
        let task = self
            .runtime
            .spawn(async move { shared.read(&op, &bundle_path(&key)).await });
        let bundle = Arc::new(Mutex::new(Bundle {
            key,
            members: members.clone(),
            state: BundleState::Asked(task),
        }));
        let mut member_of = lock(&self.member_of);
        lock(&self.shared.members).extend(members.iter().copied());
        for member in members {
            member_of.insert(member, Arc::clone(&bundle));
        }
        lock(&self.bundles).push(bundle);
    }

    /// Waits for `bundle`'s read if it is under way; a bundle found missing
    /// or unreadable has its members looked up one by one from then on.
    fn settle(&self, bundle: &mut Bundle) {
        let task = match std::mem::replace(&mut bundle.state, BundleState::Missing) {
            BundleState::Asked(task) => task,
            settled => {
                bundle.state = settled;
                return;
            }
        };
        let bytes = self.runtime.block_on(task).ok().flatten();
        let members = bytes.as_deref().map(bundle::decode);
        if let Some(None) = members {
            self.reject(format!(
                "remote cache `{}` holds an unreadable bundle; ignored, its steps are looked up one by one",
                self.display()
            ));
        }
        match members.flatten() {
            Some(members) => {
                let mut found = HashMap::new();
                for (key, entry) in members {
                    if bundle.members.contains(&key) {
                        found.insert(key, entry.to_vec());
                    }
                }
                bundle.state = BundleState::Found(found);
            }
            None => {
                for &member in &bundle.members {
                    self.prefetch(member);
                }
            }
        }
    }

    /// `key`'s entry from its bundle, if it is a member of one that holds it.
    fn bundled_entry(&self, key: &ContentHash) -> Option<Vec<u8>> {
        let bundle = lock(&self.member_of).get(key).cloned()?;
        let mut bundle = lock(&bundle);
        self.settle(&mut bundle);
        match &mut bundle.state {
            BundleState::Found(entries) => entries.remove(key),
            _ => None,
        }
    }

    /// The remote's entry under `key`, if it has a readable one.
    pub fn lookup(&self, key: ContentHash) -> Option<Entry> {
        let bytes = match self.bundled_entry(&key) {
            Some(bytes) => bytes,
            None => {
                let started = lock(&self.prefetched).remove(&key);
                let bytes = match started {
                    Some(task) => self.runtime.block_on(task).ok().flatten(),
                    None if self.shared.is_down() => None,
                    None => self
                        .runtime
                        .block_on(self.shared.read(&self.op, &entry_path(&key))),
                }?;
                if self.config.write {
                    self.shared.keep(key, &bytes);
                }
                bytes
            }
        };
        let entry = entry::decode(&bytes);
        if entry.is_none() {
            self.reject(format!(
                "remote cache `{}` holds an unreadable entry for a step; ignored, the step is built here",
                self.display()
            ));
        }
        entry
    }

    /// The blobs `wanted` (hash and size), fetched in parallel, each checked
    /// against its hash; `None` if any is missing, failed or corrupt (then
    /// reported), for `asset`.
    pub fn fetch_blobs(&self, asset: &str, wanted: &[(ContentHash, u64)]) -> Option<Vec<Vec<u8>>> {
        let tasks: Vec<_> = wanted
            .iter()
            .map(|&(hash, _)| {
                let (op, shared) = (self.op.clone(), Arc::clone(&self.shared));
                self.runtime
                    .spawn(async move { shared.read(&op, &blob_path(&hash)).await })
            })
            .collect();
        let mut blobs = Vec::with_capacity(tasks.len());
        for (task, &(hash, size)) in tasks.into_iter().zip(wanted) {
            let bytes = self.runtime.block_on(task).ok().flatten()?;
            if !self.verify(asset, &hash, size, &bytes) {
                return None;
            }
            blobs.push(bytes);
        }
        Some(blobs)
    }

    /// Whether `bytes` are the output `hash` of `size` bytes; reported when not.
    pub fn verify(&self, asset: &str, hash: &ContentHash, size: u64, bytes: &[u8]) -> bool {
        let good = bytes.len() as u64 == size && ContentHash::of(bytes) == *hash;
        if !good {
            self.reject(format!(
                "remote cache `{}` returned corrupt bytes for an output of `{asset}` (they do not hash to {}); dropped, `{asset}` is built here",
                self.display(),
                &hash.to_hex()[..16]
            ));
        }
        good
    }

    fn reject(&self, warning: String) {
        self.shared.rejected.fetch_add(1, Ordering::Relaxed);
        lock(&self.shared.warnings).push(warning);
    }

    /// Uploads a step under `key`, in the background: its large outputs
    /// (unless the remote has them), then its entry.
    pub fn upload(&self, key: ContentHash, record: Record, outputs: Outputs) {
        if !self.config.write || self.shared.is_down() {
            return;
        }
        let (op, shared) = (self.op.clone(), Arc::clone(&self.shared));
        let task = self.runtime.spawn(async move {
            let member = lock(&shared.members).contains(&key);
            let mut write_entry = true;
            let outputs = match outputs {
                Outputs::Bytes(bytes) => bytes,
                Outputs::Stored(stored) => {
                    // A step fresh here: uploaded only if the remote lacks
                    // it, read anyway if its folder's bundle may need it.
                    write_entry = shared.exists(&op, &entry_path(&key)).await == Some(false);
                    if !write_entry && !member {
                        return;
                    }
                    let expected: Vec<_> = record.outputs.iter().map(|o| o.hash).collect();
                    let read =
                        tokio::task::spawn_blocking(move || read_verified(&stored, &expected));
                    match read.await {
                        Ok(Some(bytes)) => bytes,
                        _ => return,
                    }
                }
            };
            for (output, bytes) in record.outputs.iter().zip(&outputs) {
                if output.size <= INLINE_MAX || !lock(&shared.blobs_sent).insert(output.hash) {
                    continue;
                }
                let path = blob_path(&output.hash);
                match shared.exists(&op, &path).await {
                    Some(true) => {}
                    Some(false) if shared.write(&op, &path, bytes.clone()).await => {}
                    // Without its blobs, the entry is not written.
                    _ => return,
                }
            }
            let record = Record {
                reason: None,
                fetched_from: None,
                outputs_hash: Default::default(),
                ..record
            };
            let bytes = entry::encode(&record, &outputs);
            shared.keep(key, &bytes);
            if write_entry && shared.write(&op, &entry_path(&key), bytes).await {
                shared.uploaded.fetch_add(1, Ordering::Relaxed);
            }
        });
        lock(&self.uploads).push(task);
    }

    /// Uploads the bundles the remote lacks whose every member's entry this
    /// build holds (see [`bundle`]).
    fn upload_bundles(&self) {
        let bundles = std::mem::take(&mut *lock(&self.bundles));
        let mut tasks = Vec::new();
        for bundle in bundles {
            let mut bundle = lock(&bundle);
            self.settle(&mut bundle);
            if self.shared.is_down() || !matches!(bundle.state, BundleState::Missing) {
                continue;
            }
            let encoded = {
                let kept = lock(&self.shared.kept);
                let entries: Option<Vec<_>> = bundle
                    .members
                    .iter()
                    .map(|m| kept.0.get(m).map(|e| (*m, e.as_slice())))
                    .collect();
                entries.map(|entries| bundle::encode(&entries))
            };
            if let Some(bytes) = encoded {
                let (op, shared, key) = (self.op.clone(), Arc::clone(&self.shared), bundle.key);
                tasks.push(
                    self.runtime
                        .spawn(async move { shared.write(&op, &bundle_path(&key), bytes).await }),
                );
            }
        }
        for task in tasks {
            let _ = self.runtime.block_on(task);
        }
    }

    /// Warnings not yet reported: the remote's failure (once), rejected bytes.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.shared.warnings))
    }

    /// Waits for the uploads; what the build did with the remote.
    pub fn finish(&self) -> RemoteStats {
        let uploads = std::mem::take(&mut *lock(&self.uploads));
        for task in uploads {
            let _ = self.runtime.block_on(task);
        }
        // Lookups started for steps that never asked (served locally after all).
        for (_, task) in lock(&self.prefetched).drain() {
            task.abort();
        }
        if self.config.write {
            self.upload_bundles();
        }
        let s = &self.shared;
        RemoteStats {
            url: s.url.clone(),
            bytes_down: s.bytes_down.load(Ordering::Relaxed),
            uploaded: s.uploaded.load(Ordering::Relaxed),
            bytes_up: s.bytes_up.load(Ordering::Relaxed),
            rejected: s.rejected.load(Ordering::Relaxed),
            unavailable: s.is_down(),
        }
    }
}
