//! The smallest useful handler: answers with the task description. Used to
//! measure what skillhost adds on top of a bare wasmtime call.
//!
//! A few descriptions starting with `@` make it misbehave in one way each,
//! for the validation gate's tests, while it imports nothing beyond pure
//! computation: `@clock` answers with the time, `@random` with a random
//! number, `@spin` never answers, `@grow` allocates until it is refused.

use std::hint::black_box;

use skillhost_guest::{HandlerResult, Output, Task};

fn echo(task: Task) -> HandlerResult {
    if !task.description.starts_with('@') {
        return Ok(Output::text(task.description));
    }
    match task.description.as_str() {
        "@clock" => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            Ok(Output::text(format!("it is {} ns", now.as_nanos())))
        }
        "@random" => {
            use std::hash::{BuildHasher, Hasher};
            // Keyed from the host's random numbers.
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u8(1);
            Ok(Output::text(format!("drew {}", h.finish())))
        }
        "@spin" => {
            let mut n: u64 = 0;
            loop {
                n = black_box(n.wrapping_add(1));
            }
        }
        "@grow" => {
            // 1 MiB at a time, each page touched, up to 4 GiB.
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            for _ in 0..4096 {
                hoard.push(vec![7u8; 1 << 20]);
            }
            Ok(Output::text(format!("grew {} MiB", black_box(hoard.len()))))
        }
        _ => Ok(Output::text(task.description)),
    }
}

skillhost_guest::export_handler!(echo);
