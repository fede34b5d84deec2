//! The smallest useful handler: answers with the task description. Used to
//! measure what skillhost adds on top of a bare wasmtime call.

use skillhost_guest::{HandlerResult, Output, Task};

fn echo(task: Task) -> HandlerResult {
    Ok(Output::text(task.description))
}

skillhost_guest::export_handler!(echo);
