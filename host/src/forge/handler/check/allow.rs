//! What a handler may use: the macros it may call, the attributes and
//! derives it may carry. Anything not named here is refused.

/// Macros of the standard library a handler may call, by their name alone
/// or as `std::NAME`, `core::NAME`, `alloc::NAME` (a leading `::` too).
/// None reads a file or the environment; each one's arguments are checked
/// like the rest of the source.
pub(super) const STD_MACROS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "format",
    "format_args",
    "print",
    "println",
    "eprint",
    "eprintln",
    "write",
    "writeln",
    "vec",
    "matches",
    "panic",
    "unreachable",
    "todo",
    "unimplemented",
    "concat",
    "stringify",
    "line",
    "column",
    "module_path",
    "cfg",
    "thread_local",
];

/// The crates a standard macro may be named through.
pub(super) const STD_ROOTS: &[&str] = &["std", "core", "alloc"];

/// Macros a handler may call by this exact path (a leading `::` too).
pub(super) const PATH_MACROS: &[&[&str]] = &[
    &["skillhost_guest", "export_handler"],
    &["serde_json", "json"],
];

/// Attributes a handler may carry, by a name of one word; every other one
/// (`path`, `link`, `export_name`, `no_mangle`, `debugger_visualizer`,
/// `macro_use`, `cfg_attr` which could wrap them, ...) is refused.
pub(in crate::forge::handler) const RUST_ATTRIBUTES: &[&str] = &[
    "derive",
    "allow",
    "warn",
    "deny",
    "expect",
    "forbid",
    "inline",
    "cold",
    "must_use",
    "repr",
    "cfg",
    "doc",
    "serde",
    "non_exhaustive",
    "test",
];

/// Tools whose attributes (`#[rustfmt::skip]`, `#[clippy::...]`) are inert.
pub(super) const TOOL_ATTRIBUTES: &[&str] = &["rustfmt", "clippy"];

/// What `#[derive(...)]` may name.
pub(super) const DERIVES: &[&str] = &[
    "Debug",
    "Clone",
    "Copy",
    "PartialEq",
    "Eq",
    "PartialOrd",
    "Ord",
    "Hash",
    "Default",
    "Serialize",
    "Deserialize",
];

/// The macros rustc itself defines (rustc_builtin_macros). They are the only
/// ones that can read a file or the environment, so a `use` that names one
/// the allowlist does not hold is refused too: a second wall behind the
/// allowlist of calls, which alone decides what may be called.
pub(super) const COMPILER_MACROS: &[&str] = &[
    "asm",
    "assert",
    "cfg",
    "cfg_accessible",
    "cfg_eval",
    "cfg_select",
    "column",
    "compile_error",
    "concat",
    "concat_bytes",
    "concat_idents",
    "const_format_args",
    "env",
    "file",
    "format_args",
    "format_args_nl",
    "global_asm",
    "include",
    "include_bytes",
    "include_str",
    "line",
    "log_syntax",
    "module_path",
    "naked_asm",
    "option_env",
    "pattern_type",
    "stringify",
    "trace_macros",
];

/// Whether `path` (segments without `r#`; `global` for a leading `::`) is
/// a macro a handler may call.
pub(super) fn macro_allowed(path: &[String], global: bool) -> bool {
    let segs: Vec<&str> = path.iter().map(String::as_str).collect();
    match segs.as_slice() {
        [name] => !global && STD_MACROS.contains(name),
        [root, name] if STD_ROOTS.contains(root) && STD_MACROS.contains(name) => true,
        _ => PATH_MACROS.contains(&segs.as_slice()),
    }
}

/// Whether a `use ... as NAME` may bind `name`: never a name the
/// allowlists trust (a macro, a crate it is called through, an attribute,
/// a derive), so a rename cannot put another macro behind an allowed name.
pub(super) fn alias_allowed(name: &str) -> bool {
    let trusted = STD_MACROS
        .iter()
        .chain(STD_ROOTS)
        .chain(RUST_ATTRIBUTES)
        .chain(TOOL_ATTRIBUTES)
        .chain(DERIVES)
        .chain(PATH_MACROS.iter().flat_map(|p| p.iter()));
    !trusted.into_iter().any(|t| *t == name)
}

/// Whether `use` may name `leaf`: not a compiler macro the allowlist lacks.
pub(super) fn import_allowed(leaf: &str) -> bool {
    !COMPILER_MACROS.contains(&leaf) || STD_MACROS.contains(&leaf)
}

/// The macros a handler may call, for the model's instructions and the
/// check's messages: "`assert!`, ..., `skillhost_guest::export_handler!`, ...".
pub(in crate::forge::handler) fn allowed_macros() -> String {
    STD_MACROS
        .iter()
        .map(|m| format!("`{m}!`"))
        .chain(PATH_MACROS.iter().map(|p| format!("`{}!`", p.join("::"))))
        .collect::<Vec<_>>()
        .join(", ")
}
