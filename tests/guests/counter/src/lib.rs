//! A handler that imports the made-up `counter` capability's interface
//! (`tests/capability_counter.rs`): it increments as many times as its
//! task says and answers with the last count, or with the refusal.

wit_bindgen::generate!({
    inline: r#"
        package test:counter-guest;

        world counter-guest {
            include skillhost:skill/handler@0.1.0;
            import skillhost:counter/counter;
        }
    "#,
    path: ["../../../wit", "wit"],
    generate_all,
});

use skillhost::counter::counter::increment;

struct Counter;

impl Guest for Counter {
    fn handle(task: Task) -> Result<Output, Failure> {
        let times: u32 = task.description.trim().parse().unwrap_or(1);
        let mut last = 0;
        for _ in 0..times {
            last = increment().map_err(|message| Failure {
                class: "CounterRefused".into(),
                message,
            })?;
        }
        Ok(Output {
            body: format!("count {last}"),
            content_type: "text/plain".into(),
            flags: Vec::new(),
        })
    }
}

export!(Counter);
