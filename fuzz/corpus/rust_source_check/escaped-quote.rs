use skillhost_guest::{HandlerResult, Output, Task};

fn handle(task: Task) -> HandlerResult {
    let _ = ('\'','"',compile_error!(include_str!("PATH")));
    Ok(Output::text(task.description.to_uppercase()))
}

skillhost_guest::export_handler!(handle);
