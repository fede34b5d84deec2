//! What a component is, without running it: its imports and exports, its
//! size, the language that built it (from the `producers` sections) and
//! whether it fits the handler world. Parsing only; no compilation, so it is
//! fast even for 20 MB interpreter-based components.

use std::collections::BTreeMap;

use serde::Serialize;
use wasmparser::component_types::ComponentEntityType;
use wasmparser::{
    ComponentExternalKind, ComponentTypeRef, KnownCustom, Parser, Payload, Validator, WasmFeatures,
};

/// Imports a handler may have: our host interface and WASI.
const ALLOWED_IMPORT_PREFIXES: &[&str] = &["skillhost:skill/", "wasi:"];

#[derive(Debug, Clone, Serialize)]
pub struct Inspection {
    pub size: usize,
    pub imports: Vec<String>,
    /// For each imported instance (by its full name, version included),
    /// the functions its type lists: toolchains list only the functions
    /// the code calls, so this is what the component can reach.
    pub import_functions: BTreeMap<String, Vec<String>>,
    pub exports: Vec<String>,
    /// Best guess of the source language, e.g. "Rust", "JavaScript".
    pub language: Option<String>,
    /// Every `producers` entry found (`field: name version`).
    pub producers: Vec<String>,
    /// Problems that stop it from running as a handler; empty if it fits.
    pub problems: Vec<String>,
    /// Bytes of the largest function body of any module inside: what
    /// compile time and memory grow with.
    pub largest_function: usize,
}

