//! The page of one run: steps, markers, folds, subagents, tokens, images, and hostile text.

use atif_view::{Error, ViewOptions, image_paths, render_run};
use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::normalized;

/// A run with every kind of step: system, user, an agent step with reasoning, a tool call
/// with a long result and an error, a subagent, an image, and a crashed end.
fn rich_run() -> Value {
    json!({
        "schema_version": "ATIF-v1.8",
        "agent": {"name": "demo-agent", "version": "1", "model_name": "model-a"},
        "steps": [
            {"step_id": 1, "source": "system", "message": "You are terse."},
            {"step_id": 2, "source": "user", "message": [
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image", "source": {"media_type": "image/png", "path": "images/shot.png"}}
            ]},
            {"step_id": 3, "source": "agent", "model_name": "model-b", "message": "Let me look.",
             "reasoning_content": "The user wants a description.",
             "tool_calls": [{"tool_call_id": "c1", "function_name": "grep", "arguments": {"pattern": "needle"}}],
             "observation": {"results": [{"source_call_id": "c1", "content": "x".repeat(5000), "extra": {"is_error": true}}]},
             "metrics": {"prompt_tokens": 1000, "completion_tokens": 50, "cached_tokens": 400}},
            {"step_id": 4, "source": "agent", "message": "Delegating.",
             "tool_calls": [{"tool_call_id": "c2", "function_name": "task", "arguments": {}}],
             "observation": {"results": [{"source_call_id": "c2", "content": "done",
                "subagent_trajectory_ref": [{"trajectory_id": "sub-1"}]}]},
             "metrics": {"prompt_tokens": 2000, "completion_tokens": 10}},
            {"step_id": 5, "source": "agent", "message": "Half a sent"}
        ],
        "subagent_trajectories": [{
            "schema_version": "ATIF-v1.8", "trajectory_id": "sub-1",
            "agent": {"name": "web-helper", "version": "1", "model_name": "model-s"},
            "steps": [{"step_id": 1, "source": "agent", "message": "searching",
                       "tool_calls": [{"tool_call_id": "s1", "function_name": "grep", "arguments": {}}]}]
        }],
        "extra": {"crashed": true}
    })
}

fn page(run: &Value) -> String {
    render_run(&normalized(run), &ViewOptions::new()).unwrap()
}

/// The `<li>` tags of the page's steps.
fn step_tags(page: &str) -> Vec<&str> {
    page.match_indices("<li class=\"step")
        .map(|(at, _)| &page[at..at + page[at..].find('>').unwrap()])
        .collect()
}

#[test]
fn every_step_is_on_the_timeline_coloured_by_source_with_subagent_steps_nested() {
    let page = page(&rich_run());
    let tags = step_tags(&page);
    assert_eq!(tags.len(), 6, "{tags:#?}");
    for (n, source) in [(1, "system"), (2, "user"), (3, "agent"), (5, "agent")] {
        let tag = tags.iter().find(|tag| tag.contains(&format!("id=\"s-{n}\""))).unwrap();
        assert!(tag.contains(&format!("src-{source}")), "{tag}");
    }
    // The subagent's step sits inside the step that delegated to it, in a fold that is open.
    let delegating = page.find("id=\"s-4\"").unwrap();
    let sub = page
        .find("<details class=\"subagent\" open><summary>subagent <b>web-helper</b> · 1 steps")
        .unwrap();
    let next = page.find("id=\"s-5\"").unwrap();
    assert!(delegating < sub && sub < next);
    assert!(page[sub..next].contains("id=\"s-a1-1\""), "{}", &page[sub..next]);
}

