//! The host's view of one handler call: one struct per store, built from
//! the effective grants. WASI starts empty (no env, no args, no sockets, no
//! preopens) and is granted piece by piece.

use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use wasmtime::component::ResourceTable;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::host_api::{LogLine, Services};
use super::limits::{Limiter, Limits};
use crate::skill::Capabilities;

/// Bytes of guest stdout/stderr kept (a panic message lands on stderr).
const STDIO_CAPTURE: usize = 16 * 1024;

pub(crate) struct HostState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) http: WasiHttpCtx,
    pub(crate) http_guard: HttpGuard,
    pub(crate) limiter: Limiter,
    pub(crate) skill: String,
    pub(crate) capabilities: Capabilities,
    pub(crate) services: Services,
    pub(crate) log: Vec<LogLine>,
    pub(crate) log_budget: usize,
    pub(crate) log_truncated: bool,
    /// Denials and notable host events, for the run record.
    pub(crate) events: Vec<String>,
    pub(crate) stdout: MemoryOutputPipe,
    pub(crate) stderr: MemoryOutputPipe,
}

/// Where the handler's files are: its skill folder and the workspace.
#[derive(Debug, Clone)]
pub struct FileRoots {
    pub skill_dir: PathBuf,
    pub workspace: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum GrantPathError {
    #[error("file grant `{0}` must be a relative path without `..`")]
    NotRelative(String),
    #[error("file grant `{path}`: {message}")]
    Unavailable { path: String, message: String },
}

impl HostState {
    pub(crate) fn new(
        skill: &str,
        capabilities: Capabilities,
        limits: Limits,
        services: Services,
        roots: &FileRoots,
        allow_private: Vec<std::net::IpAddr>,
    ) -> Result<Self, GrantPathError> {
        let stdout = MemoryOutputPipe::new(STDIO_CAPTURE);
        let stderr = MemoryOutputPipe::new(STDIO_CAPTURE);
        let mut b = WasiCtxBuilder::new();
        b.stdout(stdout.clone())
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        // Write grants first: a path granted both ways is preopened once, writable.
        let mut opened: Vec<String> = Vec::new();
        for (paths, write) in [
            (&capabilities.files.write, true),
            (&capabilities.files.read, false),
        ] {
            for declared in paths {
                let (host, guest) = resolve_grant_path(declared, roots)?;
                if opened.contains(&guest) {
                    continue;
                }
                let perms = if write {
                    FsPerms::ReadWrite
                } else {
                    FsPerms::ReadOnly
                };
                b.preopened_dir(&host, &guest, perms)
                    .map_err(|e| GrantPathError::Unavailable {
                        path: declared.clone(),
                        message: e.to_string(),
                    })?;
                opened.push(guest);
            }
        }
        let events = Arc::new(Mutex::new(Vec::new()));
        Ok(HostState {
            wasi: b.build(),
            table: ResourceTable::new(),
            http: WasiHttpCtx::new(),
            http_guard: HttpGuard {
                granted_hosts: capabilities.http.clone(),
                allow_private,
                events,
            },
            limiter: Limiter::new(limits),
            skill: skill.to_owned(),
            capabilities,
            services,
            log: Vec::new(),
            log_budget: limits.log_bytes,
            log_truncated: false,
            events: Vec::new(),
            stdout,
            stderr,
        })
    }

    /// Host events from every source, in order of kind.
    pub(crate) fn take_events(&mut self) -> Vec<String> {
        let mut out = std::mem::take(&mut self.events);
        if let Ok(mut http) = self.http_guard.events.lock() {
            out.append(&mut http);
        }
        out
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
    let unavailable = |message: String| GrantPathError::Unavailable {
        path: declared.to_owned(),
        message,
    };
    let canonical_root = root
        .canonicalize()
        .map_err(|e| unavailable(format!("{}: {e}", root.display())))?;
    let host = canonical_root
        .join(rel_path)
        .canonicalize()
        .map_err(|e| unavailable(format!("does not exist ({e})")))?;
    // Component-wise containment on symlink-free paths.
    if !host.starts_with(&canonical_root) {
        return Err(unavailable(format!(
            "resolves to {}, outside {}",
            host.display(),
            canonical_root.display()
        )));
    }
    if !host.is_dir() {
        return Err(unavailable("is not a directory".into()));
    }
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

impl WasiHttpView for HostState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.http_guard,
        }
    }
}

