//! The in-process half of a C build: bindings from the WIT (wit-bindgen-c)
//! and the core module made a component (wit-component, with the WASI
//! preview1 reactor adapter of the wasmtime release the host links). So a
//! C handler needs only clang and wasi-libc.

use std::path::Path;

use wasi_preview1_component_adapter_provider::{
    WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME, WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
};

use super::ToolchainError;

/// Writes `WORLD.h`, `WORLD.c` and `WORLD_component_type.o` for `world` of
/// the WIT package in `wit` into `out`.
pub fn bindings(wit: &Path, world: &str, out: &Path) -> Result<(), ToolchainError> {
    let fail = |e: anyhow::Error| ToolchainError::InProcess {
        step: "C bindings",
        message: format!("{} (world `{world}`): {e:#}", wit.display()),
    };
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) = resolve.push_path(wit).map_err(fail)?;
    let world = resolve
        .select_world(&[package], Some(world))
        .map_err(fail)?;
    let mut files = wit_bindgen_core::Files::default();
    wit_bindgen_c::Opts::default()
        .build()
        .generate(&mut resolve, world, &mut files)
        .map_err(fail)?;
    for (name, bytes) in files.iter() {
        super::build::write(&out.join(name), bytes)?;
    }
    Ok(())
}

/// A wasm32-wasip1 reactor module as a WASI 0.2 component.
pub fn componentize(module: &[u8]) -> Result<Vec<u8>, ToolchainError> {
    let fail = |e: anyhow::Error| ToolchainError::InProcess {
        step: "componentizing the C module",
        message: format!("{e:#}"),
    };
    wit_component::ComponentEncoder::default()
        .validate(true)
        .module(module)
        .map_err(fail)?
        .adapter(
            WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME,
            WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
        )
        .map_err(fail)?
        .encode()
        .map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bindings_are_generated_for_the_handler_world() {
        let d = tempfile::tempdir().expect("tempdir");
        let wit = d.path().join("wit");
        std::fs::create_dir_all(&wit).expect("mkdir");
        std::fs::write(wit.join("skill.wit"), crate::toolchain::scaffold::SKILL_WIT)
            .expect("write");
        let out = d.path().join("out");
        bindings(&wit, "handler", &out).expect("bindings");
        let header = std::fs::read_to_string(out.join("handler.h")).expect("handler.h");
        assert!(header.contains("exports_handler_handle"), "{header}");
        assert!(out.join("handler_component_type.o").is_file());
        let e = bindings(&wit, "no-such-world", &out).expect_err("unknown world");
        assert!(e.to_string().contains("no-such-world"), "{e}");
    }

    #[test]
    fn a_module_that_is_not_wasm_is_a_clear_error() {
        let e = componentize(b"not wasm").expect_err("garbage");
        assert!(
            e.to_string().starts_with("componentizing the C module: "),
            "{e}"
        );
    }
}
