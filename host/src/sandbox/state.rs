//! The host's view of one handler call: one struct per store, built from
//! the effective grants. WASI starts empty (no env, no args, no sockets, no
//! preopens) and is granted piece by piece.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use wasmtime::component::ResourceTable;
use wasmtime_wasi::filesystem::WasiFilesystemCtxView;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::Entropy;
use super::host_api::LogLine;
use super::host_budget::HostBudget;
use super::limits::{Limiter, Limits};
use crate::grants::file_guard::{FsGuard, GuardedFsView};
use crate::grants::http_guard::HttpGuard;
use crate::grants::{CallSetup, CallStates, Events, Services};
use crate::paths::{ControlPathDenied, ControlPaths, OwnSkill};
use crate::skill::Capabilities;

/// Bytes of guest stdout/stderr kept (a panic message lands on stderr).
const STDIO_CAPTURE: usize = 16 * 1024;

/// Bytes of one HTTP header `fields` object. Headers of real requests are
/// a few KiB; the host budget bounds how many such objects a call holds.
const HTTP_FIELDS_BYTES: usize = 64 * 1024;

pub(crate) struct HostState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) http: WasiHttpCtx,
    pub(crate) http_guard: HttpGuard,
    pub(crate) limiter: Limiter,
    /// Each capability's state for this call, a field each (see
    /// `grants::CallStates`): its host functions reach it by that field.
    pub(crate) calls: CallStates,
    pub(crate) log: Vec<LogLine>,
    pub(crate) log_budget: usize,
    pub(crate) log_truncated: bool,
    /// Denials and notable host events, for the run record.
    pub(crate) events: Events,
    pub(crate) stdout: MemoryOutputPipe,
    pub(crate) stderr: MemoryOutputPipe,
    pub(crate) fs_guard: FsGuard,
    /// Host memory charged to this call.
    pub(crate) budget: Arc<HostBudget>,
}

/// Where the handler's files are: its skill folder and the workspace, and
/// the host's own paths that no grant may reach.
#[derive(Debug, Clone)]
pub struct FileRoots {
    pub skill_dir: PathBuf,
    pub workspace: PathBuf,
    /// The skill's SKILL.md and handler: never writable by the handler.
    pub skill_files: Vec<PathBuf>,
    pub control: Arc<ControlPaths>,
}

/// Why a declared file grant cannot be opened for a call. An I/O cause is
/// the `source`, shown by `{:#}` and [`crate::types::Chain`].
#[derive(Debug, thiserror::Error)]
pub enum GrantPathError {
    #[error("file grant `{0}` must be a relative path without `..`")]
    NotRelative(String),
    #[error("file grant `{path}`: {}", .root.display())]
    Root {
        path: String,
        root: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    #[error("file grant `{path}`: does not exist")]
    Missing {
        path: String,
        #[source]
        cause: std::io::Error,
    },
    #[error("file grant `{path}`: resolves to {}, outside {}", .resolved.display(), .root.display())]
    Outside {
        path: String,
        resolved: PathBuf,
        root: PathBuf,
    },
    #[error("file grant `{path}`: is not a directory")]
    NotADirectory { path: String },
    #[error("file grant `{path}`")]
    Preopen {
        path: String,
        #[source]
        cause: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("file grant `{path}` is refused: {reason}")]
    ControlPath {
        path: String,
        reason: ControlPathDenied,
    },
}

/// What the host gives one call besides its grants: how its outbound HTTP
/// is judged, the budget its host memory is charged to, and where its
/// clocks and random numbers come from.
pub(crate) struct Ambient {
    pub(crate) net: crate::grants::netguard::NetPolicy,
    pub(crate) budget: Arc<HostBudget>,
    pub(crate) entropy: Entropy,
}

/// Preopens the granted folders, write grants first (a path granted both
/// ways is preopened once, writable); returns the writable host paths.
fn preopen_grants(
    b: &mut WasiCtxBuilder,
    capabilities: &Capabilities,
    roots: &FileRoots,
) -> Result<Vec<PathBuf>, GrantPathError> {
    let mut opened: Vec<String> = Vec::new();
    let mut writable: Vec<PathBuf> = Vec::new();
    for (paths, write) in [
        (&capabilities.files.write, true),
        (&capabilities.files.read, false),
    ] {
        for declared in paths {
            let (host, guest) = resolve_grant_path(declared, roots, write)?;
            if opened.contains(&guest) {
                continue;
            }
            if write {
                writable.push(host.clone());
            }
            let perms = if write {
                FsPerms::ReadWrite
            } else {
                FsPerms::ReadOnly
            };
            b.preopened_dir(&host, &guest, perms)
                .map_err(|e| GrantPathError::Preopen {
                    path: declared.clone(),
                    cause: e.into(),
                })?;
            opened.push(guest);
        }
    }
    Ok(writable)
}

impl HostState {
    pub(crate) fn new(
        skill: &str,
        capabilities: Capabilities,
        limits: Limits,
        services: Services,
        roots: &FileRoots,
        ambient: Ambient,
    ) -> Result<Self, GrantPathError> {
        let Ambient {
            net,
            budget,
            entropy,
        } = ambient;
        let stdout = MemoryOutputPipe::new(STDIO_CAPTURE);
        let stderr = MemoryOutputPipe::new(STDIO_CAPTURE);
        let mut b = WasiCtxBuilder::new();
        b.stdout(stdout.clone())
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        let writable = preopen_grants(&mut b, &capabilities, roots)?;
        for c in crate::grants::CAPABILITIES {
            c.configure_wasi(&capabilities, &mut b);
        }
        clocks_and_random(&mut b, entropy);
        let events = Events::default();
        let mut table = ResourceTable::new();
        table.set_max_capacity(limits.resources);
        let mut http = WasiHttpCtx::new();
        http.set_field_size_limit(HTTP_FIELDS_BYTES);
        Ok(HostState {
            wasi: b.build(),
            table,
            http,
            http_guard: HttpGuard::new(capabilities.http.clone(), net, events.clone()),
            limiter: Limiter::new(limits),
            calls: CallStates::new(
                &CallSetup {
                    skill,
                    granted: &capabilities,
                    events: &events,
                },
                &services,
            ),
            log: Vec::new(),
            log_budget: limits.log_bytes,
            log_truncated: false,
            events,
            stdout,
            stderr,
            fs_guard: FsGuard::new(limits.open_files, limits.file_quota_bytes, writable),
            budget,
        })
    }