/// wasi:http hooks that put every outgoing request through the network
/// guard before anything is sent.
pub(crate) struct HttpGuard {
    granted_hosts: Vec<String>,
    allow_private: Vec<std::net::IpAddr>,
    events: Arc<Mutex<Vec<String>>>,
}

type SendResult = wasmtime_wasi_http::Result<(
    http::Response<wasmtime_wasi_http::WasiBody>,
    Box<dyn std::future::Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
)>;

impl wasmtime_wasi_http::WasiHttpHooks for HttpGuard {
    fn send_request(
        &mut self,
        mut request: http::Request<wasmtime_wasi_http::WasiBody>,
        options: Option<wasmtime_wasi_http::RequestOptions>,
        fut: Box<dyn std::future::Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
    ) -> Box<dyn std::future::Future<Output = SendResult> + Send> {
        let granted = self.granted_hosts.clone();
        let allow_private = self.allow_private.clone();
        let events = self.events.clone();
        Box::new(async move {
            use http_body_util::BodyExt;
            let _ = fut;
            let uri = request.uri().clone();
            let host = uri.host().unwrap_or("").to_owned();
            let https = uri.scheme() == Some(&http::uri::Scheme::HTTPS);
            let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
            let checked = match crate::netguard::check(
                &host,
                port,
                &granted,
                &allow_private,
                Duration::from_secs(5),
            )
            .await
            {
                Ok(c) => c,
                Err(denied) => {
                    if let Ok(mut ev) = events.lock() {
                        ev.push(format!("denied: http {uri}: {denied}"));
                    }
                    return Err(wasmtime_wasi_http::Error::HttpRequestDenied);
                }
            };
            if let Ok(mut ev) = events.lock() {
                ev.push(format!(
                    "http {} {uri} via {}",
                    request.method(),
                    checked.addr
                ));
            }
            // Plain HTTP connects to the address that was checked, so a
            // second DNS answer cannot redirect it. HTTPS keeps the name for
            // certificate verification; the certificate then binds the peer.
            if !https {
                let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
                if let Ok(pinned) = http::Uri::builder()
                    .scheme("http")
                    .authority(checked.addr.to_string())
                    .path_and_query(path)
                    .build()
                {
                    *request.uri_mut() = pinned;
                }
            }
            let (response, io) = wasmtime_wasi_http::default_send_request(request, options).await?;
            Ok((
                response.map(BodyExt::boxed_unsync),
                Box::new(io) as Box<dyn std::future::Future<Output = _> + Send>,
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grant_paths_stay_inside_their_root() {
        let d = tempfile::tempdir().expect("tempdir");
        let skill = d.path().join("skill");
        std::fs::create_dir_all(skill.join("data")).expect("mkdir");
        std::fs::create_dir_all(d.path().join("ws/notes")).expect("mkdir");
        let roots = FileRoots {
            skill_dir: skill.clone(),
            workspace: d.path().join("ws"),
        };
        let (host, guest) = resolve_grant_path("data/", &roots).expect("inside");
        assert!(host.ends_with("skill/data"));
        assert_eq!(guest, "data");
        let (_, guest) = resolve_grant_path("workspace:notes", &roots).expect("inside");
        assert_eq!(guest, "/workspace/notes");
        for bad in ["../", "/etc", "data/../..", "", "workspace:../x"] {
            assert!(
                matches!(
                    resolve_grant_path(bad, &roots),
                    Err(GrantPathError::NotRelative(_))
                ),
                "{bad:?}"
            );
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc", skill.join("etc")).expect("symlink");
            let e = resolve_grant_path("etc", &roots).expect_err("symlink out");
            assert!(e.to_string().contains("outside"), "{e}");
        }
    }
}