#[test]
fn models_errors_and_the_crashed_end_are_marked() {
    let page = page(&rich_run());
    assert!(page.contains("<span class=\"model\">model-b</span>"));
    assert!(page.contains("<span class=\"model\">model-s</span>"));
    let tags = step_tags(&page);
    assert!(tags.iter().find(|t| t.contains("id=\"s-3\"")).unwrap().contains(" error"));
    assert!(!tags.iter().find(|t| t.contains("id=\"s-4\"")).unwrap().contains(" error"));
    let last = tags.iter().find(|t| t.contains("id=\"s-5\"")).unwrap();
    assert!(last.contains(" cut"), "{last}");
    assert!(page.contains("crashed: the run ends here"));
    assert!(page.contains("next error (1)"));
}

#[test]
fn reasoning_and_long_content_are_folded_with_their_size_and_short_text_is_not() {
    let page = page(&rich_run());
    assert!(
        page.contains("<details class=\"fold reasoning\"><summary>reasoning · 29 bytes</summary>")
    );
    assert!(page.contains("<details class=\"fold result\"><summary>result · 5000 bytes</summary>"));
    assert!(page.contains("<pre class=\"text message\">Let me look.</pre>"));
    // Tool calls carry their arguments, as JSON.
    assert!(page.contains("<span class=\"fn\">grep</span>"));
    assert!(page.contains("&quot;pattern&quot;: &quot;needle&quot;"));
}

#[test]
fn the_shape_token_bars_and_totals_are_shown() {
    let run = normalized(&rich_run());
    let page = render_run(&run, &ViewOptions::new()).unwrap();
    let shape = atif_normalize::shape(&run);
    assert!(
        page.contains(&format!("<th>content_hash</th><td>&quot;{}&quot;</td>", shape.content_hash))
    );
    assert!(page.contains("<th>step_count</th><td>5</td>"));
    // Every bar has one scale: the largest single count of a step (2000 prompt tokens).
    assert!(page.contains("viewBox=\"0 0 2000 6\""), "one scale for every bar");
    assert!(page.contains("<rect class=\"tp\" width=\"1000\" height=\"2\"/>"));
    assert!(page.contains("1000 in · 50 out · 400 cached"));
    assert!(page.contains("<tr><th>sum of steps</th><td>3000</td><td>60</td><td>400</td></tr>"));
}

#[test]
fn a_message_holding_markup_shows_as_text() {
    let hostile = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\"> \
                   <a href=\"javascript:alert(1)\">click</a> </pre></details></li></ol>";
    let run = json!({
        "schema_version": "ATIF-v1.8",
        "agent": {"name": "<b>agent</b>", "version": "1", "model_name": "\"><script>x</script>"},
        "steps": [
            {"step_id": 1, "source": "user", "message": hostile},
            {"step_id": 2, "source": "agent", "message": [{"type": "text", "text": hostile}],
             "reasoning_content": hostile,
             "tool_calls": [{"tool_call_id": "c", "function_name": "<svg onload=alert(1)>", "arguments": {"q": hostile}}],
             "observation": {"results": [{"source_call_id": "c", "content": hostile}]}}
        ]
    });
    let page = page(&run);
    // Our one script and nothing else; no element or attribute from the content.
    assert_eq!(page.matches("<script").count(), 1, "{page}");
    assert!(!page.contains("<img"), "{page}");
    assert!(!page.contains("<svg onload"), "{page}");
    assert!(!page.contains("<a href=\"javascript"), "{page}");
    assert!(!page.contains("<b>agent</b>"));
    assert!(page.contains("&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;"));
    assert!(page.contains("&lt;img src=x onerror=&quot;document.title=&#39;pwned&#39;&quot;&gt;"));
    assert!(page.contains("&lt;a href=&quot;javascript:alert(1)&quot;&gt;click&lt;/a&gt;"));
    // The closing tags in the content did not close the page's elements early.
    assert_eq!(page.matches("</ol>").count(), 1);
}