    pub(crate) fn event(&self, event: String) {
        self.events.note(event);
    }

    /// Host events from every source.
    pub(crate) fn take_events(&mut self) -> Vec<String> {
        for d in std::mem::take(&mut self.fs_guard.denied) {
            self.event(d);
        }
        self.events.take()
    }
}

/// Where a call's monotonic clock starts: at least this (about 13 days)
/// plus a draw below [`MONOTONIC_SPAN_NS`] (about 417 days), for every
/// call alike. Far from zero, far from overflowing.
const MONOTONIC_FLOOR_NS: u64 = 1 << 50;
const MONOTONIC_SPAN_NS: u64 = 1 << 55;

/// Every call's clocks and random numbers, a run's and a gate case's
/// alike, from one constructor: the wall clock is the real one, the
/// monotonic clock starts at an offset drawn per call, and the three
/// random sources are seeded per call. Only where the draws come from
/// differs ([`Entropy`]): the host's random numbers for a run, the
/// gate's seed for a case, which makes both the same distribution.
fn clocks_and_random(b: &mut WasiCtxBuilder, entropy: Entropy) {
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    let mut draw = match entropy {
        Entropy::Host => StdRng::from_rng(&mut rand::rng()),
        Entropy::Seeded(seed) => StdRng::seed_from_u64(seed),
    };
    let mut secure_seed = [0u8; 32];
    draw.fill_bytes(&mut secure_seed);
    let insecure = StdRng::seed_from_u64(draw.next_u64());
    let insecure_seed = u128::from(draw.next_u64()) << 64 | u128::from(draw.next_u64());
    let at_start = MONOTONIC_FLOOR_NS + draw.next_u64() % MONOTONIC_SPAN_NS;
    b.wall_clock(RealWallClock)
        .monotonic_clock(OffsetMonotonicClock {
            started: std::time::Instant::now(),
            at_start,
        })
        .secure_random(StdRng::from_seed(secure_seed))
        .insecure_random(insecure)
        .insecure_random_seed(insecure_seed);
}

/// The host's wall clock. No call sees another time: a run must show the
/// real one, so a gate case cannot be shifted either (docs/gate.md).
struct RealWallClock;

impl wasmtime_wasi::HostWallClock for RealWallClock {
    fn resolution(&self) -> Duration {
        Duration::from_nanos(1)
    }
    fn now(&self) -> Duration {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
    }
}

/// A monotonic clock (nanoseconds) that reads `at_start` when the call
/// starts and advances in real time.
struct OffsetMonotonicClock {
    started: std::time::Instant,
    at_start: u64,
}

impl wasmtime_wasi::HostMonotonicClock for OffsetMonotonicClock {
    fn resolution(&self) -> u64 {
        1
    }
    fn now(&self) -> u64 {
        let elapsed = u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.at_start.saturating_add(elapsed)
    }
}

/// Maps a declared path to (host folder, guest path). Skill paths are
/// relative to the skill folder and appear under the same relative name;
/// `workspace:PATH` is relative to the workspace and appears as
/// `/workspace/PATH`. The host folder must exist and, with symlinks
/// resolved, stay inside its root.
fn resolve_grant_path(
    declared: &str,
    roots: &FileRoots,
    write: bool,
) -> Result<(PathBuf, String), GrantPathError> {
    let (root, rel, guest_prefix) = match declared.strip_prefix("workspace:") {
        Some(rel) => (&roots.workspace, rel, "/workspace/"),
        None => (&roots.skill_dir, declared, ""),
    };
    let rel = rel.trim().trim_end_matches('/');
    let rel_path = Path::new(rel);
    if rel.is_empty() && guest_prefix.is_empty()
        || !rel_path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(GrantPathError::NotRelative(declared.to_owned()));
    }
    let path = || declared.to_owned();
    let canonical_root = root.canonicalize().map_err(|cause| GrantPathError::Root {
        path: path(),
        root: root.clone(),
        cause,
    })?;
    let host = canonical_root
        .join(rel_path)
        .canonicalize()
        .map_err(|cause| GrantPathError::Missing {
            path: path(),
            cause,
        })?;
    // Component-wise containment on symlink-free paths.
    if !host.starts_with(&canonical_root) {
        return Err(GrantPathError::Outside {
            path: path(),
            resolved: host,
            root: canonical_root,
        });
    }
    if !host.is_dir() {
        return Err(GrantPathError::NotADirectory { path: path() });
    }
    let own = OwnSkill {
        dir: &roots.skill_dir,
        defining_files: &roots.skill_files,
    };
    roots
        .control
        .check(&host, Some(own), write)
        .map_err(|reason| GrantPathError::ControlPath {
            path: path(),
            reason,
        })?;
    let guest = if rel.is_empty() || rel == "." {
        guest_prefix.trim_end_matches('/').to_owned()
    } else {
        format!("{guest_prefix}{rel}")
    };
    Ok((host, guest))
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl HostState {
    /// The call's `wasi:filesystem`, behind the `files` capability's guard.
    pub(super) fn guarded_fs(&mut self) -> GuardedFsView<'_> {
        let fs = WasiFilesystemCtxView {
            ctx: self.wasi.filesystem(),
            table: &mut self.table,
        };
        GuardedFsView::new(fs, &mut self.fs_guard)
    }
}

