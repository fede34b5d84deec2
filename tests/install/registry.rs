//! A ClawHub-compatible registry on this machine: references, versions, what it is trusted for.

use super::*;

/// One skill the registry serves.
#[derive(Clone)]
struct Listing {
    owner: &'static str,
    slug: &'static str,
    /// Versions and their zips, oldest first; the last is `latestVersion`.
    versions: Vec<(&'static str, Vec<u8>)>,
    /// `moderation` as the registry sends it (absent when clean).
    moderation: Option<Value>,
    /// The owner handle the metadata names, when it lies.
    claimed_owner: Option<&'static str>,
    /// Send downloads in chunks, without a Content-Length.
    chunked: bool,
}

struct Registry {
    base: String,
    requests: Arc<Mutex<Vec<String>>>,
    _rt: tokio::runtime::Runtime,
}

impl Registry {
    fn start(listings: Vec<Listing>) -> Registry {
        let rt = runtime();
        let listener = rt
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        rt.spawn(serve(listener, requests.clone(), Arc::new(listings)));
        Registry {
            base,
            requests,
            _rt: rt,
        }
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("lock").clone()
    }

    fn config(&self) -> InstallConfig {
        InstallConfig {
            registry: self.base.clone(),
            ..InstallConfig::default()
        }
    }
}

/// Accepts connections until the listener fails, noting each request's URI
/// in `seen` and answering it from `listings`.
async fn serve(
    listener: tokio::net::TcpListener,
    seen: Arc<Mutex<Vec<String>>>,
    listings: Arc<Vec<Listing>>,
) {
    use hyper::service::service_fn;
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        let (seen, listings) = (seen.clone(), listings.clone());
        tokio::spawn(async move {
            let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                let uri = req.uri().to_string();
                seen.lock().expect("lock").push(uri);
                let response = respond(answer(&listings, req.uri()));
                async move { Ok::<_, std::convert::Infallible>(response) }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        });
    }
}

/// An HTTP response carrying `reply`, its body in 64 KiB chunks (no
/// Content-Length) when the reply says so.
fn respond((status, ctype, body, chunked): Reply) -> hyper::Response<Body> {
    use http_body_util::{BodyExt, Full, StreamBody};
    use hyper::body::{Bytes, Frame};
    let body = if chunked {
        let frames: Vec<_> = body
            .chunks(64 << 10)
            .map(|c| Ok::<_, std::convert::Infallible>(Frame::data(Bytes::copy_from_slice(c))))
            .collect();
        StreamBody::new(futures::stream::iter(frames)).boxed()
    } else {
        Full::new(Bytes::from(body)).boxed()
    };
    hyper::Response::builder()
        .status(status)
        .header("content-type", ctype)
        .body(body)
        .expect("response")
}

type Body = http_body_util::combinators::BoxBody<hyper::body::Bytes, std::convert::Infallible>;

/// Status, content type, body, and whether to send it in chunks.
type Reply = (u16, &'static str, Vec<u8>, bool);

/// The registry's answer to one request, in ClawHub's v1 shapes.
fn answer(listings: &[Listing], uri: &hyper::Uri) -> Reply {
    let query: BTreeMap<String, String> = uri
        .query()
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .into_owned()
                .collect()
        })
        .unwrap_or_default();
    let find = |slug: &str| {
        listings.iter().find(|l| {
            l.slug == slug
                && query
                    .get("ownerHandle")
                    .is_none_or(|o| o.eq_ignore_ascii_case(l.owner))
        })
    };
    let path = uri.path();
    if let Some(slug) = path.strip_prefix("/api/v1/skills/") {
        return find(slug).map_or_else(not_found, skill_metadata);
    }
    if path == "/api/v1/download" {
        return match query.get("slug").and_then(|s| find(s)) {
            Some(l) => download(l, query.get("version").map(String::as_str)),
            None => not_found(),
        };
    }
    not_found()
}

fn not_found() -> Reply {
    (
        404,
        "text/plain; charset=utf-8",
        b"Skill not found".to_vec(),
        false,
    )
}

/// `GET /api/v1/skills/SLUG`: the skill, its latest version and its owner.
fn skill_metadata(l: &Listing) -> Reply {
    let (latest, _) = l.versions.last().expect("a version");
    let body = json!({
        "skill": {
            "slug": l.slug,
            "displayName": "Demo",
            "summary": "A demo skill.",
            "tags": { "latest": latest },
            "stats": { "comments": 0, "downloads": 12, "stars": 3, "versions": l.versions.len() },
            "createdAt": 1_730_000_000_000_u64,
            "updatedAt": 1_730_000_000_000_u64,
        },
        "latestVersion": {
            "version": latest,
            "createdAt": 1_730_000_000_000_u64,
            "changelog": "Initial release.",
            "license": "MIT-0",
        },
        "metadata": null,
        "owner": {
            "handle": l.claimed_owner.unwrap_or(l.owner),
            "displayName": "Owner",
            "image": null,
        },
        "moderation": l.moderation,
    });
    (
        200,
        "application/json",
        body.to_string().into_bytes(),
        false,
    )
}

