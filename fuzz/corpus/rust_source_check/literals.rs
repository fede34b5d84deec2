//! Every kind of literal and comment, none hiding code.
/* a /* nested */ block */
/** a doc block */
#[derive(Debug, Clone)]
struct S<'a> { s: &'a str }

/// A doc line with "quotes" and 'a
fn f<'a>(s: &'a str) -> (char, char, char, u8, &'static [u8], &'static str, &'static str) {
    let _ = s;
    ('\'', '\\', '"', b'\'', br#"raw "bytes""#, r##"raw "# string"##, "esc \" \\ \u{27}")
}

fn g() -> &'static core::ffi::CStr {
    c"c \" string"
}

fn h(a: u8, b: u8) -> bool {
    'outer: loop {
        break 'outer a != b && !(a == b);
    }
}

use skillhost_guest::{HandlerResult, Output, Task};

fn handle(task: Task) -> HandlerResult {
    Ok(Output::text(format!("{:?}{}", f(&task.description), h(1, 2))))
}

skillhost_guest::export_handler!(handle);
