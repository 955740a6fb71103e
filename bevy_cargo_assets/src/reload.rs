//! Hot reload: an [`AssetWatcher`] fed by `cargo assets watch`'s reload
//! notices, so a running Bevy game reloads what a save changed, in place.
//!
//! A thread polls a [`ReloadClient`] (it never blocks the game, and it
//! reconnects when the watcher restarts). Each notice names a rebuilt parcel
//! file, the patch to read it through if `watch` wrote one, and the
//! resources that changed. The parcel is served from then on ahead of
//! every other ([`Parcels::reload`]): a game that embeds the parcel with
//! `include_parcel!` reads the rebuilt one from then on. Each changed
//! resource that is a file's (not an atlas page or a sub-resource) becomes
//! an [`AssetSourceEvent::ModifiedAsset`], and Bevy reloads the handles
//! that loaded it: a repainted sprite is cut from its new page.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use assets_runtime::reload::ReloadClient;
use bevy_asset::io::{AssetSourceEvent, AssetWatcher};

use crate::source::Parcels;

/// How often the notices are polled.
const POLL: Duration = Duration::from_millis(20);

/// Listens to `cargo assets watch` on `127.0.0.1:port` until dropped.
pub struct ReloadWatcher {
    stop: Arc<AtomicBool>,
}

impl AssetWatcher for ReloadWatcher {}

impl Drop for ReloadWatcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl ReloadWatcher {
    /// Starts listening; events go to `sender`. `None` if no thread can be
    /// started or the address is not one.
    pub fn start(
        port: u16,
        parcels: Parcels,
        sender: async_channel::Sender<AssetSourceEvent>,
    ) -> Option<ReloadWatcher> {
        let mut client = ReloadClient::new(("127.0.0.1", port)).ok()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("cargo-assets reload".into())
            .spawn(move || {
                while !stopped.load(Ordering::Relaxed) {
                    for notice in client.poll() {
                        if parcels
                            .reload(&notice.path, notice.patch.as_deref())
                            .is_err()
                        {
                            // Half-written as we looked: the next notice reopens it.
                            continue;
                        }
                        for name in notice
                            .changed
                            .iter()
                            .filter(|n| crate::source::is_file_name(n))
                        {
                            let event = AssetSourceEvent::ModifiedAsset(name.into());
                            if sender.send_blocking(event).is_err() {
                                return;
                            }
                        }
                    }
                    std::thread::sleep(POLL);
                }
            })
            .ok()?;
        Some(ReloadWatcher { stop })
    }
}