/// `GET /api/v1/download?slug=SLUG[&version=V]`: the version's zip, the
/// latest when none is asked for.
fn download(l: &Listing, version: Option<&str>) -> Reply {
    let version = version
        .map(str::to_owned)
        .or_else(|| l.versions.last().map(|v| v.0.to_owned()));
    match l.versions.iter().find(|v| Some(v.0) == version.as_deref()) {
        Some((_, zip)) => (200, "application/zip", zip.clone(), l.chunked),
        None => (
            404,
            "text/plain; charset=utf-8",
            b"Version not found".to_vec(),
            false,
        ),
    }
}

/// A version's zip as ClawHub builds one: the files at the root, deflated,
/// dated 1980-01-01, and the registry's `_meta.json`.
fn clawhub_zip(slug: &str, version: &str, files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(6));
    let meta = json!({
        "ownerId": "users_k57abc",
        "slug": slug,
        "version": version,
        "publishedAt": 1_730_000_000_000_u64,
    });
    let meta = serde_json::to_vec_pretty(&meta).expect("json");
    let mut all: Vec<(&str, &[u8])> = files.to_vec();
    all.push(("_meta.json", &meta));
    all.sort_by_key(|(p, _)| *p);
    for (path, bytes) in all {
        w.start_file(path, opts).expect("start");
        w.write_all(bytes).expect("write");
    }
    w.finish().expect("zip").into_inner()
}