impl WasiHttpView for HostState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.http_guard,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots(d: &Path) -> FileRoots {
        let skill = d.join("skills/s");
        FileRoots {
            skill_dir: skill.clone(),
            workspace: d.join("ws"),
            skill_files: vec![skill.join("SKILL.md"), skill.join("handler/h.wasm")],
            control: Arc::new(ControlPaths {
                private: vec![
                    d.join("ws/skillhost.toml"),
                    d.join("ws/.skillhost"),
                    d.join("home"),
                ],
                skill_roots: vec![d.join("skills"), d.join("ws/.agents/skills")],
            }),
        }
    }

    #[test]
    fn grant_paths_stay_inside_their_root() {
        let d = tempfile::tempdir().expect("tempdir");
        let d = d.path().canonicalize().expect("canonical");
        let roots = roots(&d);
        let skill = roots.skill_dir.clone();
        std::fs::create_dir_all(skill.join("data")).expect("mkdir");
        std::fs::create_dir_all(d.join("ws/notes")).expect("mkdir");
        let (host, guest) = resolve_grant_path("data/", &roots, false).expect("inside");
        assert!(host.ends_with("skills/s/data"));
        assert_eq!(guest, "data");
        let (_, guest) = resolve_grant_path("workspace:notes", &roots, true).expect("inside");
        assert_eq!(guest, "/workspace/notes");
        for bad in ["../", "/etc", "data/../..", "", "workspace:../x"] {
            assert!(
                matches!(
                    resolve_grant_path(bad, &roots, false),
                    Err(GrantPathError::NotRelative(_))
                ),
                "{bad:?}"
            );
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc", skill.join("etc")).expect("symlink");
            let e = resolve_grant_path("etc", &roots, false).expect_err("symlink out");
            assert!(e.to_string().contains("outside"), "{e}");
        }
    }

    #[test]
    fn no_grant_reaches_the_hosts_control_paths() {
        let d = tempfile::tempdir().expect("tempdir");
        let d = d.path().canonicalize().expect("canonical");
        let roots = roots(&d);
        for dir in [
            "ws/.skillhost/skills/other",
            "ws/.agents/skills/evil",
            "skills/s/handler",
            "skills/other",
        ] {
            std::fs::create_dir_all(d.join(dir)).expect("mkdir");
        }
        std::fs::write(d.join("ws/skillhost.toml"), "").expect("write");
        let refused = |declared: &str, write: bool| {
            matches!(
                resolve_grant_path(declared, &roots, write),
                Err(GrantPathError::ControlPath { .. })
            )
        };
        // The workspace itself covers skillhost.toml, .skillhost and a skill root.
        assert!(refused("workspace:.", true));
        assert!(refused("workspace:.", false));
        // Inside the state folder or another skill root.
        assert!(refused("workspace:.skillhost", false));
        assert!(refused("workspace:.skillhost/skills/other", true));
        assert!(refused("workspace:.agents", true));
        assert!(refused("workspace:.agents/skills/evil", false));
        // The skill's own folder: readable; not writable where it holds
        // SKILL.md or the handler.
        assert!(resolve_grant_path(".", &roots, false).is_ok());
        assert!(refused(".", true));
        assert!(refused("handler", true));
        assert!(resolve_grant_path("handler", &roots, false).is_ok());
        let e = resolve_grant_path("workspace:.", &roots, true).expect_err("refused");
        assert!(e.to_string().contains("covers skillhost's own"), "{e}");
    }
}