#[test]
fn the_policy_allows_only_the_pages_own_style_and_script_and_fetches_nothing() {
    let page = page(&rich_run());
    let between = |open: &str, close: &str| {
        let start = page.find(open).unwrap() + open.len();
        page[start..start + page[start..].find(close).unwrap()].to_owned()
    };
    let hash = |text: &str| {
        format!(
            "'sha256-{}'",
            base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text))
        )
    };
    let policy = between("<meta http-equiv=\"Content-Security-Policy\" content=\"", "\"");
    assert_eq!(
        policy,
        format!(
            "default-src 'none'; script-src {}; style-src {}; img-src data:; base-uri 'none'; form-action 'none'",
            hash(&between("<script>", "</script>")),
            hash(&between("<style>", "</style>")),
        )
    );
    // Nothing refers to another resource: no URL of any scheme but `data:`, no inline handler.
    for needle in ["http:", "https:", "//", "src=\"h", " on", "style=\""] {
        let outside_script = page.replace(&between("<script>", "</script>"), "");
        let hits: Vec<_> = outside_script
            .match_indices(needle)
            .map(|(at, _)| &outside_script[at..at + 40])
            .collect();
        assert!(
            needle == " on" && hits.iter().all(|hit| !hit.contains('=')) || hits.is_empty(),
            "{needle}: {hits:?}"
        );
    }
}

#[test]
fn images_given_by_the_caller_are_embedded_as_data_uris_and_others_are_named() {
    let run = normalized(&rich_run());
    assert_eq!(image_paths(&run), ["images/shot.png"]);
    let without = render_run(&run, &ViewOptions::new()).unwrap();
    assert!(without.contains("image images/shot.png (not beside the trajectory)"));
    let mut options = ViewOptions::new();
    options.add_image("images/shot.png", "image/png", vec![0x89, b'P', b'N', b'G']).unwrap();
    let with = render_run(&run, &options).unwrap();
    assert!(with.contains("<img alt=\"\" src=\"data:image/png;base64,iVBORw==\">"), "{with}");
    let err = options.add_image("x.svg", "image/svg+xml", b"<svg/>".to_vec()).unwrap_err();
    assert!(matches!(err, Error::MediaType { .. }), "{err}");
    assert!(err.to_string().contains("image/svg+xml"), "{err}");
}

#[test]
fn a_document_without_steps_is_refused_with_its_pointer() {
    let err = render_run(&json!({"agent": {}}), &ViewOptions::new()).unwrap_err();
    assert_eq!(err.to_string(), "not a trajectory at /steps: expected an array");
    let err = render_run(&json!([1]), &ViewOptions::new()).unwrap_err();
    assert_eq!(err.to_string(), "not a trajectory at : expected an object");
}

#[test]
fn a_page_of_a_1500_step_run_is_at_most_three_times_the_trajectory() {
    // Steps like a coding agent's: a message, reasoning, a call with arguments, a result of a
    // kilobyte, token counts.
    let steps: Vec<Value> = (1..=1500)
        .map(|i| {
            json!({"step_id": i, "source": "agent", "model_name": "model-a",
                   "message": format!("step {i}: reading the module that failed <again> & again"),
                   "reasoning_content": "the test fails because the import is wrong; ".repeat(4),
                   "tool_calls": [{"tool_call_id": format!("c{i}"), "function_name": "read_file",
                                   "arguments": {"path": format!("src/module_{i}.py")}}],
                   "observation": {"results": [{"source_call_id": format!("c{i}"),
                                                "content": "def f(x):\n    return x < 1\n".repeat(36)}]},
                   "metrics": {"prompt_tokens": 1000 + i, "completion_tokens": 50, "cached_tokens": 400}})
        })
        .collect();
    let run = json!({"schema_version": "ATIF-v1.8", "agent": {"name": "long", "version": "1"}, "steps": steps});
    let trajectory = serde_json::to_string(&run).unwrap();
    let page = page(&run);
    assert_eq!(step_tags(&page).len(), 1500);
    assert!(
        page.len() <= 3 * trajectory.len(),
        "{} bytes of page for {} bytes of trajectory",
        page.len(),
        trajectory.len()
    );
}
