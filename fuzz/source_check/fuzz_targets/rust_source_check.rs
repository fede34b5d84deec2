#![no_main]

// The body of fuzz/harness.rs's rust_source_check, over the check's files.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    skillhost_fuzz_source_check::forge::handler::check::rust_source_check(data)
});
