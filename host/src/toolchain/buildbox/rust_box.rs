//! The box a Rust handler builds in: every path at a neutral place under
//! `/box`, no `/proc`, and nothing of the host's but the system's programs
//! and the toolchain.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::{BOX_HOME, BOX_TMP, Bind, BoxFile, BoxSpec, user_files};

/// The toolchain's sysroot in the box.
pub const BOX_TOOLCHAIN: &str = "/box/toolchain";
/// The kit's SDK folder: the crate and, beside it, the WIT it builds against.
const BOX_SDK: &str = "/box/sdk";
/// The guest SDK crate in the box, as the handler's `Cargo.toml` names it.
pub const BOX_SDK_CRATE: &str = "/box/sdk/skillhost-guest";
/// The SDK's dependencies, vendored: the only crates a build can resolve.
pub const BOX_VENDOR: &str = "/box/vendor";
/// The slot: the handler's project.
pub const BOX_SRC: &str = "/box/src";
/// This build's own target folder.
pub const BOX_TARGET: &str = "/box/target";
/// The kit's target folder, read-only: what the large files of a build's
/// own target folder link to (see [`super::stage_tree`]).
pub const BOX_KIT_TARGET: &str = "/box/kit-target";
/// CARGO_HOME: an empty tmpfs holding only the cargo config below.
const BOX_CARGO_HOME: &str = "/box/cargo";
/// The kit's tools: rustc's wrapper. A real file of the kit, not one the
/// box writes at each start: cargo keys its cache of what rustc says of
/// itself by the wrapper's modification time, and a new wrapper each build
/// made it ask rustc four times more on every build (about 250 ms).
const BOX_TOOLS: &str = "/box/tools";
/// The program the box runs.
pub const BOX_CARGO: &str = "/box/toolchain/bin/cargo";

/// Crates come from the vendored folder, never a registry.
const CARGO_CONFIG: &str = "[source.crates-io]\nreplace-with = \"box-vendor\"\n\n[source.box-vendor]\ndirectory = \"/box/vendor\"\n\n[net]\noffline = true\n";

/// rustc's wrapper. Build scripts and proc macros (units built for the
/// host, without `--target`) link with the system's `cc`: the toolchain's
/// own lld wrapper finds itself through `/proc/self/exe`, and the box has
/// no `/proc`.
const RUSTC_WRAPPER: &str = "#!/bin/sh\ncase \" $* \" in *\" --target \"*) exec \"$@\";; esac\nexec \"$@\" -C linker-features=-lld\n";

/// The folders of the kit's target a build reads but never writes: the
/// units built for the host (build scripts, proc macros and the crates
/// they link), fresh in every build. Bound read-only over the build's own
/// target folder, which holds the rest (see [`super::stage_tree`]).
pub const KIT_SHARED: [&str; 2] = ["release/deps", "release/build"];

/// Writes the tools a box binds at [`BOX_TOOLS`] into `dir`, once per kit.
pub fn write_tools(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::create_dir_all(dir)?;
    let wrapper = dir.join("rustc-wrapper");
    std::fs::write(&wrapper, RUSTC_WRAPPER)?;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o555))
}

/// The host paths a Rust build's box is made of.
#[derive(Debug, Clone)]
pub struct RustBox {
    /// The toolchain's sysroot (`rustc --print sysroot`, canonical).
    pub sysroot: PathBuf,
    /// The kit's `sdk` folder ([`super::Kit::sdk`]).
    pub sdk: PathBuf,
    /// The kit's vendored crates ([`super::Kit::vendor`]).
    pub vendor: PathBuf,
    /// The kit's tools ([`super::Kit::tools`], written by [`write_tools`]).
    pub tools: PathBuf,
    pub slot: PathBuf,
    /// This build's target folder.
    pub target: PathBuf,
    /// The kit's target folder, bound read-only at [`BOX_KIT_TARGET`] (what
    /// `target`'s large files link to) and its [`KIT_SHARED`] folders over
    /// `target`'s; None while the kit itself is built.
    pub kit_target: Option<PathBuf>,
}

impl RustBox {
    /// The box and cargo's environment in it.
    pub fn spec(&self) -> BoxSpec {
        let at = |host: &Path, at: &str| Bind::new(host, at);
        let mut data = user_files();
        data.push(BoxFile {
            text: CARGO_CONFIG.to_owned(),
            path: Path::new(BOX_CARGO_HOME).join("config.toml"),
            executable: false,
        });
        BoxSpec {
            read_only: [
                at(&self.sysroot, BOX_TOOLCHAIN),
                at(&self.sdk, BOX_SDK),
                at(&self.vendor, BOX_VENDOR),
                at(&self.tools, BOX_TOOLS),
            ]
            .into_iter()
            .chain(self.kit_target.iter().map(|kit| at(kit, BOX_KIT_TARGET)))
            .collect(),
            writable: vec![at(&self.slot, BOX_SRC), at(&self.target, BOX_TARGET)],
            read_only_over: self
                .kit_target
                .iter()
                .flat_map(|kit| {
                    KIT_SHARED.map(|rel| Bind::new(kit.join(rel), Path::new(BOX_TARGET).join(rel)))
                })
                .collect(),
            empty: vec![PathBuf::from(BOX_CARGO_HOME)],
            data,
            env: box_env(),
            chdir: PathBuf::from(BOX_SRC),
            proc: false,
        }
    }

    /// Where the build leaves `krate`'s artifact, on the host.
    pub fn artifact(&self, krate: &str) -> PathBuf {
        artifact_in(&self.target, krate)
    }
}

/// `krate`'s release artifact under the target folder `target`.
pub fn artifact_in(target: &Path, krate: &str) -> PathBuf {
    target
        .join("wasm32-wasip2/release")
        .join(format!("{}.wasm", krate.replace('-', "_")))
}

/// cargo's environment in the box: every path a box path.
fn box_env() -> Vec<(String, OsString)> {
    let toolchain = Path::new(BOX_TOOLCHAIN);
    let cargo = Path::new(BOX_CARGO_HOME);
    let path = |p: &Path| p.as_os_str().to_owned();
    vec![
        (
            "PATH".to_owned(),
            OsString::from(format!("{BOX_TOOLCHAIN}/bin:/usr/bin:/bin")),
        ),
        ("HOME".to_owned(), OsString::from(BOX_HOME)),
        ("TMPDIR".to_owned(), OsString::from(BOX_TMP)),
        ("CARGO_HOME".to_owned(), path(cargo)),
        ("RUSTC".to_owned(), path(&toolchain.join("bin/rustc"))),
        (
            "RUSTC_WRAPPER".to_owned(),
            path(&Path::new(BOX_TOOLS).join("rustc-wrapper")),
        ),
        // The loader finds rustc's own libraries through `$ORIGIN`, which
        // needs `/proc/self/exe`; the box has no `/proc`.
        ("LD_LIBRARY_PATH".to_owned(), path(&toolchain.join("lib"))),
        ("CARGO_TARGET_DIR".to_owned(), OsString::from(BOX_TARGET)),
        ("CARGO_NET_OFFLINE".to_owned(), OsString::from("true")),
        ("CARGO_TERM_COLOR".to_owned(), OsString::from("never")),
    ]
}
