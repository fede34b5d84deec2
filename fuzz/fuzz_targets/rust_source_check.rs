#![no_main]

// The body is shared with the stable replay test (tests/fuzz_replay.rs).
libfuzzer_sys::fuzz_target!(|data: &[u8]| skillhost_fuzz::rust_source_check(data));