/// Bytes that do not compress (xorshift).
fn noise(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn demo(owner: &'static str, slug: &'static str) -> Listing {
    Listing {
        owner,
        slug,
        versions: vec![
            (
                "1.0.0",
                clawhub_zip(
                    slug,
                    "1.0.0",
                    &[("SKILL.md", md(slug, "version: 1.0.0\n").as_bytes())],
                ),
            ),
            (
                "1.2.0",
                clawhub_zip(
                    slug,
                    "1.2.0",
                    &[
                        ("SKILL.md", md(slug, "version: 1.2.0\n").as_bytes()),
                        ("references/guide.md", b"# Guide\n"),
                    ],
                ),
            ),
        ],
        moderation: None,
        claimed_owner: None,
        chunked: false,
    }
}

#[test]
fn a_registry_reference_installs_the_latest_version_through_the_cli() {
    let env = Env::new();
    let registry = Registry::start(vec![demo("steipete", "gifgrep")]);
    let out = env.ws.run_cli(&[
        "skills",
        "install",
        "steipete/gifgrep",
        "--registry",
        &registry.base,
        "--json",
    ]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["name"], "gifgrep");
    assert_eq!(report["source"], "installed");
    assert_eq!(
        report["origin"],
        json!({
            "kind": "registry",
            "registry": registry.base,
            "owner": "steipete",
            "slug": "gifgrep",
            "version": "1.2.0",
        })
    );
    let dir = env.installed().join("gifgrep");
    assert!(
        std::fs::read_to_string(dir.join("SKILL.md"))
            .expect("read")
            .contains("version: 1.2.0")
    );
    assert!(dir.join("references/guide.md").is_file());
    assert_eq!(
        registry.requests(),
        [
            "/api/v1/skills/gifgrep?ownerHandle=steipete",
            "/api/v1/download?slug=gifgrep&ownerHandle=steipete&version=1.2.0",
        ]
    );
    assert_eq!(
        env.catalog().get("gifgrep").map(|s| s.source),
        Some(Source::Installed)
    );
}

#[test]
fn a_registry_version_can_be_pinned_and_the_config_names_the_registry() {
    let env = Env::new();
    let registry = Registry::start(vec![demo("openclaw", "demo")]);
    let source = InstallSource::parse("@OpenClaw/demo@1.0.0", &env.ws.workspace).expect("parses");
    let installed = runtime()
        .block_on(install::install(
            &env.ws.paths(),
            &source,
            &InstallOptions::default(),
            &registry.config(),
        ))
        .expect("installs");
    assert!(matches!(
        &installed.origin,
        Origin::Registry { version, owner, .. } if version == "1.0.0" && owner == "openclaw"
    ));
    assert!(!installed.dir.join("references").exists(), "1.0.0 has none");
    assert_eq!(
        registry.requests().last().map(String::as_str),
        Some("/api/v1/download?slug=demo&ownerHandle=openclaw&version=1.0.0")
    );
}

#[test]
fn the_registry_is_trusted_for_nothing_it_does_not_prove() {
    let env = Env::new();
    let outside_rel = "../../../../outside/escaped.txt";
    let hostile_zip = clawhub_zip(
        "evil",
        "1.0.0",
        &[
            ("SKILL.md", md("evil", "").as_bytes()),
            (outside_rel, b"pwned"),
        ],
    );
    let huge = clawhub_zip(
        "huge",
        "1.0.0",
        &[
            ("SKILL.md", md("huge", "").as_bytes()),
            ("noise.bin", &noise(3 << 20)),
        ],
    );
    let registry = Registry::start(vec![
        Listing {
            claimed_owner: Some("mallory"),
            ..demo("alice", "impostor")
        },
        Listing {
            moderation: Some(json!({
                "isSuspicious": true, "isMalwareBlocked": true, "verdict": "malicious",
                "reasonCodes": ["malicious.exfiltration"], "summary": "Detected: exfiltration",
                "engineVersion": "v2.0.0", "updatedAt": 0
            })),
            ..demo("alice", "malware")
        },
        Listing {
            moderation: Some(json!({
                "isSuspicious": true, "isMalwareBlocked": false, "verdict": "suspicious",
                "reasonCodes": ["suspicious.dynamic_code_execution"],
                "summary": "Detected: suspicious.dynamic_code_execution"
            })),
            ..demo("alice", "sketchy")
        },
        Listing {
            owner: "alice",
            slug: "evil",
            versions: vec![("1.0.0", hostile_zip)],
            moderation: None,
            claimed_owner: None,
            chunked: false,
        },
        Listing {
            owner: "alice",
            slug: "huge",
            versions: vec![("1.0.0", huge.clone())],
            moderation: None,
            claimed_owner: None,
            chunked: false,
        },
        Listing {
            owner: "alice",
            slug: "huge-chunked",
            versions: vec![("1.0.0", huge.clone())],
            moderation: None,
            claimed_owner: None,
            chunked: true,
        },
    ]);
    let config = InstallConfig {
        max_archive_bytes: 1 << 20,
        ..registry.config()
    };
    let try_install = |reference: &str, options: &InstallOptions| {
        let source = InstallSource::parse(reference, &env.ws.workspace).expect("a reference");
        runtime().block_on(install::install(&env.ws.paths(), &source, options, &config))
    };
    let plain = InstallOptions::default();
    let before = env.snapshot();
    let cases: Vec<(&str, &str)> = vec![
        ("alice/impostor", "gave mallory's skill for alice/impostor"),
        ("alice/malware", "blocked by the registry as malware"),
        ("alice/sketchy", "--allow-suspicious"),
        ("alice/evil", "`..`"),
        ("alice/huge", "max_archive_bytes"),
        // No Content-Length: the bytes are counted as they arrive.
        ("alice/huge-chunked", "max_archive_bytes"),
        ("alice/nothing", "alice/nothing is not in the registry"),
        (
            "alice/evil@9.9.9",
            "alice/evil@9.9.9 is not in the registry",
        ),
    ];
    for (reference, needle) in cases {
        let e = try_install(reference, &plain).expect_err(reference);
        assert!(e.to_string().contains(needle), "{reference}: {e}");
        env.assert_no_trace(&before, reference);
    }
    assert!(!env.outside.join("escaped.txt").exists());

    let consent = InstallOptions {
        allow_suspicious: true,
        ..Default::default()
    };
    let sketchy = try_install("alice/sketchy", &consent).expect("with consent");
    assert_eq!(sketchy.name, "sketchy");
    let e = try_install("alice/malware", &consent).expect_err("never malware");
    assert!(e.to_string().contains("malware"), "{e}");
}

#[test]
fn a_registry_must_be_https_unless_it_is_this_machine() {
    let env = Env::new();
    let source = InstallSource::parse("alice/demo", &env.ws.workspace).expect("a reference");
    let config = InstallConfig {
        registry: "http://registry.example.com".into(),
        ..InstallConfig::default()
    };
    let e = runtime()
        .block_on(install::install(
            &env.ws.paths(),
            &source,
            &InstallOptions::default(),
            &config,
        ))
        .expect_err("plain http elsewhere");
    assert!(e.to_string().contains("only https"), "{e}");
}

#[test]
fn a_source_is_a_path_when_one_exists_else_a_registry_reference() {
    let env = Env::new();
    let cwd = &env.ws.workspace;
    std::fs::create_dir_all(cwd.join("alice/demo")).expect("mkdir");
    assert_eq!(
        InstallSource::parse("alice/demo", cwd).expect("a path"),
        InstallSource::Folder(cwd.join("alice/demo").canonicalize().expect("real"))
    );
    assert!(matches!(
        InstallSource::parse("clawhub:alice/demo", cwd).expect("forced registry"),
        InstallSource::Registry(_)
    ));
    assert!(matches!(
        InstallSource::parse("bob/demo", cwd).expect("no such path"),
        InstallSource::Registry(r) if r.owner == "bob"
    ));
    for missing in ["./bob/demo", "nothing-here", "a/b/c"] {
        let e = InstallSource::parse(missing, cwd).expect_err(missing);
        assert!(e.to_string().contains("neither a file"), "{missing}: {e}");
    }
}
