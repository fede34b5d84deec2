//! What a component is, without running it: its imports and exports, its
//! size, the language that built it (from the `producers` sections) and
//! whether it fits the handler world. Parsing only; no compilation, so it is
//! fast even for 20 MB interpreter-based components.

use std::collections::BTreeMap;

use serde::Serialize;
use wasmparser::component_types::ComponentEntityType;
use wasmparser::types::TypesRef;
use wasmparser::{
    ComponentExportSectionReader, ComponentExternalKind, ComponentImportSectionReader,
    ComponentTypeRef, FuncToValidate, FuncValidatorAllocations, FunctionBody, KnownCustom, Parser,
    Payload, ProducersSectionReader, ValidPayload, Validator, ValidatorResources, WasmFeatures,
};

/// Imports a handler may have: our host interface and WASI.
/// Interfaces the sandbox links itself; a capability's own interfaces are
/// found in the capability registry (`grants::is_host_interface`).
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

/// What is checked of each function body's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bodies {
    /// Validated here: what `skillhost handler inspect` reports.
    Validate,
    /// Left to the compiler, which validates every body before it generates
    /// code, so validating them here too is the same work twice: the
    /// sandbox's precheck and the gate's artifact check, which a compile
    /// always follows (one served from the compiled-code cache was
    /// validated when it was compiled, the cache being keyed by the bytes'
    /// hash). Everything else (sections, types, imports, exports) is
    /// validated as with [`Bodies::Validate`].
    LeaveToCompiler,
}

/// [`inspect_with`], every function body validated.
pub fn inspect(bytes: &[u8]) -> Result<Inspection, InspectError> {
    inspect_with(bytes, Bodies::Validate)
}

/// Validates `bytes` as a component (its function bodies as `bodies` says)
/// and reads what it is, in one pass.
pub fn inspect_with(bytes: &[u8], bodies: Bodies) -> Result<Inspection, InspectError> {
    check_header(bytes)?;
    let mut validator = Validator::new_with_features(WasmFeatures::all());
    let mut found = Contents::default();
    let mut functions = Vec::new();
    // Nesting: 1 is the outer component, whose imports and exports count.
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(bytes) {
        let payload = payload.map_err(InspectError::Invalid)?;
        match validator.payload(&payload).map_err(InspectError::Invalid)? {
            ValidPayload::Func(func, body) if bodies == Bodies::Validate => {
                functions.push((func, body))
            }
            _ => {}
        }
        match payload {
            Payload::Version { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(reader) if depth == 1 => {
                // The section is validated: its types are the outer
                // component's, as they are now.
                if let Some(types) = validator.types(0) {
                    found.read_imports(reader, types)?;
                }
            }
            Payload::ComponentExportSection(reader) if depth == 1 => found.read_exports(reader)?,
            Payload::CodeSectionEntry(body) => {
                found.largest_function = found.largest_function.max(body.range().len());
            }
            Payload::CustomSection(reader) => {
                if let KnownCustom::Producers(p) = reader.as_known() {
                    found.read_producers(p);
                }
            }
            _ => {}
        }
    }
    validate_bodies(functions)?;
    let problems = found.problems();
    Ok(Inspection {
        size: bytes.len(),
        language: guess_language(&found.producers),
        imports: found.imports,
        import_functions: found.import_functions,
        exports: found.exports,
        producers: found.producers,
        problems,
        largest_function: found.largest_function,
    })
}

fn validate_bodies(
    functions: Vec<(FuncToValidate<ValidatorResources>, FunctionBody<'_>)>,
) -> Result<(), InspectError> {
    let mut allocations = FuncValidatorAllocations::default();
    for (func, body) in functions {
        let mut validator = func.into_validator(allocations);
        validator.validate(&body).map_err(InspectError::Invalid)?;
        allocations = validator.into_allocations();
    }
    Ok(())
}

/// Refuses what is not a component: no wasm header, or a core module.
fn check_header(bytes: &[u8]) -> Result<(), InspectError> {
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
    Ok(())
}

/// What the sections of a component hold, gathered as they are parsed.
#[derive(Default)]
struct Contents {
    imports: Vec<String>,
    import_functions: BTreeMap<String, Vec<String>>,
    exports: Vec<String>,
    handle_is_func: bool,
    producers: Vec<String>,
    largest_function: usize,
}

impl Contents {
    /// The outer component's imports, and the functions of each imported
    /// instance.
    fn read_imports(
        &mut self,
        reader: ComponentImportSectionReader<'_>,
        types: TypesRef<'_>,
    ) -> Result<(), InspectError> {
        for import in reader {
            let import = import.map_err(InspectError::Invalid)?;
            if let ComponentTypeRef::Instance(_) = import.ty
                && let Some(item) = types.component_item_for_import(import.name.name)
                && let ComponentEntityType::Instance(id) = item.ty
            {
                let functions = types[id]
                    .exports
                    .iter()
                    .filter(|(_, e)| matches!(e.ty, ComponentEntityType::Func(_)))
                    .map(|(name, _)| name.clone())
                    .collect();
                self.import_functions
                    .insert(import.name.name.to_owned(), functions);
            }
            let kind = match import.ty {
                ComponentTypeRef::Instance(_) => "instance",
                ComponentTypeRef::Func(_) => "func",
                ComponentTypeRef::Type(_) => "type",
                ComponentTypeRef::Module(_) => "module",
                ComponentTypeRef::Component(_) => "component",
                ComponentTypeRef::Value(_) => "value",
            };
            self.imports.push(format!("{} ({kind})", import.name.name));
        }
        Ok(())
    }

    /// The outer component's exports; whether `handle` is a function.
    fn read_exports(
        &mut self,
        reader: ComponentExportSectionReader<'_>,
    ) -> Result<(), InspectError> {
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
                self.handle_is_func = true;
            }
            self.exports.push(format!("{} ({kind})", export.name.name));
        }
        Ok(())
    }

    /// Each `producers` entry once, unreadable ones skipped.
    fn read_producers(&mut self, producers: ProducersSectionReader<'_>) {
        for field in producers.into_iter().flatten() {
            for value in field.values.into_iter().flatten() {
                let entry = format!("{}: {} {}", field.name, value.name, value.version);
                if !self.producers.contains(&entry) {
                    self.producers.push(entry);
                }
            }
        }
    }

    /// What stops the component from running as a handler.
    fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if !self.handle_is_func {
            problems.push(
                "it does not export the function `handle` of the skillhost:skill handler world"
                    .to_owned(),
            );
        }
        // Type imports (`task`, `output`, ...) only name types of the instances
        // above; the instances are what must be provided.
        for import in self.imports.iter().filter(|i| !i.ends_with("(type)")) {
            let name = import.split(' ').next().unwrap_or(import);
            let provided = ALLOWED_IMPORT_PREFIXES.iter().any(|p| name.starts_with(p))
                || crate::grants::is_host_interface(name);
            if !provided {
                problems.push(format!(
                    "it imports `{name}`, which skillhost does not provide"
                ));
            }
        }
        problems
    }
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
