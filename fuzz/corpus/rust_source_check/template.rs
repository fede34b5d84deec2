//! The `{{name}}` skill handler.

use skillhost_guest::{Failure, HandlerResult, Output, Task};

fn handle(task: Task) -> HandlerResult {
    let request = task.description.trim();
    if request.is_empty() {
        return Err(Failure::new("InvalidInput", "the task is empty: say what to do"));
    }
    let name = match task.str("name").trim() {
        "" => "world",
        n => n,
    };
    Ok(Output::text(format!("Hello, {name}! You asked: {request}")))
}

skillhost_guest::export_handler!(handle);
