//! The body of `rust_source_check` (as in fuzz/harness.rs) over the
//! forge's source check, built from the check's own files.

#[path = "../../host/src/forge"]
pub mod forge {
    pub mod handler {
        /// As in skillhost.
        pub const MAX_SOURCE_BYTES: usize = 256 << 10;

        /// skillhost's `SourceError`, as far as the check makes one.
        #[derive(Debug)]
        pub enum SourceError {
            Refused { line: usize, what: String },
        }

        pub mod check {
            mod allow;
            mod rust;
            mod rustc_view;
            mod tokens;

            /// See `rust_source_check` in fuzz/harness.rs.
            pub fn rust_source_check(data: &[u8]) {
                let Ok(source) = std::str::from_utf8(data) else {
                    return;
                };
                if source.len() > super::MAX_SOURCE_BYTES || rust::check_rust(source).is_err() {
                    return;
                }
                let saw = tokens::code_tokens(source)
                    .unwrap_or_else(|e| panic!("accepted untokenized: {e:?}"));
                if let Some((at, how)) =
                    rustc_view::first_difference(source, &tokens::lexemes(&saw))
                {
                    panic!("accepted, but at byte {at} {how}\nsource: {source:?}");
                }
                let calls = rustc_view::read_calls(source);
                assert!(
                    calls.is_empty(),
                    "accepted, and rustc sees {calls:?}\nsource: {source:?}"
                );
            }
        }
    }
}
