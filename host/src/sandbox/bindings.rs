//! Host-side bindings of the `skillhost:skill` WIT package (`wit/`).

wasmtime::component::bindgen!({
    world: "handler",
    path: "../wit",
    imports: { default: async },
    exports: { default: async },
});