impl Inspection {
    pub fn fits_handler_world(&self) -> bool {
        self.problems.is_empty()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    #[error("not a WebAssembly component: {0}")]
    NotComponent(String),
    #[error("invalid component")]
    Invalid(#[from] wasmparser::BinaryReaderError),
}

pub fn inspect(bytes: &[u8]) -> Result<Inspection, InspectError> {
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        return Err(InspectError::NotComponent(
            "missing the \\0asm header".into(),
        ));
    }
    if bytes[4..8] == [1, 0, 0, 0] {
        return Err(InspectError::NotComponent(
            "this is a core wasm module, not a component; wrap it with `wasm-tools component new`"
                .into(),
        ));
    }
    let mut validator = Validator::new_with_features(WasmFeatures::all());
    let types = validator
        .validate_all(bytes)
        .map_err(InspectError::Invalid)?;
    let mut import_functions = BTreeMap::new();

    let mut imports = Vec::new();
    let mut exports = Vec::new();
    let mut handle_is_func = false;
    let mut producers = Vec::new();
    let mut depth = 0usize;
    let mut largest_function = 0usize;
    for payload in Parser::new(0).parse_all(bytes) {
        let payload = payload.map_err(InspectError::Invalid)?;
        match payload {
            Payload::Version { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(reader) if depth == 1 => {
                for import in reader {
                    let import = import.map_err(InspectError::Invalid)?;
                    if let ComponentTypeRef::Instance(_) = import.ty
                        && let Some(item) =
                            types.as_ref().component_item_for_import(import.name.name)
                        && let ComponentEntityType::Instance(id) = item.ty
                    {
                        let functions = types[id]
                            .exports
                            .iter()
                            .filter(|(_, e)| matches!(e.ty, ComponentEntityType::Func(_)))
                            .map(|(name, _)| name.clone())
                            .collect();
                        import_functions.insert(import.name.name.to_owned(), functions);
                    }
                    let kind = match import.ty {
                        ComponentTypeRef::Instance(_) => "instance",
                        ComponentTypeRef::Func(_) => "func",
                        ComponentTypeRef::Type(_) => "type",
                        ComponentTypeRef::Module(_) => "module",
                        ComponentTypeRef::Component(_) => "component",
                        ComponentTypeRef::Value(_) => "value",
                    };
                    imports.push(format!("{} ({kind})", import.name.name));
                }
            }
            Payload::ComponentExportSection(reader) if depth == 1 => {
                for export in reader {
                    let export = export.map_err(InspectError::Invalid)?;
                    let kind = match export.kind {
                        ComponentExternalKind::Func => "func",
                        ComponentExternalKind::Instance => "instance",
                        ComponentExternalKind::Type => "type",
                        ComponentExternalKind::Module => "module",
                        ComponentExternalKind::Component => "component",
                        ComponentExternalKind::Value => "value",
                    };
                    if export.name.name == "handle" && export.kind == ComponentExternalKind::Func {
                        handle_is_func = true;
                    }
                    exports.push(format!("{} ({kind})", export.name.name));
                }
            }
            Payload::CodeSectionEntry(body) => {
                largest_function = largest_function.max(body.range().len());
            }
            Payload::CustomSection(reader) => {
                if let KnownCustom::Producers(p) = reader.as_known() {
                    for field in p.into_iter().flatten() {
                        for value in field.values.into_iter().flatten() {
                            let entry = format!("{}: {} {}", field.name, value.name, value.version);
                            if !producers.contains(&entry) {
                                producers.push(entry);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }

    let mut problems = Vec::new();
    if !handle_is_func {
        problems.push(
            "it does not export the function `handle` of the skillhost:skill handler world"
                .to_owned(),
        );
    }
    // Type imports (`task`, `output`, ...) only name types of the instances
    // above; the instances are what must be provided.
    for import in imports.iter().filter(|i| !i.ends_with("(type)")) {
        let name = import.split(' ').next().unwrap_or(import);
        if !ALLOWED_IMPORT_PREFIXES.iter().any(|p| name.starts_with(p)) {
            problems.push(format!(
                "it imports `{name}`, which skillhost does not provide"
            ));
        }
    }
    Ok(Inspection {
        size: bytes.len(),
        language: guess_language(&producers),
        imports,
        import_functions,
        exports,
        producers,
        problems,
        largest_function,
    })
}

/// The toolchain markers that identify each language's components.
fn guess_language(producers: &[String]) -> Option<String> {
    let has = |needle: &str| producers.iter().any(|p| p.to_lowercase().contains(needle));
    let lang = if has("componentize-js") || has("componentizejs") || has("spidermonkey") {
        "JavaScript"
    } else if has("componentize-py") || has("component-init-transform") {
        // componentize-py 0.25 leaves no marker of its own; it pre-initialises
        // CPython with its `component-init-transform` crate, which nothing
        // else in our toolchains uses.
        "Python"
    } else if has("wit-bindgen-rust") {
        "Rust"
    } else if has("tinygo") || has("language: go") {
        "Go"
    } else if has("language: c++") || has("language: c_plus_plus") {
        "C++"
    } else if has("language: c11")
        || has("language: c99")
        || has("language: c17")
        || has("language: c ")
        || has("clang")
        || has("wit-bindgen-c")
    {
        // Checked before a bare `language: Rust`: the WASI preview1 adapter
        // that C components are wrapped with is written in Rust and says so.
        "C"
    } else if has("language: rust") {
        "Rust"
    } else {
        return None;
    };
    Some(lang.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_non_components_clearly() {
        assert!(matches!(
            inspect(b"hello"),
            Err(InspectError::NotComponent(_))
        ));
        let core_module = b"\0asm\x01\0\0\0";
        let e = inspect(core_module).expect_err("core module");
        assert!(e.to_string().contains("core wasm module"), "{e}");
        let e = inspect(b"\0asm\x0d\0\x01\0garbage").expect_err("garbage");
        assert!(matches!(e, InspectError::Invalid(_)), "{e}");
    }

    #[test]
    fn languages_from_producers() {
        let p = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            guess_language(&p(&["language: Rust ", "processed-by: rustc 1.95"])).as_deref(),
            Some("Rust")
        );
        assert_eq!(
            guess_language(&p(&["processed-by: componentize-py 0.17"])).as_deref(),
            Some("Python")
        );
        // What componentize-py 0.25.1 actually writes (no own marker; the
        // CPython core module says Rust).
        assert_eq!(
            guess_language(&p(&[
                "processed-by: wit-component 0.245.1",
                "language: Rust ",
                "processed-by: rustc 1.75.0 (82e1608df 2023-12-21)",
                "processed-by: component-init-transform 0.2.0"
            ]))
            .as_deref(),
            Some("Python")
        );
        // What componentize-js 0.23.0 writes: its engine is C++ and Rust.
        assert_eq!(
            guess_language(&p(&[
                "language: C11 ",
                "language: Rust ",
                "language: C_plus_plus_14 ",
                "processed-by: wit-bindgen-c 0.52.0",
                "processed-by: ComponentizeJS 0.23.0",
                "language: JavaScript "
            ]))
            .as_deref(),
            Some("JavaScript")
        );
        assert_eq!(
            guess_language(&p(&["processed-by: clang 19"])).as_deref(),
            Some("C")
        );
        // Rust components carry the C-built WASI adapter's marker too.
        assert_eq!(
            guess_language(&p(&[
                "processed-by: wit-bindgen-rust 0.45",
                "processed-by: wit-bindgen-c 0.51"
            ]))
            .as_deref(),
            Some("Rust")
        );
        // What clang-19 + wit-bindgen c 0.63 + the preview1 adapter write.
        assert_eq!(
            guess_language(&p(&[
                "language: C99 ",
                "processed-by: Debian clang 14.0.6",
                "processed-by: wit-bindgen-c 0.63.0",
                "language: Rust ",
                "processed-by: rustc 1.97.0 (2d8144b78 2026-07-07)",
                "processed-by: wit-component 0.263.0"
            ]))
            .as_deref(),
            Some("C")
        );
        assert_eq!(
            guess_language(&p(&["language: Rust ", "processed-by: rustc 1.95"])).as_deref(),
            Some("Rust")
        );
        assert_eq!(
            guess_language(&p(&["processed-by: wit-component 0.2"])),
            None
        );
    }
}
